"""`python -m autograder build [--out DIR] [--check]`: notebooks and autograder zips.

For every assignment of grading.yml:

1. sync (`sync.sync`): regenerate the `kit-imports`, `kit-provided` and
   `kit-solution` cells and the question points of the master notebook
   `assignments/<name>/<name>.ipynb` from `solutions/<name>.py` and grading.yml,
   writing the notebook only when it drifted;
2. otter assign the master notebook in a temporary folder (`assign.run_otter_assign`);
3. normalise otter's student notebook (`assign.student_notebook`), check that it
   leaks neither graded reference code nor hidden-suite code
   (`assign.check_no_leaks`), and write it to `student_template/<name>.ipynb`
   (committed; only rewritten when its bytes change) and `DIR/<name>/<name>.ipynb`;
4. write the kit's Gradescope zip `DIR/<name>/<name>-autograder.zip`
   (`package.build_zip`: that assignment's private material only);
5. write the public part of the kit, `DIR/public/*.whl` (`public`), for
   student repositories;
6. refresh the example submissions made from the templates
   (`autograder.audit.examples.refresh`, when that module is there).

With `--check` nothing is written: it runs steps 1 to 3 in memory and exits 1,
listing what drifted, when a master notebook or a student template is not what
a build would make (0 when everything is in sync).
"""
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from autograder import config as config_mod
from autograder.build import assign, package, public, sync

STUDENT_TEMPLATE_DIR = sync.COURSE_ROOT / "student_template"


def student_bytes(nb):
    text = nbformat.writes(nb)
    return (text if text.endswith("\n") else text + "\n").encode("utf-8")


def build_assignment(name, workdir, out=None, check=False, template_dir=None, write_template=True):
    """Steps 2-4 for one assignment (the master notebook must be synced).
    Returns (student notebook bytes, drift lines, zip path or None)."""
    template_dir = Path(template_dir or STUDENT_TEMPLATE_DIR)
    result = assign.run_otter_assign(sync.master_path(name), Path(workdir) / name)
    nb = assign.student_notebook(result.student, name)
    assign.check_no_leaks(nb, name)
    data = student_bytes(nb)
    template = template_dir / f"{name}.ipynb"
    drift = []
    if not template.exists() or template.read_bytes() != data:
        drift.append(f"{template.relative_to(sync.COURSE_ROOT) if template.is_relative_to(sync.COURSE_ROOT) else template}: "
                     "differs from what the build makes")
        if not check and write_template:
            template.parent.mkdir(parents=True, exist_ok=True)
            template.write_bytes(data)
    zip_path = None
    if out is not None and (not check or not write_template):
        dest = Path(out) / name
        dest.mkdir(parents=True, exist_ok=True)
        (dest / f"{name}.ipynb").write_bytes(data)
        zip_path = dest / f"{name}-autograder.zip"
        package.build_zip(name, result.autograder_zip, zip_path)
    return data, drift, zip_path


def run(out="dist", check=False, assignments=None, log=print, dist_only=False):
    """The whole build; returns the list of drift lines (empty when in sync).

    dist_only: write the zips and the public wheel under `out` and nothing
    else (no master notebook, student template or example is rewritten); the
    sources must be in sync, else the drift is returned and nothing is built."""
    if dist_only:
        drift = run(out=None, check=True, assignments=assignments, log=log)
        if drift:
            return drift
    cfg = config_mod.load()
    names = list(assignments or cfg.assignments)
    questions = {n: cfg.questions(n) for n in names}
    drift = []
    for d in sync.sync(questions, check=check or dist_only):
        for change in d.changes:
            drift.append(f"{d.path.relative_to(sync.COURSE_ROOT)}: {change}")
        if d.changes and not check:
            log(f"synced {d.path.relative_to(sync.COURSE_ROOT)} ({len(d.changes)} change(s))")
    if check and drift:
        # The templates are built from the synced notebooks: comparing them
        # against stale master notebooks would only repeat the same drift.
        return drift
    with tempfile.TemporaryDirectory(prefix="kit-build-") as tmp:
        for name in names:
            start = time.monotonic()
            _, d, zip_path = build_assignment(name, tmp, out=None if check else out, check=check or dist_only,
                                              write_template=not dist_only)
            drift += d
            if not check:
                log(f"built {name}: student_template/{name}.ipynb"
                    + (" (updated)" if d else " (unchanged)")
                    + (f", {zip_path}" if zip_path else "") + f" in {time.monotonic() - start:.1f} s")
    if not check and out is not None:
        wheel = public.build_public_wheel(Path(out) / "public")
        log(f"built the public part of the kit for student repositories: {wheel}")
    if not dist_only:
        drift += refresh_examples(check=check, log=log)
    return drift


def refresh_examples(check=False, log=print):
    """The example submissions (`autograder.audit.examples`) are made from the
    student templates: refresh them (or, with check, list those that drifted)."""
    try:
        from autograder.audit import examples as examples_mod
    except ImportError:
        return []
    changed = examples_mod.refresh(check=check)
    if changed and not check:
        log(f"refreshed {len(changed)} example submission file(s) under examples/submissions/")
    return [f"examples/submissions/{rel}: differs from what the build makes" for rel in changed] if check else []


def main(args):
    try:
        drift = run(out=args.out, check=args.check, dist_only=getattr(args, "dist_only", False))
    except (sync.SyncError, assign.AssignError, ValueError, OSError) as exc:
        print(f"build failed: {exc}", file=sys.stderr)
        return 2
    if getattr(args, "dist_only", False) and drift:
        print("build --dist-only: the sources are out of sync (run `python -m autograder build`):", file=sys.stderr)
        for line in drift:
            print(f"  {line}", file=sys.stderr)
        return 1
    if args.check:
        if drift:
            print("out of sync with solutions/ and grading.yml (run `python -m autograder build`):")
            for line in drift:
                print(f"  {line}")
            return 1
        print("master notebooks and student templates are in sync")
    return 0
