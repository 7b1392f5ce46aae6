"""The GPU in one command: the hidden suites on CUDA, every example and the audit, one table.

    python3 bench/cuda_matrix.py                  # on a lent GPU machine, from the working tree
    python3 bench/cuda_matrix.py --examples reference --no-audit
    python3 bench/cuda_matrix.py --allow-cpu --assignment NAME --examples reference --no-audit

Runs from the working tree on whatever Python and torch it finds (a GPU machine's Python 3.12
and torch with CUDA): needs torch, pytest and PyYAML, not otter, Jupyter or the network. The
kit is put on sys.path and on PYTHONPATH (for the judge's own processes), nothing installed.
With no CUDA device it says so in one line and exits 3 (`--allow-cpu` runs the same on the CPU,
to try the script out).

Grades every example submission of every assignment (examples/submissions/<assignment>/, the
training lab's included; the English editions, not the template) with the hidden suites, on
every device of grading.yml that is present, so CUDA in float32, float16 and bfloat16 is
collected (its cases are evidence, not scored: docs/pages/scoring.md); then runs
`python -m autograder audit` there. Prints one table: per submission its score, what
examples/submissions/expected.yml says it must score, the questions it lost, how many test
cases passed per device and dtype, and its time; then the audit's summary. Exit status 0 when
every row is as expected (a full-marks example passes every case, CUDA's included) and the
audit passes; 1 otherwise. Stops grading (and says so) past --budget-s, so that it ends within
the ten minutes a lent machine gives.
"""

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import chosen

ROOT = Path(__file__).resolve().parent.parent
NO_CUDA = 3


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--examples",
        default="all",
        help="'all' (every example but the template and other editions) or names, comma-separated (reference,...)",
    )
    chosen.add_argument(ap)
    ap.add_argument("--no-audit", action="store_true", help="skip `python -m autograder audit`")
    ap.add_argument("--allow-cpu", action="store_true", help="run without a CUDA device (to try the script out)")
    ap.add_argument("--budget-s", type=float, default=420.0, help="stop grading examples past this (default 420)")
    return ap.parse_args(argv)


def on_path():
    """The working tree's kit importable here and in every process the judge starts."""
    sys.path.insert(0, str(ROOT))
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)


def device_line(torch):
    if torch.cuda.is_available():
        names = ", ".join(torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count()))
        return f"torch {torch.__version__}, CUDA {torch.version.cuda}: {names}"
    return f"torch {torch.__version__} (CUDA build: {torch.version.cuda or 'none'})"


def chosen_examples(examples_dir, assignments, wanted):
    """[(assignment, example name, path)] in a fixed order."""
    out = []
    for a in assignments:
        folder = examples_dir / a
        if wanted == ["all"]:
            names = sorted(p.stem for p in folder.glob("*.ipynb") if p.stem != "template" and "_pt-BR" not in p.stem)
            names.sort(key=lambda n: n != "reference")  # the reference first
        else:
            names = [n for n in wanted if (folder / f"{n}.ipynb").exists()]
        out += [(a, n, folder / f"{n}.ipynb") for n in names]
    return out


def case_key(case):
    """A test case's device and dtype ('cuda-float16', 'cuda', 'meta'), or 'any' (a case not
    run per device)."""
    return case if case.split("-")[0] in ("cpu", "cuda", "meta") else "any"


def grade_row(result, expect, seconds):
    """(the table's cells, ok) for one graded example."""
    by_case = {}
    for o in result.outcomes:
        ok, total = by_case.get(case_key(o.case), (0, 0))
        by_case[case_key(o.case)] = (ok + bool(o.passed), total + 1)
    lost = sorted(q.name for q in result.questions.values() if q.score < q.max_score)
    cuda_failed = sum(n - k for key, (k, n) in by_case.items() if key.startswith("cuda"))
    if expect is None:
        verdict = "no expectation"
        ok = result.status == "graded"
    elif expect.get("expect") == "full marks":
        ok = result.status == "graded" and not lost and all(o.passed for o in result.outcomes)
        verdict = "full marks" if ok else "EXPECTED FULL MARKS" + (" (cuda cases fail)" if cuda_failed else "")
    else:
        ok = result.status == "graded" and lost == sorted(expect.get("loses") or [])
        verdict = "loses as expected" if ok else f"EXPECTED TO LOSE {','.join(expect.get('loses') or [])}"
    cells = "  ".join(f"{k} {ok_}/{n}" for k, (ok_, n) in sorted(by_case.items()))
    return (
        f"{result.score:6.2f}/{result.max_score:<4g} {seconds:6.1f}s  {verdict:<24} "
        f"lost: {','.join(lost) or '-'}  {cells}"
        + (f"  [{result.status}: {'; '.join(result.internal_errors[:2])}]" if result.status != "graded" else ""),
        ok,
    )


def run_audit(assignments, all_assignments):
    """(the audit's summary lines, exit status, seconds)."""
    argv = [sys.executable, "-m", "autograder", "audit", "--no-progress"]
    if len(assignments) == 1 and len(all_assignments) > 1:  # audit takes one --assignment, or all
        argv += ["--assignment", assignments[0]]
    t0 = time.monotonic()
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, env=os.environ)
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    return lines[-12:], proc.returncode, time.monotonic() - t0


def main(argv=None):
    args = parse(argv)
    on_path()
    started = time.monotonic()
    import torch

    if not torch.cuda.is_available() and not args.allow_cpu:
        print(f"cuda_matrix: no CUDA device ({device_line(torch)}); nothing graded", file=sys.stderr)
        return NO_CUDA

    from autograder import config
    from autograder.audit import examples as examples_mod
    from autograder.judge import grade
    from autograder.judge.failure import full_text

    cfg = config.load()
    try:
        assignments = chosen.assignments(args, "cuda_matrix")
    except SystemExit as exc:
        print(exc, file=sys.stderr)
        return 2
    expected = examples_mod.expected()
    todo = chosen_examples(examples_mod.EXAMPLES, assignments, args.examples.split(","))
    print(device_line(torch), f"| {len(todo)} examples, {os.cpu_count()} CPUs", flush=True)
    bad, skipped = [], []
    width = max((len(f"{a}/{n}") for a, n, _ in todo), default=10)
    for a, name, path in todo:
        if time.monotonic() - started > args.budget_s:
            skipped.append(f"{a}/{name}")
            continue
        t0 = time.monotonic()
        result = grade(path, a, cfg)
        cells, ok = grade_row(result, expected.get(f"{a}/{name}.ipynb"), time.monotonic() - t0)
        print(f"{a + '/' + name:<{width}}  {cells}", flush=True)
        if not ok:
            bad.append(f"{a}/{name}")
            for o in result.outcomes:
                if not o.passed and name == "reference":
                    said = full_text(o.message, o.cause, result.language)
                    print(f"    FAIL {o.question} {o.test}[{o.case}]: {said[:300]}")
    if skipped:
        print(f"past --budget-s {args.budget_s:g}: {len(skipped)} not graded ({', '.join(skipped[:5])}...)")
    audit_rc = 0
    if not args.no_audit:
        lines, audit_rc, seconds = run_audit(assignments, cfg.assignments)
        print(f"audit ({seconds:.0f} s, exit status {audit_rc}):")
        print("\n".join(f"  {line}" for line in lines))
    total = time.monotonic() - started
    verdict = "every example as expected" if not bad else f"NOT as expected: {', '.join(bad)}"
    print(f"total {total:.0f} s; {verdict}" + ("" if args.no_audit else f"; audit exit status {audit_rc}"))
    return 1 if bad or skipped or audit_rc else 0


if __name__ == "__main__":
    sys.exit(main())
