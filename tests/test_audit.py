"""The mutation audit: every catalog bug is caught on its questions, every
correct variant keeps full marks (a change that weakens a hidden test fails here)."""
import re

from conftest import run_cli


def test_audit_catches_every_bug_and_passes_every_correct_variant():
    proc = run_cli("audit", "--no-progress", check=False)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-2000:]
    caught = re.search(r"caught on their questions: (\d+)/(\d+)", proc.stdout)
    correct = re.search(r"correct entries at full marks: (\d+)/(\d+)", proc.stdout)
    assert caught and caught.group(1) == caught.group(2) and int(caught.group(2)) >= 50
    assert correct and correct.group(1) == correct.group(2) and int(correct.group(2)) >= 8
    rate = re.search(r"likely-cause rate .*?: (\d+)/(\d+)", proc.stdout)
    assert rate and int(rate.group(1)) >= 0.9 * int(rate.group(2)), "at least 90% of caught bugs get a likely cause"
    real = re.search(r"likely-cause rate on real code .*?: (\d+)/(\d+)", proc.stdout)
    assert real and int(real.group(2)) >= 20 and int(real.group(1)) >= 0.9 * int(real.group(2)), \
        "at least 90% of the caught bugs from real tutorial and library code get a likely cause"
    assert "CHARGED AGAIN" not in proc.stdout, "a bug costs points only on the questions of the functions it defines"
