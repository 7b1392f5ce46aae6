"""`python -m autograder ci NOTEBOOK`: grade one notebook in a CI job (GitHub Actions, Classroom).

Grades with the kit's judge (sandboxed worker, hidden suites), writes
`OUT/results.json`, appends a Markdown table of per-question scores to the job
summary (`--summary`, default `$GITHUB_STEP_SUMMARY` when set), prints it, and
exits 1 when the score is below `ci.pass_fraction` of the points in
grading.yml (2 when the notebook cannot be graded at all).

This is the staff's tool (it needs the private kit). `python -m autograder ci
--workflow` prints the workflow for student repositories
(`autograder/ci/github-workflow.yml`), which installs only the public part
and runs `check`.
"""

import json
import os
import sys
from importlib import resources
from pathlib import Path

from autograder import config as config_mod
from autograder import messages, text
from autograder.messages import number, t


def summary_markdown(result, threshold):
    with messages.language(result.language):
        return _summary_markdown(result, threshold)


def _summary_markdown(result, threshold):
    lines = [
        f"### {result.assignment or t('ci_submission')}: {result.score:g} / {result.max_score:g}",
        "",
        t("ci_summary_header"),
        "| --- | ---: | ---: | --- |",
    ]
    for q in result.questions.values():
        # what the question's feedback says first, from its data (`QuestionResult.failures`,
        # `causes_said`, `ungraded`): the check's name and the cause say the most in a table cell
        first = q.failures[0].words if q.failures else q.ungraded
        if q.failures and q.causes_said:
            first = f"{q.failures[0].where}: {t('ci_likely_cause')}: {q.causes_said[0].words}"
        lines.append(f"| `{q.name}` | {q.score:g} | {q.max_score:g} | {text.markdown(first, 200)} |")
    lines += ["", t("ci_passes" if result.score >= threshold else "ci_below", threshold=number(threshold, "g"))]
    lines += [f"> {text.markdown(n)}" for n in result.notes]
    return "\n".join(lines) + "\n"


def main(
    *,
    notebook: str | None = None,
    assignment: str | None = None,
    lang: str | None = None,
    out: str = "grading",
    summary: str | None = None,
    workflow: bool = False,
) -> int:
    """`ci`: grade `notebook` into OUT/results.json, print (and append to `summary`) a job summary;
    1 below the pass mark. `workflow`: print the GitHub Actions workflow template instead."""
    if workflow:
        print(resources.files("autograder.ci").joinpath("github-workflow.yml").read_text(), end="")
        return 0
    if not notebook:
        print(t("ci_give_notebook"), file=sys.stderr)
        return 2
    from autograder.judge import grade

    cfg = config_mod.load()
    try:
        lang = messages.normalize(lang) if lang else None
    except messages.MessageError as exc:
        print(f"ci: {exc}", file=sys.stderr)
        return 2
    if assignment and assignment not in cfg.assignments:
        print(
            t("ci_unknown_assignment", name=repr(text.one_line(assignment, 60)), known=", ".join(cfg.assignments)),
            file=sys.stderr,
        )
        return 2
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        print(t("ci_out_is_file", out=text.one_line(folder, 120)), file=sys.stderr)
        return 2
    folder.mkdir(parents=True, exist_ok=True)
    try:
        result = grade(notebook, assignment, cfg, lang=lang or None)
    except Exception as exc:  # noqa: BLE001 - a grader bug still leaves a results.json behind
        import traceback

        traceback.print_exc()
        (folder / "results.json").write_text(
            json.dumps(
                {
                    "score": 0.0,
                    "tests": [],
                    "output_format": "text",
                    "output": t("internal_error_batch", error=type(exc).__name__),
                },
                indent=2,
            )
        )
        return 2
    (folder / "results.json").write_text(json.dumps(result.to_gradescope(), indent=2))
    if result.status == "internal_error":  # the kit's fault: loud, whatever the score
        for line in result.internal_errors:
            print(t("ci_internal_error", line=text.one_line(line, 2000)), file=sys.stderr)
        return 2
    if not result.questions:
        print("\n".join(text.one_line(n) for n in result.notes), file=sys.stderr)
        return 2
    fraction = float(cfg.ci.get("pass_fraction", 0.0))
    threshold = round(fraction * result.max_score, 2)
    markdown = summary_markdown(result, threshold)
    print(markdown, end="")
    target = summary or os.environ.get("GITHUB_STEP_SUMMARY")
    if target:
        with open(target, "a", encoding="utf-8") as f:
            f.write(markdown)
    return 0 if result.score >= threshold else 1
