"""A one-submission command (`grade` of one file, `ci`, `gradescope`) runs its judge
and fork server from one clean process (`autograder.zygote`): one torch
import, and nothing of the command reaches a worker's memory."""

import json
import os
import secrets
import subprocess
import sys

from autograder.audit.hostile.cases import ipynb, reference, replace_function
from conftest import ROOT, run_cli, scores

# The student's causal_mask scans every readable and writable mapping of its own
# process (where an environment, argv or a Python heap would be) for the secret,
# and reports in its error message how much it read and whether it found it.
SCAN = """
def causal_mask(seq_len, device=None):
    import ctypes
    # the secret in two halves, the second reversed: this process never holds them side by side
    head, tail_reversed = bytes.fromhex("{head}"), bytes.fromhex("{tail}")
    read, found = 0, False
    with open("/proc/self/maps") as maps:
        for line in maps:
            parts = line.split()
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            if not parts[1].startswith("rw") or (len(parts) > 5 and parts[5] in ("[vvar]", "[vsyscall]")):
                continue
            for start in range(lo, hi, 1 << 24):
                block = ctypes.string_at(start, min(1 << 24, hi - start) + 64 if start + (1 << 24) < hi else hi - start)
                read += len(block)
                at = block.find(head)
                while at >= 0 and not found:
                    found = block[at + len(head):at + len(head) + len(tail_reversed)][::-1] == tail_reversed
                    at = block.find(head, at + 1)
    raise RuntimeError(f"scanned {{read}} bytes found={{found}}")
"""


def test_a_worker_holds_nothing_of_the_command_in_memory(tmp_path):
    canary = "kitcanary" + secrets.token_hex(8)
    nb = reference("scaled_dot_product", demo=False)
    raw = canary.encode()
    replace_function(nb, "causal_mask", SCAN.format(head=raw[:12].hex(), tail=raw[12:][::-1].hex()))
    path = tmp_path / "scan.ipynb"
    path.write_bytes(ipynb(nb)[1])
    out = tmp_path / f"out-{canary}"  # in the command's argv too
    proc = run_cli(
        "grade", path, "--out", out, "--no-progress", "--lang", "en", check=False, env={"KIT_SECRET_CANARY": canary}
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads((out / "scan" / "results.json").read_text())
    text = next(t["output"] for t in data["tests"] if t["name"] == "causal_mask")
    assert "found=False" in text, text
    read = int(text.split("scanned ")[1].split(" bytes")[0])
    assert read > 50 * 2**20, f"the scan read only {read} bytes: it proves nothing"
    # the rest of the notebook is graded as usual
    got = scores(out / "scan" / "results.json")
    assert got["causal_mask"][0] == 0 and got["padding_mask"] == (2.0, 2.0)


def test_one_process_imports_torch_and_the_exit_status_comes_back(tmp_path):
    """The command itself imports no torch; the judge's exit status is the command's."""
    probe = (
        "import sys, runpy\n"
        "sys.argv = ['autograder', 'grade', sys.argv[1], '--out', sys.argv[2], '--no-progress']\n"
        "from autograder import cli\n"
        "code = cli.main()\n"
        "assert 'torch' not in sys.modules, 'the command imported torch'\n"
        "sys.exit(code)\n"
    )
    good = ROOT / "examples" / "submissions" / "scaled_dot_product" / "reference.ipynb"
    ok = subprocess.run(
        [sys.executable, "-c", probe, str(good), str(tmp_path / "a")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert ok.returncode == 0, ok.stderr[-2000:]
    assert scores(tmp_path / "a" / "reference" / "results.json")["scaled_dot_product_attention"] == (6.0, 6.0)
    bad = tmp_path / "not_a_notebook.ipynb"
    bad.write_bytes(b"\x89PNG\r\n")
    failed = subprocess.run(
        [sys.executable, "-c", probe, str(bad), str(tmp_path / "b")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert failed.returncode == 1, (failed.returncode, failed.stderr[-2000:])  # "no submission could be graded"
    assert "could be graded" in failed.stderr


def _start_slow(tmp_path):
    """`grade` of one notebook whose first cell sleeps, as a terminal's job; returns once
    its worker runs (the command, its judge, the fork server and the worker: 4 processes)."""
    import time

    from test_batch import _tree

    nb = reference("scaled_dot_product", demo=False)
    nb["cells"].insert(
        1,
        {
            "cell_type": "code",
            "metadata": {},
            "outputs": [],
            "execution_count": None,
            "source": "import time\ntime.sleep(60)\n",
        },
    )
    path = tmp_path / "slow.ipynb"
    path.write_bytes(ipynb(nb)[1])
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "autograder", "grade", str(path), "--out", str(out), "--no-progress"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    seen, deadline = {}, time.monotonic() + 120
    while len(seen) < 3 or not any(b"time.sleep" in _cmd(p) or _is_worker(p) for p in seen):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"no worker in 120 s: {seen}"
        seen.update(_tree(proc.pid))
        time.sleep(0.1)
    return proc, out, seen


def _cmd(pid):
    try:
        return open(f"/proc/{pid}/cmdline", "rb").read()
    except OSError:
        return b""


def _is_worker(pid):
    """A worker: forked by the fork server, so its command line is the fork server's, under a worker's uid."""
    try:
        return os.stat(f"/proc/{pid}").st_uid != os.getuid()
    except OSError:
        return False


def test_ctrl_c_of_one_submission_stops_at_once_and_leaves_nothing(tmp_path):
    import signal
    import time

    from test_batch import _alive

    proc, out, seen = _start_slow(tmp_path)
    start = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, (proc.returncode, stderr[-2000:])
    assert time.monotonic() - start < 5
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    assert "--resume" in stderr
    deadline = time.monotonic() + 5
    while _alive(seen) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(seen), {p: _cmd(p)[:120] for p in _alive(seen)}


def test_kill_9_of_one_submission_takes_its_judge_fork_server_and_worker(tmp_path):
    import signal
    import time

    from test_batch import _alive

    proc, out, seen = _start_slow(tmp_path)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    deadline = time.monotonic() + 5
    while _alive(seen) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(seen), {p: _cmd(p)[:120] for p in _alive(seen)}
