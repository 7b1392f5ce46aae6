"""`python -m autograder check NOTEBOOK`: the notebook's public tests, with a summary.

What `grader.check_all()` runs, for a student repository's CI: the public
tests otter put in the student notebook (its metadata, or a `tests/` folder
beside it), run in the sandboxed worker against the notebook's own code. It
reads neither `solutions/` nor the hidden suites. Exit status 0 when every
public test passes, 1 otherwise, 2 when the notebook cannot be read.
"""
import sys
from pathlib import Path

from autograder import config as config_mod
from autograder.notebook import SubmissionError, load_submission
from autograder.remote import Remote
from autograder.sandbox import Limits, WorkerDied


def public_tests(nb, path):
    """[{"name": question, "source": test file text}] in notebook order."""
    otter_meta = (nb.get("metadata") or {}).get("otter") or {}
    tests = otter_meta.get("tests") or {}
    found = []
    for name, spec in tests.items():
        source = spec if isinstance(spec, str) else (spec or {}).get("src") or (spec or {}).get("source")
        if isinstance(source, str):
            found.append({"name": name, "source": source})
    folder = Path(path).parent / "tests"
    if not found and folder.is_dir():
        found = [{"name": f.stem, "source": f.read_text()} for f in sorted(folder.glob("*.py"))]
    return found


def run_checks(path, cfg=None):
    """(assignment, [{"name", "cases": [{"name", "ok", "error"?}], "error"?}])."""
    cfg = cfg or config_mod.load()
    sub = load_submission(path, cfg.assignments, keep_provided=True)
    tests = public_tests(sub.notebook, path)
    if not tests:
        raise SubmissionError(f"{Path(path).name} holds no public tests (is it a student notebook built by the kit?)")
    # Provided cells stay as the notebook has them: a self-check, not grading.
    remote = Remote(sub, "", Limits.from_config(cfg.limits))
    try:
        results = remote.public(tests)
    finally:
        remote.close()
    return sub, remote.cell_errors, results


def main(args):
    try:
        sub, cell_errors, results = run_checks(args.notebook)
    except (SubmissionError, WorkerDied) as exc:
        print(f"cannot check {args.notebook}: {getattr(exc, 'reason', exc)}", file=sys.stderr)
        return 2
    failed = 0
    print(f"Public tests of {Path(args.notebook).name}" + (f" ({sub.assignment})" if sub.assignment else ""))
    for r in results:
        cases = r.get("cases", [])
        bad = [c for c in cases if not c.get("ok")]
        if r.get("error"):
            bad.append({"name": "(test file)", "error": r["error"]})
        status = "passed" if cases and not bad else "FAILED"
        failed += status != "passed"
        print(f"  {r['name']:<32} {status} ({len(cases) - len([b for b in bad if b['name'] != '(test file)'])}/{len(cases)})")
        for b in bad:
            e = b.get("error") or {}
            print(f"      {b['name']}: {e.get('type', 'Error')}: {str(e.get('message', ''))[:300]}")
    for line in cell_errors[:5]:
        print(f"  note: {line}")
    print(f"{len(results) - failed} of {len(results)} questions pass their public tests")
    return 1 if failed else 0
