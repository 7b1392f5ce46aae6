"""`python -m autograder VERB ...`: one package per verb.

Each verb is a keyword-only function, its package's `main` (otter-grader's
pattern): `VERBS` maps the verb's name to how its arguments are parsed and
where its function is, and the command line calls that function with the
parsed arguments as keywords. So the Python API and the CLI are the same
function: `python -m autograder grade subs --out out` is
`autograder.grade.main(submissions=["subs"], out="out")`.
"""

import argparse
import importlib
import sys
from collections.abc import Callable
from typing import Any, NamedTuple

# Verbs that need the private root (the public part of the kit has only `check`).
PRIVATE_VERBS = ("build", "grade", "ci", "gradescope", "audit", "demo", "new")


class Verb(NamedTuple):
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]  # adds the verb's arguments to its parser
    module: str  # the package whose `main` runs the verb (imported only when it runs)

    def function(self) -> Callable[..., int]:
        return importlib.import_module(self.module).main  # type: ignore[no-any-return]


def _build(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", default="dist", help="output folder (default: dist)")
    p.add_argument("--check", action="store_true", help="only report drift between solutions/ and the notebooks")
    p.add_argument(
        "--dist-only",
        action="store_true",
        help="write only the zips and the public wheel under --out; rewrite no tracked file",
    )
    p.add_argument("--assignment", help="build this assignment only (default: every assignment of grading.yml)")


def _grade(p: argparse.ArgumentParser) -> None:
    p.add_argument("submissions", nargs="+", metavar="SUBMISSION", help="files or folders of submissions")
    p.add_argument(
        "--assignment", help="assignment name (default: the batch's, detected from what the notebooks' code defines)"
    )
    p.add_argument("--out", required=True, help="folder for <id>/results.json and grades.csv")
    p.add_argument(
        "--resume",
        action="store_true",
        help="keep results.json written for the same file with the same bytes; grade the rest",
    )
    p.add_argument("--jobs", type=int, default=None, help="judges in parallel (default: one per CPU)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--lang", help="feedback language, pt-BR or en (default: each notebook's edition, else grading.yml)")
    p.add_argument(
        "--shard",
        metavar="I/N",
        help="grade only the I-th of N fixed parts of the submissions found (writes OUT/shard.json)",
    )


def _merge(p: argparse.ArgumentParser) -> None:
    p.add_argument("outs", nargs="+", metavar="OUT", help="folders written by grade (one per shard)")
    p.add_argument("--out", required=True, help="folder for the merged <id>/ folders and grades.csv")


def _deploy(p: argparse.ArgumentParser) -> None:
    p.add_argument("template", nargs="?", metavar="NAME", help="the template (--list names them)")
    p.add_argument("--list", action="store_true", dest="listing", help="list the templates and their variables")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="VAR=VALUE",
        dest="settings",
        help="a template variable's value (repeatable; default: the template's own)",
    )


def _check(p: argparse.ArgumentParser) -> None:
    p.add_argument("notebook")
    p.add_argument("--assignment")
    p.add_argument("--lang", help="language of what it prints, pt-BR or en (default: the notebook's edition)")
    p.add_argument("--summary", help="Markdown file to append a job summary to (default: $GITHUB_STEP_SUMMARY)")
    p.add_argument(
        "--json", action="store_true", help="print the per-question verdicts as one JSON object (for scripts)"
    )


def _ci(p: argparse.ArgumentParser) -> None:
    p.add_argument("notebook", nargs="?")
    p.add_argument("--assignment")
    p.add_argument("--lang", help="feedback language, pt-BR or en (default: the notebook's edition)")
    p.add_argument("--out", default="grading", help="folder for results.json (default: grading)")
    p.add_argument("--summary", help="Markdown file to append to (default: $GITHUB_STEP_SUMMARY)")
    p.add_argument("--workflow", action="store_true", help="print the GitHub Actions workflow template")


def _gradescope(p: argparse.ArgumentParser) -> None:
    p.add_argument("--root", default=None, help="Gradescope root (default: $KIT_AUTOGRADER_ROOT or /autograder)")


def _audit(p: argparse.ArgumentParser) -> None:
    p.add_argument("--assignment")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--hostile", action="store_true", help="grade the battery of hostile and broken submissions instead")
    p.add_argument("--case", action="append", metavar="NAME", help="with --hostile: only this case (repeatable)")


def _report(p: argparse.ArgumentParser) -> None:
    p.add_argument("out_dir", metavar="OUT", help="the --out folder of `grade` (results.json files and grades.csv)")
    p.add_argument("--out", help="HTML file to write (default: OUT/report.html)")
    p.add_argument("--lang", help="language of the report, pt-BR or en (default: grading.yml's)")
    p.add_argument(
        "--export",
        action="append",
        choices=("canvas", "moodle"),
        help="also write OUT/canvas.csv or OUT/moodle.csv, the CSV that LMS imports (repeatable)",
    )
    p.add_argument(
        "--roster",
        metavar="FILE",
        help="the LMS's roster (Moodle's grading worksheet, Canvas's gradebook CSV): match the students, "
        "list who did not submit, and write it back filled in (OUT/moodle_worksheet.csv and "
        "OUT/moodle_feedback.zip, or OUT/canvas.csv)",
    )
    p.add_argument(
        "--changed-only",
        action="store_true",
        help="with --roster: write back only the students whose score the last `grade --resume` moved "
        "(OUT/changes.csv); every other row stays as the LMS had it",
    )


def _release(p: argparse.ArgumentParser) -> None:
    p.add_argument("out_dir", metavar="OUT", help="the --out folder of `grade` (its <id>/results.json)")


def _new(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", metavar="NAME", help="the new assignment's name (lower-case letters, digits and _)")


def _demo(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", default="demo-out", help="output folder (default: demo-out)")


VERBS = {  # in the order `--help` lists them
    "build": Verb(
        "build student notebooks (refreshing student_template/) and autograder zips", _build, "autograder.build"
    ),
    "grade": Verb(
        "grade submissions (notebooks or otter export zips) in the trusted judge", _grade, "autograder.grade"
    ),
    "merge": Verb(
        "merge the --out folders of grade --shard runs into one, as a single run writes it", _merge, "autograder.merge"
    ),
    "release": Verb(
        "rewrite OUT's feedback files with what students see after the deadline (grading.yml feedback)",
        _release,
        "autograder.release",
    ),
    "deploy": Verb(
        "print a template for grading a class on many machines (GitHub Actions, Kubernetes, Slurm)",
        _deploy,
        "autograder.deploy",
    ),
    "check": Verb("run a notebook's public tests (what grader.check_all() runs)", _check, "autograder.check"),
    "ci": Verb(
        "grade one notebook in a CI job, write a Markdown job summary, fail below the pass mark", _ci, "autograder.ci"
    ),
    "gradescope": Verb(
        "grade /autograder/submission into /autograder/results (run_autograder)", _gradescope, "autograder.gradescope"
    ),
    "audit": Verb("grade every catalog entry and print what the hidden suites catch", _audit, "autograder.audit"),
    "report": Verb("the class report of a graded folder (HTML, a summary, LMS exports)", _report, "autograder.report"),
    "demo": Verb("build everything, grade the example submissions, print a score table", _demo, "autograder.demo"),
    "new": Verb(
        "write the skeleton of a new assignment in this checkout (docs/pages/adding.md)", _new, "autograder.new"
    ),
}


def parser() -> argparse.ArgumentParser:
    """The command line's parser: one subcommand per verb of `VERBS`."""
    from autograder import __version__

    top = argparse.ArgumentParser(prog="python -m autograder", description="Attention-mechanisms autograding kit.")
    top.add_argument("--version", action="version", version=f"attention-autograder-kit {__version__}")
    verbs = top.add_subparsers(dest="verb", required=True, metavar="VERB")
    for name, verb in VERBS.items():
        verb.arguments(verbs.add_parser(name, help=verb.help))
    return top


def main(argv: list[str] | None = None, judge: bool = False, parse_only: bool = False) -> Any:
    """Run a verb. `judge`: this process is already the judge a one-submission
    command runs in (`autograder.zygote`). `parse_only`: return the parsed
    arguments and run nothing (the deployment templates' tests check their
    command lines with it)."""
    args = parser().parse_args(argv)
    if parse_only:
        return args
    from autograder import layout

    if args.verb in PRIVATE_VERBS and not layout.has_private():
        from autograder.messages import t

        print(t("cli_public_part", verb=args.verb), file=sys.stderr)
        return 2
    if args.verb != "deploy":  # every verb that grades, builds or checks reads grading.yml: refuse a bad one first
        from autograder import config

        try:
            config.load()
        except config.ConfigError as exc:
            print(f"{args.verb}: {exc}", file=sys.stderr)
            return 2
    from autograder import messages

    try:  # the kit's words and each assignment's own (messages.yml): a bad file is its one line, before anything runs
        messages.catalog()
    except messages.MessageError as exc:
        print(f"{args.verb}: {exc}", file=sys.stderr)
        return 2
    single = args.verb in ("ci", "gradescope") or (
        args.verb == "grade" and len(args.submissions) == 1 and args.submissions[0].endswith((".ipynb", ".zip"))
    )
    if single and not judge and not (args.verb == "ci" and args.workflow):
        # one submission: the judge and its fork server share one torch import (autograder.zygote)
        from autograder import zygote

        return zygote.run(sys.argv[1:] if argv is None else list(argv))
    options = vars(args)
    return VERBS[options.pop("verb")].function()(**options)


if __name__ == "__main__":
    sys.exit(main())
