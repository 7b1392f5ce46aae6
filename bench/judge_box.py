"""The judge's peak memory on the worst hostile case of each kind, each graded
alone with `python -m autograder grade` inside a control group of CPUS
processors and MB of memory (Gradescope's default box: 0.5 CPU, 768 MB).

    python bench/judge_box.py [--box 0.5 768] [--case NAME ...]

For each case: the wall time, the box's own peak (the whole tree: judge,
reader, fork server, workers), the judge process's own peak (results.json
`extra_data.judge_peak_mb`), whether the kernel killed anything for memory,
whether results.json was written, and the battery's verdict for the case.
Figures, not a pass/fail: docs/pages/measurements.md quotes them with this command. Needs
root and writable cgroup v1 `cpu` and `memory` hierarchies (as here).
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from grade_one import in_box  # noqa: E402

# The worst case of each kind the judge takes from a submission.
WORST = (
    "million_statements_cell",
    "json_nested_deep",
    "stored_outputs_20mb",
    "zip_corrupt_deflate",
    "huge_exception_text",
    "forged_replies",
    "feedback_injection",
    "mha_hidden_bias",
    "search_disk_for_answers",
    "reference",
)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--box", nargs=2, type=float, default=(0.5, 768), metavar=("CPUS", "MB"))
    ap.add_argument("--case", action="append", help="a battery case (repeatable; default: the worst of each kind)")
    args = ap.parse_args()
    from autograder.audit import hostile

    names = args.case or [n for n in WORST if any(c.name == n for c in hostile.CASES)]
    cpus, mb = args.box
    print(f"each case graded alone in a {cpus:g}-CPU, {mb:g} MB control group")
    print(f"  {'case':<26}{'seconds':>8}{'box MB':>8}{'judge MB':>10}{'OOM':>5}  results  verdict")
    with tempfile.TemporaryDirectory(prefix="kit-judge-box-") as tmp:
        for name in names:
            case = next(c for c in hostile.CASES if c.name == name)
            suffix, data = case.build()
            path = Path(tmp) / name / f"{name}{suffix}"
            path.parent.mkdir()
            path.write_bytes(data)
            out = Path(tmp) / name / "out"
            cmd = [
                sys.executable,
                "-m",
                "autograder",
                "grade",
                str(path),
                "--out",
                str(out),
                "--assignment",
                case.assignment,
                "--no-progress",
            ]
            seconds, peak, kills, _, _ = in_box(cmd, cpus, int(mb))
            found = list(out.glob("*/results.json"))
            results = json.loads(found[0].read_text()) if found else None
            judge = ((results or {}).get("extra_data") or {}).get("judge_peak_mb")
            problems = hostile.check(case, results, {}) if results else ["no results.json"]
            verdict = "held" if not problems else "VIOLATED: " + problems[0]
            print(
                f"  {name:<26}{seconds:>8.1f}{peak:>8.0f}{(judge or 0):>10.0f}{kills:>5}  "
                f"{'written' if results else 'MISSING':<8} {verdict}"
            )


if __name__ == "__main__":
    main()
