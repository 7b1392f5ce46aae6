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
from autograder.judge import text



def summary_markdown(result, threshold):
    lines = [f"### {result.assignment or 'Submission'}: {result.score:g} / {result.max_score:g}", "",
             "| question | score | out of | first failed check |", "| --- | ---: | ---: | --- |"]
    for q in result.questions.values():
        first = next((line for line in q.lines if line.startswith(("FAIL ", "not graded"))), "")
        first = first.removeprefix("FAIL ")
        if "Likely cause:" in first:  # the check's name and the cause say the most in a table cell
            first = f"{first.split(':', 1)[0]}: likely cause: {first.split('Likely cause:', 1)[1].strip()}"
        lines.append(f"| `{q.name}` | {q.score:g} | {q.max_score:g} | {text.markdown(first, 200)} |")
    verdict = "passes" if result.score >= threshold else "is below"
    lines += ["", f"The score {verdict} the pass mark of {threshold:g} (grading.yml `ci.pass_fraction`)."]
    lines += [f"> {text.markdown(n)}" for n in result.notes]
    return "\n".join(lines) + "\n"


def main(args):
    if args.workflow:
        print(resources.files("autograder.ci").joinpath("github-workflow.yml").read_text(), end="")
        return 0
    if not args.notebook:
        print("ci: give a NOTEBOOK (or --workflow)", file=sys.stderr)
        return 2
    from autograder.judge import grade

    cfg = config_mod.load()
    result = grade(args.notebook, args.assignment, cfg)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(result.to_gradescope(), indent=2))
    if not result.questions:
        print("\n".join(result.notes), file=sys.stderr)
        return 2
    fraction = float((cfg.data.get("ci") or {}).get("pass_fraction", 0.0))
    threshold = round(fraction * result.max_score, 2)
    text = summary_markdown(result, threshold)
    print(text, end="")
    target = args.summary or os.environ.get("GITHUB_STEP_SUMMARY")
    if target:
        with open(target, "a") as f:
            f.write(text)
    return 0 if result.score >= threshold else 1
