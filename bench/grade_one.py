"""Seconds and peak memory to grade one submission with the kit, the
assignment's examples folder, and `otter run` on the same submission, measured here.

    python bench/grade_one.py [--assignment NAME ...] [--repeat 3] [--box 0.5 768]

For each assignment chosen (`--assignment`, repeatable; default: every one grading.yml lists).

Each command runs as a child process; its peak memory is the largest sum of
the proportional set sizes (Pss: shared pages counted once) of its whole
process tree (judge, fork server, worker, kernels), sampled from /proc every
50 ms. Prints a table of medians. Figures, not a
pass/fail: docs/pages/measurements.md quotes them with this command.

`--box CPUS MB` also grades the one submission inside a control group
limited to CPUS processors (cfs quota) and MB of memory (Gradescope's default
container is 0.5 vCPU, 768 MB), and reports its time, the group's own peak
memory (memory.max_usage_in_bytes: the whole tree, shared pages counted once)
and whether the kernel killed anything for memory. Needs root and a writable
cgroup v1 `cpu` and `memory` hierarchy (as here).
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import chosen

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _proc_kb(path, key):
    """The kB figure on the line starting with `key` in a /proc file, or None."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _process_kb(pid):
    """A process's proportional set size (Pss: pages shared with others, such
    as a fork server's with its workers, counted once across them), or its
    VmRSS where smaps_rollup is not readable."""
    for path, key in ((f"/proc/{pid}/smaps_rollup", "Pss:"), (f"/proc/{pid}/status", "VmRSS:")):
        kb = _proc_kb(path, key)
        if kb is not None:
            return kb
    return 0


def tree_rss_kb(pid):
    """Memory of pid and all its descendants: the sum of their Pss."""
    children = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(d))
        except (OSError, ValueError, IndexError):
            pass
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        todo += children.get(p, [])
        total += _process_kb(p)
    return total


def _reap(proc, sample=None):
    """Wait for `proc` with wait4: (exit status, CPU seconds of it and every descendant it
    and they waited for), calling `sample()` every 50 ms meanwhile."""
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode, usage.ru_utime + usage.ru_stime
        if sample is not None:
            sample()
        time.sleep(0.05)


def measure(cmd, cwd=ROOT, env=None):
    """(seconds, peak MB of the process tree, exit status, CPU seconds of the tree)."""
    start = time.monotonic()
    proc = subprocess.Popen(
        cmd, cwd=cwd, env={**os.environ, **(env or {})}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    peak = [0]

    def sample():
        peak[0] = max(peak[0], tree_rss_kb(proc.pid))

    rc, cpu = _reap(proc, sample)
    return time.monotonic() - start, peak[0] / 1024, rc, cpu


class Box:
    """A cgroup v1 group with a CPU quota and a memory limit, for one command."""

    def __init__(self, cpus, memory_mb):
        name = f"kit-bench-{os.getpid()}"
        self.cpu = Path("/sys/fs/cgroup/cpu") / name
        self.mem = Path("/sys/fs/cgroup/memory") / name
        for d in (self.cpu, self.mem):
            d.mkdir()
        period = 100000
        (self.cpu / "cpu.cfs_period_us").write_text(str(period))
        (self.cpu / "cpu.cfs_quota_us").write_text(str(int(cpus * period)))
        (self.mem / "memory.limit_in_bytes").write_text(str(memory_mb << 20))

    def join(self):
        for d in (self.cpu, self.mem):
            (d / "cgroup.procs").write_text(str(os.getpid()))

    def peak_mb(self):
        return int((self.mem / "memory.max_usage_in_bytes").read_text()) / (1 << 20)

    def oom_kills(self):
        for line in (self.mem / "memory.oom_control").read_text().splitlines():
            if line.startswith("oom_kill "):
                return int(line.split()[1])
        return 0

    def remove(self):
        for d in (self.cpu, self.mem):
            for _ in range(50):
                try:
                    d.rmdir()
                    break
                except OSError:
                    time.sleep(0.05)


def in_box(cmd, cpus, memory_mb):
    """(seconds, peak MB of the box, out-of-memory kills, exit status, CPU seconds)."""
    box = Box(cpus, memory_mb)
    try:
        start = time.monotonic()
        proc = subprocess.Popen(
            cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=box.join
        )
        rc, cpu = _reap(proc)
        return time.monotonic() - start, box.peak_mb(), box.oom_kills(), rc, cpu
    finally:
        box.remove()


def median_of(cmd, repeat, **kw):
    """(median seconds, largest peak MB, median CPU seconds) of `repeat` runs."""
    runs = [measure(cmd, **kw) for _ in range(repeat)]
    bad = [r for r in runs if r[2] != 0]
    if bad:
        raise SystemExit(f"{' '.join(map(str, cmd))} exited {bad[0][2]}")
    return statistics.median(r[0] for r in runs), max(r[1] for r in runs), statistics.median(r[3] for r in runs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    chosen.add_argument(ap)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--box",
        nargs=2,
        type=float,
        metavar=("CPUS", "MB"),
        help="also grade the one submission in a cgroup with this CPU quota and memory limit",
    )
    ap.add_argument("--box-only", action="store_true", help="only the --box row")
    args = ap.parse_args()
    for assignment in chosen.assignments(args, "grade_one"):
        print(f"\n{assignment}")
        bench(assignment, args)


def bench(assignment, args):
    """Measure one assignment and print its table."""
    from autograder.audit import examples as examples_mod
    from autograder.build import assign, sync

    py = sys.executable
    sub = examples_mod.EXAMPLES / assignment / "reference.ipynb"
    rows, figures = [], {}
    with tempfile.TemporaryDirectory(prefix="kit-bench-") as tmp:
        tmp = Path(tmp)
        if args.box:
            cpus, mb = args.box
            import json

            runs = []
            for i in range(max(1, args.repeat)):
                out = tmp / f"box{i}"
                t, m, kills, rc, cpu = in_box(
                    [
                        py,
                        "-m",
                        "autograder",
                        "grade",
                        sub,
                        "--assignment",
                        assignment,
                        "--out",
                        out,
                        "--no-progress",
                    ],
                    cpus,
                    int(mb),
                )
                scores = [json.loads(p.read_text())["score"] for p in out.glob("*/results.json")]
                runs.append((t, m, kills, rc, cpu, scores[0] if scores else "-"))
            t = statistics.median(r[0] for r in runs)
            figures["box"] = t
            rows.append(
                (
                    f"kit grade, 1 submission, in a {cpus:g}-CPU {mb:g} MB box (exit "
                    f"{max(r[3] for r in runs)}, {sum(r[2] for r in runs)} OOM kills, score {runs[0][5]})",
                    t,
                    max(r[1] for r in runs),
                    statistics.median(r[4] for r in runs),
                )
            )
        if args.box_only:
            args.repeat = 0
            _print(rows, args)
            return
        t, m, cpu = median_of(
            [
                py,
                "-m",
                "autograder",
                "grade",
                sub,
                "--assignment",
                assignment,
                "--out",
                tmp / "one",
                "--no-progress",
            ],
            args.repeat,
        )
        rows.append((f"kit grade, 1 submission ({assignment}/reference)", t, m, cpu))
        figures["kit_cpu"] = cpu
        # one grade per assignment's folder (a folder is graded as one assignment: the batch's)
        folder = examples_mod.EXAMPLES / assignment
        n = len(list(folder.rglob("*.ipynb")))
        t, m, cpu = median_of(
            [
                py,
                "-m",
                "autograder",
                "grade",
                folder,
                "--assignment",
                assignment,
                "--out",
                tmp / "all",
                "--no-progress",
            ],
            1,
        )
        rows.append((f"kit grade, the {assignment} examples folder ({n} submissions)", t, m, cpu))
        otter = shutil.which("otter", path=str(Path(py).parent)) or shutil.which("otter")
        if otter:
            built = assign.run_otter_assign(sync.master_path(assignment), tmp / "assign")
            named = tmp / "otter-sub" / f"{assignment}.ipynb"  # otter wants the assignment's file name
            named.parent.mkdir()
            shutil.copy(sub, named)
            (tmp / "otter-out").mkdir()
            t, m, cpu = median_of(
                [otter, "run", "-a", built.autograder_zip, "-o", tmp / "otter-out", named], args.repeat
            )
            rows.append(("otter run, 1 submission (public tests only)", t, m, cpu))
            figures["otter_cpu"] = cpu
    _print(rows, args, figures)


def _print(rows, args, figures=None):
    figures = figures or {}
    width = max(len(r[0]) for r in rows)
    print(f"{'what'.ljust(width)}  {'seconds':>8}  {'CPU s':>8}  {'peak MB':>8}")
    for what, t, m, cpu in rows:
        print(f"{what.ljust(width)}  {t:8.2f}  {cpu:8.2f}  {m:8.0f}")
    print(
        f"(median of {args.repeat} runs for single submissions; CPU s = user + system of the whole process "
        f"tree; peak = whole process tree; {os.cpu_count()} CPUs)"
    )
    if "kit_cpu" in figures and "otter_cpu" in figures:
        print(
            f"one submission, CPU time kit / otter run: {figures['kit_cpu'] / figures['otter_cpu']:.2f} "
            f"(target at most 0.60)"
        )
    if "box" in figures:
        print(f"one submission in the box: {figures['box']:.2f} s (target under 8 s)")


if __name__ == "__main__":
    main()
