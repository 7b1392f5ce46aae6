"""Batch throughput: the kit's `grade` against `otter run` one by one, measured here.

    python bench/throughput.py [-n 100] [--otter-sample 20] [--jobs N] [--assignment NAME ...]

For each assignment chosen (`--assignment`, repeatable; default: every one grading.yml
lists), grades N of its submissions, as a course's batch is (drawn
round-robin from examples/submissions/NAME, copied under distinct names) with `python -m autograder grade`, and a sample
of them with `otter run` one at a time (each against otter's own autograder
zip for its assignment, the submission named as otter expects). Prints
submissions per minute for each, their ratio, p50 and p95 seconds per
submission (the kit's from each results.json's execution_time, i.e. the
judge's time for one submission inside the batch), and the peak memory of one
grading's whole process tree (`bench/grade_one.py` measures that the same way).
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import chosen  # noqa: E402
from grade_one import measure  # noqa: E402


def pct(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=100)
    ap.add_argument("--otter-sample", type=int, default=20)
    ap.add_argument("--jobs", type=int, default=None)
    chosen.add_argument(ap)  # a batch is one assignment's submissions: one batch each
    args = ap.parse_args()
    for assignment in chosen.assignments(args, "throughput"):
        print(f"\n{assignment}")
        batch(assignment, args)


def batch(assignment, args):
    """Grade one assignment's batch, and otter's sample of it; print the figures."""
    from autograder.audit import examples as examples_mod
    from autograder.build import assign, sync

    pool = sorted((examples_mod.EXAMPLES / assignment).glob("*.ipynb"))
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="kit-throughput-") as tmp:
        tmp = Path(tmp)
        subs = []
        for i in range(args.n):
            src = pool[i % len(pool)]
            dst = tmp / "subs" / f"s{i:04d}" / src.parent.name / src.name
            dst.parent.mkdir(parents=True)
            shutil.copy(src, dst)
            subs.append(dst)
        cmd = [
            py,
            "-m",
            "autograder",
            "grade",
            tmp / "subs",
            "--out",
            tmp / "out",
            "--no-progress",
            "--assignment",
            assignment,
        ]
        if args.jobs:
            cmd += ["--jobs", str(args.jobs)]
        kit_s, kit_peak, rc, _ = measure(cmd)
        if rc:
            raise SystemExit(f"kit grade exited {rc}")
        per = [json.loads(p.read_text())["execution_time"] for p in (tmp / "out").glob("*/results.json")]

        otter = shutil.which("otter", path=str(Path(py).parent))
        otter_times, otter_peak = [], 0
        if otter and args.otter_sample:
            zips = {}
            for a in sorted({s.parent.name for s in subs}):
                zips[a] = assign.run_otter_assign(sync.master_path(a), tmp / "assign" / a).autograder_zip
            for k, s in enumerate(subs[: args.otter_sample]):
                a = s.parent.name
                run_dir = tmp / "otter" / str(k)
                (run_dir / "out").mkdir(parents=True)
                named = run_dir / f"{a}.ipynb"
                shutil.copy(s, named)
                t, m, _, _ = measure([otter, "run", "-a", zips[a], "-o", run_dir / "out", named])
                otter_times.append(t)
                otter_peak = max(otter_peak, m)

    kit_rate = args.n / kit_s * 60
    print(f"{'':28}{'subs/min':>10}{'p50 s':>8}{'p95 s':>8}{'peak MB':>10}")
    print(
        f"{'kit grade (' + str(args.n) + ' submissions)':28}{kit_rate:10.1f}{pct(per, 0.5):8.2f}{pct(per, 0.95):8.2f}"
        f"{kit_peak:10.0f}"
    )
    if otter_times:
        otter_rate = len(otter_times) / sum(otter_times) * 60
        print(
            f"{'otter run (' + str(len(otter_times)) + ', one by one)':28}{otter_rate:10.1f}"
            f"{pct(otter_times, 0.5):8.2f}{pct(otter_times, 0.95):8.2f}{otter_peak:10.0f}"
        )
        print(f"ratio kit/otter: {kit_rate / otter_rate:.1f}x")
    print(
        f"kit wall time {kit_s:.1f} s on {os.cpu_count()} CPUs; kit peak = the whole batch's process tree "
        "(pool of judges, fork servers, workers); otter peak = one `otter run`"
    )


if __name__ == "__main__":
    main()
