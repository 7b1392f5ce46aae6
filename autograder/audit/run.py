"""`python -m autograder audit [--assignment NAME]`: the mutation audit of the hidden suites.

Fills the student template with every catalog entry (the reference for the
other functions), grades each through the real judge (the same path as
`grade`), and prints a matrix: entry x question, points lost, and the first
failure message on the questions the entry targets. Exit status 1 when a
buggy entry keeps full marks on a question it targets, or a correct entry
loses any point.

It also reports the likely-cause rate: the share of buggy entries whose
message on a targeted question offers a likely cause, and the public column:
which public check (what `grader.check` runs, through `python -m autograder
check`'s path: the notebook's own public tests in the sandboxed worker) already
flags each entry before submission, with the share of buggy entries flagged.
A correct entry that fails a public check also makes the exit status 1, and so
does an entry the kit failed on (status internal_error: GRADER FAULT), and so
does a hidden suite weaker than its own public check: a buggy entry that a
public check flags on a question it may be charged on, with every point of that
question kept (`weaker_than_public`). Per assignment, the causes that fit the code
(`audit.causes`): failing checks showing a cause an entry's bug does not reproduce, and
caught entries with their expected cause; either fault, on an entry that declares its
causes, makes the exit status 1 too.
"""

import json
import sys
import tempfile
from pathlib import Path

from autograder import config as config_mod
from autograder import release
from autograder.audit import causes as cause_fit
from autograder.audit.catalog import entries, fill_entry
from autograder.audit.examples import template_path
from autograder.grade import grade_batch
from autograder.judge.detect import question_name, runs


def first_failure(said):
    """What a question's feedback says first (its results.json `feedback` record, or None):
    its first failure, with the likely cause it points at."""
    if not said or not said.get("failure"):
        return ""
    return said["failure"] + (f" [{said['cause']}]" if said.get("cause") else "")


def feedback_said(data):
    """{question: its `feedback` record} from an entry's results.json data (`GradeResult.records`)."""
    records = (data.get("extra_data") or {}).get("feedback") or []
    return {r["question"]: r for r in records if isinstance(r, dict) and isinstance(r.get("question"), str)}


def fill_catalog(chosen, folder, lang=None):
    """Each entry of `chosen` filled into its assignment's student template (the edition
    `lang`, default the source's), written as folder/<assignment>/<name>.ipynb; the paths."""
    files = []
    for e in chosen:
        template = json.loads((template_path(e.assignment, lang) if lang else template_path(e.assignment)).read_text())
        path = Path(folder) / e.assignment / f"{e.name}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(fill_entry(template, e)))
        files.append(path)
    return files


def chargeable(e, cfg):
    """The questions catalog entry `e` may lose points on. Each bug is charged once: with the
    judge standing in for called graded functions, on the questions of the functions it
    defines and on a question that runs them (the training labs' runs train the student's
    parts); with isolation off, on any question."""
    if not cfg.scoring.get("isolate_dependencies", True):
        return set(cfg.questions(e.assignment))
    own = {question_name(f) for f in e.functions}
    return own | {q for q, parts in runs(e.assignment).items() if set(parts) & set(e.functions)}


def weaker_than_public(rows, cfg):
    """[(entry, question, public check)]: a buggy entry's failing public check ("question/test")
    on a question it may be charged on (`chargeable`) where the hidden suites took no point,
    the first such check per question: a hidden suite weaker than its own public check. The
    audit's rows (`verdicts`) hold what it needs: the points per question and the failing
    public checks."""
    out = []
    for e, scores, _, verdict, public in rows:
        if e.correct or not public or verdict.startswith("GRADER FAULT"):
            continue
        own, seen = chargeable(e, cfg), set()
        for check in public:
            question, sep, _ = check.partition("/")
            score, most = scores.get(question, (0, 0))
            if sep and question in own and question in scores and score >= most and question not in seen:
                seen.add(question)
                out.append((e, question, check))
    return out


def verdicts(chosen, graded, flagged, cfg):
    """The audit's rows from what the judge gave each entry of `chosen` (`graded`: its
    results.json data, in order) and its failing public checks (`flagged`: a list per
    entry, in order, or None when the public column is off)."""
    rows = []
    for e, data, public in zip(chosen, graded, flagged or [None] * len(chosen)):
        scores = {t["name"]: (t["score"], t["max_score"]) for t in release.scored(data.get("tests"))}
        # what each question's feedback says first, as data (whatever a course holds back)
        said = feedback_said(data)
        lost = {q for q, (s, m) in scores.items() if s < m}
        if (data.get("extra_data") or {}).get("status") == "internal_error":  # the kit failed: no verdict
            errors = data.get("internal_errors") or ["?"]
            verdict = f"GRADER FAULT: {' '.join(str(errors[0]).split())[:200]}"
        elif e.correct:
            verdict = "ok" if not lost else "FALSE ALARM"
        else:
            missed = [q for q in e.questions if q not in lost]
            twice = sorted(lost - chargeable(e, cfg))
            verdict = (
                ("caught" if not missed else f"MISSED on {', '.join(missed)}")
                if not twice
                else f"CHARGED AGAIN on {', '.join(twice)}"
            )
        rows.append((e, scores, said, verdict, public))
    return rows


def audit(assignment=None, cfg=None, progress=True, log=print, public=True, lang=None):
    """[(entry, {question: (score, max)}, {question: its feedback record}, verdict, failing public checks)]

    The last item lists the entry's failing public checks ("question/test"; empty
    when every one passes), or is None when `public` is off. `lang`: the edition the
    entries are filled into (default the source's, English). Returned beside how each
    entry's likely causes fit its code: (rows, `causes.fits`)."""
    cfg = cfg or config_mod.load()
    chosen = list(entries(assignment))
    with tempfile.TemporaryDirectory(prefix="kit-audit-") as tmp:
        files = fill_catalog(chosen, tmp, lang)
        # the public checks of each entry run in its grading's worker, after the last verdict: one load
        graded = grade_batch(files, Path(tmp) / "out", progress=progress, cfg=cfg, keep_public=public)
    data = [data for _, _, data in graded]
    flagged = [public_of(d) for d in data] if public else None
    return verdicts(chosen, data, flagged, cfg), cause_fit.fits(chosen, data)


def public_of(data):
    """An entry's failing public checks, as its grading listed them (results.json's
    extra_data.public_failed, `grade_batch(keep_public=True)`)."""
    found = (data.get("extra_data") or {}).get("public_failed")
    return found if isinstance(found, list) else ["(not run: the grading kept no public checks)"]


def report(rows, cfg, out=sys.stdout, fits=None):
    """Print the audit's matrix and figures; the count of faults. `fits`: how each entry's
    causes fit its code (`causes.fits`), None to leave those figures out."""
    bad = 0
    buggy = [r for r in rows if not r[0].correct]
    caught = [r for r in buggy if r[3] == "caught"]
    hinted = [r for r in caught if any((r[2].get(q) or {}).get("cause") for q in r[0].questions)]
    for assignment in cfg.assignments:
        mine = [r for r in rows if r[0].assignment == assignment]
        if not mine:
            continue
        qs = list(cfg.questions(assignment))
        width = max(len(r[0].name) for r in mine) + 2
        print(f"\n{assignment}: points lost per question", file=out)
        print("  " + "entry".ljust(width) + "".join(f"{q[:12]:>13}" for q in qs) + "  verdict  public check", file=out)
        for e, scores, said, verdict, public in mine:
            cells = ""
            for q in qs:
                s, m = scores.get(q, (0, 0))
                mark = "*" if q in e.questions else " "
                cells += f"{(m - s):>12.2f}{mark}" if s < m else f"{'.':>12}{mark}"
            if public:  # the entry's own questions first
                public = sorted(public, key=lambda f: f.split("/")[0] not in e.questions)
            shown = (
                ""
                if public is None
                else f"  {public[0] if public else '.'}" + (f" (+{len(public) - 1})" if len(public) > 1 else "")
            )
            print("  " + e.name.ljust(width) + cells + f"  {verdict}" + shown, file=out)
            bad += verdict not in ("ok", "caught")
            bad += bool(e.correct and public)
            if e.correct and public:
                print(f"      PUBLIC CHECK FAILS ON A CORRECT ENTRY: {', '.join(public)}", file=out)
            for q in e.questions:
                msg = first_failure(said.get(q))
                if msg:
                    print(f"      {q}: {msg[:220]}", file=out)
        lines, faults = cause_fit.figures(mine, fits or {})
        for line in lines:
            print(f"  {line}", file=out)
        bad += faults
    weaker = weaker_than_public(rows, cfg)
    for e, question, check in weaker:
        print(
            f"  HIDDEN SUITE WEAKER THAN PUBLIC: {e.assignment}/{e.name} keeps every point of {question}, "
            f"whose public check {check} fails",
            file=out,
        )
    bad += len(weaker)
    print("\n(* marks the questions an entry targets)", file=out)
    correct = [r for r in rows if r[0].correct]
    print(
        f"buggy entries caught on their questions: {len(caught)}/{len(buggy)}"
        f"{f' ({100 * len(caught) / len(buggy):.0f}%)' if buggy else ''}",
        file=out,
    )
    print(f"correct entries at full marks: {sum(r[3] == 'ok' for r in correct)}/{len(correct)}", file=out)
    print(
        f"likely-cause rate (caught entries whose message offers a likely cause): "
        f"{len(hinted)}/{len(caught)}{f' ({100 * len(hinted) / len(caught):.0f}%)' if caught else ''}",
        file=out,
    )
    real = [r for r in caught if r[0].source]
    real_hinted = [r for r in real if r in hinted]
    print(
        f"likely-cause rate on real code (entries with a source: line, from tutorials, books and libraries): "
        f"{len(real_hinted)}/{len(real)}{f' ({100 * len(real_hinted) / len(real):.0f}%)' if real else ''}",
        file=out,
    )
    if any(r[4] is not None for r in rows):
        flagged = [r for r in buggy if r[4]]
        print(
            "public column: the first public check (question/test) that fails on the entry, '.' when all pass", file=out
        )
        print(
            f"buggy entries flagged by a public check: {len(flagged)}/{len(buggy)}"
            f"{f' ({100 * len(flagged) / len(buggy):.0f}%)' if buggy else ''}",
            file=out,
        )
        print(f"correct entries passing every public check: {sum(not r[4] for r in correct)}/{len(correct)}", file=out)
        print(f"public failures no hidden check charges (entry, question): {len(weaker)}", file=out)
    return bad


def main(*, assignment: str | None = None, no_progress: bool = False) -> int:
    """`audit`: grade every catalog entry (of `assignment`, default all: `autograder.audit.main`
    has refused an unknown one) and print what the suites catch."""
    cfg = config_mod.load()
    rows, fits = audit(assignment, cfg, progress=not no_progress)
    bad = report(rows, cfg, fits=fits)
    return 1 if bad else 0
