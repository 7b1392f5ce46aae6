"""`python -m autograder audit --hostile`: every hostile or broken submission is graded as it must be."""

import pytest

from autograder.audit.hostile.cases import CASES
from conftest import run_cli

pytestmark = pytest.mark.slow  # every test here grades, builds or runs a kernel


def _violated(table):
    """The table's rows of each VIOLATED case (its row and the indented lines under it)."""
    out, keep = [], False
    for line in table.splitlines():
        if line.startswith("  ") and not line.startswith("   "):  # a case's row
            keep = line.rstrip().endswith("VIOLATED")
        if keep:
            out.append(line)
    return "VIOLATED:\n" + "\n".join(out) + "\n\n" if out else ""


def test_hostile_battery_holds():
    proc = run_cli("audit", "--hostile", "--no-progress", check=False, timeout=1500)  # a safety net, not a timed test
    assert proc.returncode == 0, _violated(proc.stdout) + proc.stdout[-4000:] + proc.stderr[-3000:]
    rows = {line.split()[0] for line in proc.stdout.splitlines() if line.startswith("  ") and line.split()}
    missing = [c.name for c in CASES if c.name not in rows]
    assert not missing, f"cases missing from the table: {missing}\n{proc.stdout[-3000:]}"
    assert "violated 0" in proc.stdout
    assert len(CASES) >= 40
