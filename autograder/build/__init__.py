"""`python -m autograder build [--out DIR] [--check]`: notebooks and autograder zips.

For every assignment of grading.yml:

1. sync (`sync.sync`): regenerate the `kit-imports`, `kit-provided` and
   `kit-solution` cells and the question points of the master notebook
   `assignments/<name>/<name>.ipynb` from `solutions/<name>.py` and grading.yml,
   writing the notebook only when it drifted;
2. make the pt-BR master in memory from the English one and its translation
   file `assignments/<name>/<name>.pt-BR.yml` (`editions.localize`; drift
   between the two languages is reported by `editions.check`), and otter assign
   each edition in a temporary folder (`assign.run_otter_assign`);
3. normalise otter's student notebooks (`assign.student_notebook`: the edition's
   init cell, otter's own cells in its language, `metadata.kit_language`),
   check that they leak neither graded reference code nor hidden-suite code
   (`assign.check_no_leaks`) and differ only in their text
   (`check_aligned`), and write them to `student_template/<lang>/<name>.ipynb`
   (committed; only rewritten when their bytes change) and
   `DIR/<name>/<lang>/<name>.ipynb`, for lang in pt-BR and en;
4. write the kit's Gradescope zip `DIR/<name>/<name>-autograder.zip`
   (`package.build_zip`: that assignment's private material only);
5. write the public part of the kit, `DIR/public/*.whl` (`public`), for
   student repositories;
6. refresh the example submissions made from the templates
   (`autograder.audit.examples.refresh`, when that module is there).

With `--check` nothing is written: it runs steps 1 to 3 in memory and exits 1,
listing what drifted, when a master notebook, a translation (one language
changed without the other) or a student template is not what a build would
make (0 when everything is in sync).
"""

import shutil
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from autograder import config as config_mod
from autograder.build import assign, editions, package, public, sync

STUDENT_TEMPLATE_DIR = sync.COURSE_ROOT / "student_template"


def template_path(name, lang, template_dir=None):
    """The committed student notebook of `name` in edition `lang`: student_template/<lang>/<name>.ipynb."""
    return Path(template_dir or STUDENT_TEMPLATE_DIR) / lang / f"{name}.ipynb"


def student_bytes(nb):
    text = nbformat.writes(nb)
    return (text if text.endswith("\n") else text + "\n").encode("utf-8")


def _shown(path):
    return path.relative_to(sync.COURSE_ROOT) if path.is_relative_to(sync.COURSE_ROOT) else path


def check_aligned(editions_nbs, name):
    """The editions of one student notebook differ only in their text: the same cells
    (ids, types, metadata and tags), the same questions, the same otter config."""
    (first_lang, first), *rest = editions_nbs.items()
    for lang, nb in rest:
        where = f"{name}: the {lang} and {first_lang} student notebooks"
        if [(c.get("id"), c.get("cell_type"), c.get("metadata")) for c in nb.cells] != [
            (c.get("id"), c.get("cell_type"), c.get("metadata")) for c in first.cells
        ]:
            raise assign.AssignError(f"{where} differ in their cells (ids, types, metadata or tags)")
        meta = {k: v for k, v in nb.metadata.items() if k not in ("kit_language", "otter")}
        want = {k: v for k, v in first.metadata.items() if k not in ("kit_language", "otter")}
        otter = {k: v for k, v in nb.metadata.get("otter", {}).items() if k != "tests"}
        want_otter = {k: v for k, v in first.metadata.get("otter", {}).items() if k != "tests"}
        if (
            meta != want
            or otter != want_otter
            or set(nb.metadata.get("otter", {}).get("tests", {}))
            != set(first.metadata.get("otter", {}).get("tests", {}))
        ):
            raise assign.AssignError(f"{where} differ in their metadata or otter config")


def build_assignment(name, workdir, out=None, check=False, template_dir=None, write_template=True, master=None):
    """Steps 2-4 for one assignment (the master notebook must be synced), both editions.
    `master`: the synced English master (read from disk when None).
    Returns ({lang: student notebook bytes}, drift lines, zip path or None)."""
    workdir = Path(workdir) / name
    master = master if master is not None else sync.read_notebook(sync.master_path(name))
    results, nbs = {}, {}
    for lang in editions.EDITIONS:
        if lang == editions.SOURCE:
            source = sync.master_path(name)
        else:
            source = workdir / f"master-{lang}" / f"{name}.ipynb"
            source.parent.mkdir(parents=True)
            sync.write_notebook(editions.localize(name, master, lang), source)
        results[lang] = assign.run_otter_assign(source, workdir / lang)
        nbs[lang] = assign.student_notebook(results[lang].student, name, lang)
        assign.check_no_leaks(nbs[lang], name)
    check_aligned(nbs, name)
    data = {lang: student_bytes(nb) for lang, nb in nbs.items()}
    drift = []
    for lang in editions.EDITIONS:
        template = template_path(name, lang, template_dir)
        if not template.exists() or template.read_bytes() != data[lang]:
            drift.append(f"{_shown(template)}: differs from what the build makes")
            if not check and write_template:
                template.parent.mkdir(parents=True, exist_ok=True)
                template.write_bytes(data[lang])
    zip_path = None
    if out is not None and (not check or not write_template):
        dest = Path(out) / name
        for lang in editions.EDITIONS:
            (dest / lang).mkdir(parents=True, exist_ok=True)
            (dest / lang / f"{name}.ipynb").write_bytes(data[lang])
        zip_path = dest / f"{name}-autograder.zip"
        # grading does not depend on the edition: one zip, from the English run
        package.build_zip(name, results[editions.SOURCE].autograder_zip, zip_path)
    return data, drift, zip_path


def run(out="dist", check=False, assignments=None, log=print, dist_only=False):
    """The whole build; returns the list of drift lines (empty when in sync).

    dist_only: write the zips and the public wheel under `out` and nothing
    else (no master notebook, student template or example is rewritten); the
    sources must be in sync, else the drift is returned and nothing is built:
    one pass, its zips staged and moved under `out` only once nothing drifted."""
    compare = check or dist_only  # no tracked file is rewritten
    cfg = config_mod.load()
    names = list(assignments or cfg.assignments)
    questions = {n: cfg.questions(n) for n in names}
    drift = []
    masters = {}
    for d in sync.sync(questions, check=compare):
        masters[d.assignment] = d.nb
        for change in d.changes:
            drift.append(f"{d.path.relative_to(sync.COURSE_ROOT)}: {change}")
        if d.changes and not compare:
            log(f"synced {d.path.relative_to(sync.COURSE_ROOT)} ({len(d.changes)} change(s))")
    translation_drift = editions.check(names, masters)
    if translation_drift and not compare:
        log(
            f"warning: {len(translation_drift)} translation(s) out of date (the pt-BR edition keeps the old "
            "text or the English there; `build --check` fails until they are updated):"
        )
        for line in translation_drift:
            log(f"  {line}")
    drift += translation_drift
    if compare and drift:
        # The templates are built from the synced notebooks: comparing them
        # against stale master notebooks would only repeat the same drift.
        return drift
    with tempfile.TemporaryDirectory(prefix="kit-build-") as tmp:
        staged = Path(tmp) / "dist"
        target = None if check else staged if dist_only else out
        for name in names:
            start = time.monotonic()
            _, d, zip_path = build_assignment(
                name, tmp, out=target, check=compare, write_template=not dist_only, master=masters[name]
            )
            drift += d
            if zip_path is not None and dist_only:
                zip_path = Path(out) / zip_path.relative_to(staged)
            if not check:
                log(
                    f"built {name}: "
                    + ", ".join(f"student_template/{lang}/{name}.ipynb" for lang in editions.EDITIONS)
                    + (" (updated)" if d else " (unchanged)")
                    + (f", {zip_path}" if zip_path else "")
                    + f" in {time.monotonic() - start:.1f} s"
                )
        drift += refresh_examples(check=compare, log=log)
        if dist_only:
            if drift:
                return drift
            shutil.copytree(staged, out, dirs_exist_ok=True)
    if not check and out is not None:
        wheel = public.build_public_wheel(Path(out) / "public")
        log(f"built the public part of the kit for student repositories: {wheel}")
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


def main(*, out: str = "dist", check: bool = False, dist_only: bool = False, assignment: str | None = None) -> int:
    """`build`: the student notebooks, templates and autograder zips under `out`; `check`: only report
    drift; `dist_only`: only the zips and the public wheel, no tracked file rewritten; `assignment`:
    that one only (the examples of every assignment are refreshed all the same)."""
    if assignment is not None and assignment not in config_mod.load().assignments:
        print(f"build: no assignment {assignment!r} in grading.yml", file=sys.stderr)
        return 2
    try:
        drift = run(out=out, check=check, dist_only=dist_only, assignments=[assignment] if assignment else None)
    except (sync.SyncError, assign.AssignError, editions.TranslationError, ValueError, OSError) as exc:
        print(f"build failed: {exc}", file=sys.stderr)
        return 2
    if dist_only and drift:
        print("build --dist-only: the sources are out of sync (run `python -m autograder build`):", file=sys.stderr)
        for line in drift:
            print(f"  {line}", file=sys.stderr)
        return 1
    if check:
        if drift:
            print(
                "out of sync with solutions/, grading.yml or the translations (run `python -m autograder build`; "
                "a translation line says what to change):"
            )
            for line in drift:
                print(f"  {line}")
            return 1
        print("master notebooks, translations, student templates (both editions) and examples are in sync")
    return 0
