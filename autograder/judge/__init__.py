"""The trusted judge: grade one submission with the hidden suites.

Never executes student code. The hidden suites
(`autograder/private/assignments/<assignment>/test_<question>.py`) run here, in
pytest, in this process; the student's code runs in a sandboxed worker
(`remote.Remote`) and only plain tensors come back. How the outcomes become
scores and feedback: `scoring`.
"""

import importlib
import inspect
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from autograder import __version__, declarations, layout, messages, release
from autograder import config as config_mod
from autograder.faults import KitFault
from autograder.judge import detect, form_causes, scoring
from autograder.judge.counterexample import Shown
from autograder.judge.failure import Failure, Msg, Said
from autograder.judge.notebook import Cell, Submission, SubmissionError, load_submission
from autograder.judge.remote import Remote
from autograder.judge.scoring import MAX_LINE_CHARS, QuestionResult, TestOutcome  # noqa: F401 - re-exported
from autograder.judge.stand_in import StandIn
from autograder.messages import t
from autograder.sandbox import warm
from autograder.sandbox.client import WorkerDied
from autograder.sandbox.limits import Limits
from autograder.text import Code, Strong, fenced, markdown, one_line

if TYPE_CHECKING:  # imported where a judge starts its own
    from autograder.sandbox.forkserver import ForkServer

warm.without_dynamo()  # the suites' meta-device references import no torch._dynamo (~2 s a judge)

SUITES = layout.SUITES  # the suites' shared library: its pytest.ini, and its conftest.py as their plugin
ASSIGNMENTS = (
    layout.ASSIGNMENTS
)  # one folder per assignment; pytest's rootdir, so a nodeid is <assignment>/<file>::<test>
SUITES_PLUGIN = "autograder.private.suites.conftest"
MAX_PUBLIC_LINES = 5  # failed public checks shown under a question
PROVIDED_PRELUDE = "import math\n\nimport torch\nfrom torch import nn\n\n"


def _reset_peak_memory() -> None:
    """Start this process's peak-RSS count afresh (Linux; a no-op elsewhere)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def _peak_memory_mb() -> float | None:
    """This process's peak resident memory since the last reset (VmHWM), or None."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except (OSError, ValueError, IndexError):
        pass
    return None


@dataclass
class GradeResult:
    path: Path
    assignment: str | None
    questions: dict[str, QuestionResult]  # name -> QuestionResult
    notes: list[str] = field(default_factory=list)  # submission-wide messages
    seconds: float = 0.0
    peak_mb: float | None = None  # the largest worker peak memory, where measured
    language: str | None = None  # of the feedback (messages.LANGUAGES)
    # "not_graded": the judge could not run the suites on it (the file's fault);
    # "internal_error": the kit failed (a suite that does not collect, a check that
    # raises, a fixture error): never the student's fault, never kept by --resume
    status: str = "graded"
    internal_errors: list[str] = field(default_factory=list)  # for the staff: what failed and where
    outcomes: list[TestOutcome] = field(default_factory=list)  # the suites' TestOutcomes, as run
    flags: dict[str, Any] = field(default_factory=dict)  # what a person should look at (`records`)
    judge_peak_mb: float | None = None
    # what a student sees of each question, and when (grading.yml `feedback`); a question
    # not here shows everything at once (a file not graded, a grader fault)
    terms: dict[str, release.Terms] = field(default_factory=dict)
    # the notebook's public checks, where a question's terms show them: {question: (passed,
    # total, [(case, error)])}, or the reason they could not run
    public: dict[str, tuple[int, int, list[tuple[str, str]]]] | str | None = None
    # where the caller asked for them (`grade(keep_public=True)`: the audit, which reads the
    # public checks of the same load as the grade), the failing ones as data (`public_failed`):
    # results.json's extra_data.public_failed
    public_failed: list[str] | None = None

    @property
    def score(self) -> float:
        return round(sum(q.score for q in self.questions.values()), 2)

    @property
    def max_score(self) -> float:
        return sum(q.max_score for q in self.questions.values())

    def to_gradescope(self) -> dict[str, Any]:
        """results.json in Gradescope's format, in the feedback's language."""
        with messages.language(self.language):
            return self._to_gradescope()

    def _to_gradescope(self) -> dict[str, Any]:
        tests: list[dict[str, Any]] = []
        for q in self.questions.values():
            terms = self.terms.get(q.name, release.EVERYTHING)
            tests.append(
                {
                    "name": q.name,
                    "score": q.score,
                    "max_score": q.max_score,
                    "output": self._view(q, terms.at_submission, terms),
                    "visibility": release.VISIBLE,
                    "extra_data": {"level": terms.at_submission},  # what the feedback page may mark
                }
            )
            if terms.later and q.lines:  # no score: the scored test above holds it (release.scored)
                tests.append(
                    {
                        "name": t("release_later_name", question=q.name),
                        "output": self._view(q, terms.after_deadline),
                        "visibility": terms.released,
                        "extra_data": {"level": terms.after_deadline},
                    }
                )
        # Markdown, which Gradescope renders: every line (student text included) escaped, so
        # nothing a student's error message holds can act as Markdown or HTML of its own.
        out: dict[str, Any] = {
            "score": self.score,
            "tests": tests,
            "execution_time": round(self.seconds, 2),
            "output_format": "md",
            "test_output_format": "md",
            "extra_data": {
                "kit_version": __version__,
                "language": self.language or messages.current(),
                "status": self.status,
                "internal_errors": len(self.internal_errors),
            },
        }
        out["extra_data"].update(self.records())
        if self.notes:
            out["output"] = markdown_lines(self.notes)
        if self.peak_mb is not None:
            out["extra_data"]["worker_peak_mb"] = self.peak_mb
        if self.judge_peak_mb is not None:
            out["extra_data"]["judge_peak_mb"] = self.judge_peak_mb
        if self.public_failed is not None:
            out["extra_data"]["public_failed"] = self.public_failed
        return out

    def _view(self, q: QuestionResult, level: str, held: release.Terms | None = None) -> str:
        """One question's feedback at a level (`release.LEVELS`), as Gradescope Markdown;
        `held`: the question's terms, where this view is the one at submission (it then
        says what comes later)."""
        head = f"{q.score:g} / {q.max_score:g}"
        if not q.lines:
            return f"{head}: {t('all_passed')}"
        if level == "all":
            return markdown_lines([head] + q.lines)
        lines = [head, *q.form_lines]
        if level == "public":
            lines += self._public_lines(q.name)
        if held is not None:
            later = "release_typed_later" if q.name in release.TYPED else "release_later"
            lines.append(t(later if held.later else "release_never"))
        return markdown_lines(lines)

    def _public_lines(self, question: str) -> list[str]:
        if isinstance(self.public, str):
            return [one_line(t("release_public_not_run", reason=self.public), MAX_LINE_CHARS)]
        found = (self.public or {}).get(question)
        if found is None or not found[1]:
            return [t("release_public_none")]
        passed, total, errors = found
        lines = [t("release_public", passed=passed, total=total)]
        for case, error in errors[:MAX_PUBLIC_LINES]:
            lines.append(one_line(t("release_public_failed", case=case, error=error), MAX_LINE_CHARS))
        return lines

    def records(self) -> dict[str, Any]:
        """Plain data for class reports (`autograder.report`), beside the words: every
        check run (`checks`: question, check, cases, failed, evidence_failed, causes as
        indices into `causes`), each likely cause once (`causes`: its text as the
        student read it, its catalog key and fields, so it counts the same in every
        language; its words in the feedback's; `field_msgs`: the fields that are messages
        themselves, by key), what each question's feedback says first
        (`feedback`: its first failure's words after the prefix and its first likely-cause
        line, "" where none, and the counterexample it shows (`counterexample.Shown.as_data`)
        where one, for the questions with a failure or a cause: the audit shows them without
        reading the feedback back), and what a person should look at (`flags`)."""
        with messages.language(self.language):
            return self._records()

    def _records(self) -> dict[str, Any]:
        causes: list[dict[str, Any]] = []
        said: list[Msg] = []  # each cause once, as data (`causes` in the same order)
        checks: list[dict[str, Any]] = []
        for q in self.questions.values():
            for record in q.checks:
                indices: list[int] = []
                cause: Msg
                for cause in record["causes"]:
                    found = next((n for n, c in enumerate(said) if c == cause), None)
                    if found is None:
                        said.append(cause)
                        text, fields = cause.render().strip(), cause.field_texts()
                        kept = {"text": text, "key": cause.key, "fields": fields, "questions": [], "checks": []}
                        if cause.field_msgs():  # a field that is a message, by its key (`report.words`)
                            kept["field_msgs"] = cause.field_msgs()
                        causes.append(kept)
                        found = len(causes) - 1
                    c = causes[found]
                    if q.name not in c["questions"]:
                        c["questions"].append(q.name)
                    c["checks"].append(f"{q.name}::{record['check']}")
                    indices.append(found)
                checks.append({"question": q.name, **record, "causes": indices})
        first = [
            {
                "question": q.name,
                "failure": q.failures[0].words if q.failures else "",
                "cause": q.causes_said[0].line if q.causes_said else "",
                **({"counterexample": q.counterexample.as_data()} if q.counterexample else {}),
            }
            for q in self.questions.values()
            if q.failures or q.causes_said
        ]
        return {"checks": checks, "causes": causes, "feedback": first, "flags": dict(self.flags)}


def markdown_lines(lines: Sequence[str]) -> str:
    """Feedback lines as Gradescope Markdown: one paragraph each, every line escaped
    (`text.markdown`), a question's summary (`text.Strong`) in bold, a counterexample's
    lines (`text.Code`) together in one fenced code block (monospace, literal)."""
    out: list[str] = []
    code: list[str] = []
    for line in lines:
        if isinstance(line, Code):
            code.append(one_line(line, MAX_LINE_CHARS + 100))
            continue
        if code:
            out.append(fenced(code))
            code = []
        md = markdown(line, MAX_LINE_CHARS + 100)
        out.append(f"**{md}**" if isinstance(line, Strong) else md)
    if code:
        out.append(fenced(code))
    return "\n\n".join(out)


def provided_source(assignment: str) -> str:
    """The reference source of the functions an assignment provides to students."""
    module = importlib.import_module(f"autograder.private.solutions.{assignment}")
    names = getattr(module, "PROVIDED", ())
    parts = [inspect.getsource(getattr(module, n)) for n in names]
    return PROVIDED_PRELUDE + "\n\n".join(parts) if parts else ""


def provided_names(assignment: str) -> tuple[str, ...]:
    return tuple(getattr(importlib.import_module(f"autograder.private.solutions.{assignment}"), "PROVIDED", ()))


class KitPlugin:
    """Gives the suites their fixtures and records each test's outcome."""

    def __init__(self, remote: Remote, submission: Submission, cfg: config_mod.Config, assignment: str) -> None:
        # (no attribute may share a fixture's name: pytest reads fixtures off this object)
        self._remote = remote
        self._submission = submission
        self._cfg = cfg
        # The suites' one source of settings (read by suites/conftest.py: collection, evidence
        # marks; the `cfg` fixture the checks pass on): the cfg scoring uses, never a grading.yml of the working folder.
        self.kit_cfg = cfg
        self._assignment = assignment
        self.outcomes: list[TestOutcome] = []
        self.internal_errors: list[str] = []
        # (outcome index, "counterexample" | "explain", the look): `second_looks` runs them
        self._looks: list[tuple[int, str, Callable[[], object]]] = []

    @pytest.fixture
    def sub(self) -> Remote:
        return self._remote

    @pytest.fixture
    def cfg(self) -> config_mod.Config:
        return self._cfg

    @pytest.fixture
    def cells(self) -> list[Cell]:
        return self._submission.cells

    @pytest.fixture
    def provided(self) -> tuple[str, ...]:
        return provided_names(self._assignment)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        """A suite file that cannot be collected (a syntax error, a failed import) is the kit's
        fault: the staff is told which file and why, never a quiet zero."""
        if report.failed:
            self.internal_errors.append(
                f"{report.nodeid or 'suites'}: cannot be collected: {report.longreprtext[-2000:]}"
            )

    def pytest_internalerror(self, excrepr: object, excinfo: object) -> None:
        self.internal_errors.append(f"pytest internal error: {str(excrepr)[-2000:]}")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Function, call: pytest.CallInfo[None]
    ) -> Generator[None, Any, None]:
        outcome = yield
        report = outcome.get_result()
        if report.when == "teardown" and report.failed:  # a fixture's clean-up: the kit's own code
            self.internal_errors.append(f"{item.nodeid} (teardown): {report.longreprtext[-2000:]}")
            return
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            question = item.module.QUESTION  # every collected module has one (pytest_collection_modifyitems)
            case = item.callspec.id if hasattr(item, "callspec") else ""
            mark = item.get_closest_marker("weight")
            weight = float(mark.args[0]) if mark is not None and mark.args else None
            passed = report.outcome == "passed"
            message = ""
            cause: Msg | None = None
            form = False
            kind = compared = ""
            if not passed:
                exc = call.excinfo
                # a suite fails a check with a Failure (its parts, never a text to split); anything
                # else, a bare pytest.fail included, is the kit's own fault
                if exc is not None and isinstance(exc.value, Failure):
                    message, cause = exc.value.symptom, exc.value.cause
                    for kind in ("counterexample", "explain"):  # second looks: run once no verdict call is left
                        look = getattr(exc.value, kind, None)
                        if callable(look):
                            self._looks.append((len(self.outcomes), kind, look))
                    form = exc.value.form  # suites' failing.fail_form
                    kind = exc.value.kind  # suites' calls.call_failed: the error, whatever the call
                    compared = exc.value.compared  # suites' value_checks: a comparison with the reference
                else:
                    # The kit's own error (a suite's, a stand-in's, the machine's): tell the student nothing
                    # hidden. One the kit raised itself says what failed; any other, its traceback.
                    kit = exc.value if exc is not None and isinstance(exc.value, KitFault) else None
                    said = f"{type(kit).__name__}: {kit}" if kit is not None else report.longreprtext[-2000:]
                    self.internal_errors.append(f"{item.nodeid}: {said}")
                    message = t("internal_error")
            self.outcomes.append(
                TestOutcome(
                    question,
                    item.originalname,
                    case,
                    passed,
                    message,
                    cause=cause,
                    evidence=item.get_closest_marker("evidence") is not None,
                    weight=weight,
                    prop=item.get_closest_marker("property") is not None,
                    form=form,
                    kind=kind,
                    compared=compared,
                )
            )

    def second_looks(self) -> None:
        """Run the failures' second looks at the student's code (a counterexample search, a
        likely cause's call), in the order of their checks, once no verdict call is left
        (`Remote.end_verdicts`): what they tell the student's code reaches no score. A look
        gives a failure its counterexample (a `counterexample.Shown`), or its symptom with the cause it
        found (a `Said`)."""
        self._remote.end_verdicts()
        for index, kind, look in self._looks:
            try:
                found = look()
            except Exception as exc:  # noqa: BLE001 - the kit's own code: reported to the staff, never hidden
                self.internal_errors.append(f"{self.outcomes[index].test} ({kind}): {type(exc).__name__}: {exc}")
                continue
            if kind == "explain" and isinstance(found, Said):
                self.outcomes[index] = replace(self.outcomes[index], message=found.symptom, cause=found.cause)
            elif kind == "counterexample" and isinstance(found, Shown):
                self.outcomes[index] = replace(self.outcomes[index], counterexample=found)
            elif found is not None:  # a look of the kit's own that answered something else
                what = f"{type(found).__name__}, not {'a Said' if kind == 'explain' else 'a counterexample.Shown'}"
                self.internal_errors.append(f"{self.outcomes[index].test} ({kind}): {what}")

    def pytest_collection_modifyitems(self, items: list[pytest.Function]) -> None:
        """Every test module names its question (`QUESTION`), one of its
        assignment's: a module that does not is a kit bug, reported to the
        staff, never silently dropped or scored elsewhere."""
        known = set(self._cfg.questions(self._assignment))
        keep: list[pytest.Function] = []
        for item in items:
            question = getattr(item.module, "QUESTION", None)
            if question not in known:
                self.internal_errors.append(
                    f"{item.nodeid}: its module's QUESTION is {question!r}, not one of {sorted(known)}"
                )
                continue
            keep.append(item)
        items[:] = keep


def _run_suites(
    plugin: KitPlugin, assignment: str, extra_args: Sequence[str] = ()
) -> tuple[int | pytest.ExitCode, str]:
    args = [
        # unraisableexception/threadexception: their clean-up runs gc.collect five times (~0.2 s a submission)
        str(ASSIGNMENTS / assignment),
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:randomly",
        "-p",
        "no:unraisableexception",
        "-p",
        "no:threadexception",
        "--import-mode=importlib",
        "--rootdir",
        str(ASSIGNMENTS),
        "-c",
        str(SUITES / "pytest.ini"),
        # pytest loads a conftest.py only beside the ini file or below it, and the assignments'
        # folders are not below the shared library's: its conftest.py is named as a plugin
        "-p",
        SUITES_PLUGIN,
        # an assignment's catalog (the audit's variants, read as text) sits in its folder: no suite
        "-o",
        f"norecursedirs={layout.CATALOG_FOLDER} .* __pycache__",
        "--no-header",
        "-o",
        "console_output_style=classic",
        # the suites hold no `assert` (a kit test keeps it so): rewriting them cost ~1.9 s a submission
        "--assert=plain",
        # pytest's log capture (~45 handlers added and removed a test) and its per-test capture
        # files: the suites log nothing, and what they print is thrown away (`sink`)
        "-p",
        "no:logging",
        "--capture=sys",
        *extra_args,
    ]
    import contextlib
    import io
    import os

    sink = io.StringIO()
    # No plugin from the environment (hypothesis's alone imported itself for ~2 s a submission):
    # the suites need only this one and pytest's own.
    autoload = os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    try:
        with contextlib.redirect_stdout(sink):
            code = pytest.main(args, plugins=[plugin])
    finally:
        if autoload is None:
            os.environ.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
        else:
            os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = autoload
    return code, sink.getvalue()


def _forget_suites() -> None:
    """Drop the suites' modules from sys.modules after a run with a grader fault: a
    module that failed to import stays there half made (pytest's importlib mode), and the
    next submission graded in this process would collect it empty, without an error.
    Only the assignments' suites: their shared library (`SUITES`: its modules, the
    conftest plugin) is imported as any package is, never half made, and dropping it made
    a second copy of a module beside the first (the next run's suites read one, its cfg and
    whatever holds the other, such as a planted fault, stayed on the first)."""
    import sys

    root = str(ASSIGNMENTS.resolve())
    for mod_name, mod in list(sys.modules.items()):
        path = getattr(mod, "__file__", None)
        if isinstance(path, str) and path.startswith(root):
            del sys.modules[mod_name]


def notebook_language(submission: Submission) -> str | None:
    """The edition a notebook came from (its metadata's `kit_language`), or None."""
    meta = submission.notebook.get("metadata") if isinstance(submission.notebook, dict) else None
    lang = meta.get("kit_language") if isinstance(meta, dict) else None
    try:
        return messages.normalize(lang) if lang else None
    except messages.MessageError:
        return None


def grade(
    path: str | Path,
    assignment: str | None = None,
    cfg: config_mod.Config | None = None,
    pytest_args: Sequence[str] = (),
    forkserver: "ForkServer | None" = None,
    lang: str | None = None,
    keep_public: bool = False,
) -> GradeResult:
    """Grade one notebook or export zip; never raises for a bad submission.
    `keep_public`: also run the notebook's public checks after the last verdict, in the
    same worker, and keep the failing ones as data (`GradeResult.public_failed`).

    The feedback is in `lang` when given, else in the language of the edition
    the notebook came from, else $KIT_LANG, else grading.yml's `language`; the
    scores are the same in every language."""
    cfg = cfg or config_mod.load()
    lang = messages.normalize(lang) if lang else None
    start = time.monotonic()
    _reset_peak_memory()
    known = cfg.assignments
    try:
        submission = load_submission(path, known, cfg=cfg)
    except SubmissionError as exc:
        lang = lang or messages.default(cfg)
        with messages.language(lang):
            name = assignment if assignment in known else None
            reason = one_line(exc, 300)
            questions = {
                n: QuestionResult(n, float(p), 0.0, [line], ungraded=line)
                for line in [t("not_graded_line", reason=reason)]
                for n, p in (cfg.questions(name).items() if name else [])
            }
            result = GradeResult(
                Path(path),
                name,
                questions,
                [t("not_graded_note", reason=reason)],
                time.monotonic() - start,
                language=lang,
                status="not_graded",
            )
            result.flags = {"not_graded": reason}
        result.judge_peak_mb = _peak_memory_mb()
        return result
    lang = lang or notebook_language(submission) or messages.default(cfg)
    with messages.language(lang):
        result = _grade(path, submission, assignment, cfg, pytest_args, forkserver, start, keep_public)
    result.language = lang
    return result


def _grade(
    path: str | Path,
    submission: Submission,
    assignment: str | None,
    cfg: config_mod.Config,
    pytest_args: Sequence[str],
    forkserver: "ForkServer | None",
    start: float,
    keep_public: bool = False,
) -> GradeResult:
    known: list[str] = cfg.assignments
    # Without an assignment given, the notebook's code decides (its metadata is the student's to edit).
    name = assignment or detect.detect(submission, cfg)
    if name not in known:
        note = t(
            "not_graded_note",
            reason=t("unknown_assignment", name=one_line(Path(path).name, 120), known=", ".join(known)),
        )
        return GradeResult(Path(path), None, {}, [note], time.monotonic() - start, status="not_graded")
    own = forkserver is None
    # one submission on its own (gradescope, ci): a fork server of its own, prestarted if the command did
    if forkserver is None:
        from autograder.sandbox.forkserver import ForkServer

        forkserver = ForkServer()
    if declarations.run(name) is not None:  # its workers train: the server loads what a step imports
        forkserver.warm_training()
    stand_in = StandIn(name, cfg)
    remote = Remote(
        submission, provided_source(name), Limits.from_config(cfg.limits), forkserver=forkserver, stand_in=stand_in
    )
    plugin = KitPlugin(remote, submission, cfg, name)
    terms = release.course_terms(cfg.data, name, cfg.questions(name))
    public, ran = None, None
    try:
        code, _ = _run_suites(plugin, name, pytest_args)
        plugin.second_looks()
        if release.needs_public(terms) or keep_public:  # shown, never scored: after the last verdict call
            try:
                ran = _run_public(remote, submission)
                public = _public_checks(ran, submission)
            except Exception as exc:  # noqa: BLE001 - the kit's own code, or the machine: reported to the staff
                plugin.internal_errors.append(f"the public checks: {type(exc).__name__}: {exc}")
    finally:
        remote.close()
        if own:
            forkserver.close()
    # pytest's own verdict on the run: 0 (all passed) and 1 (some failed) are the student's;
    # anything else (interrupted by a collection error, an internal or usage error, no test
    # collected) is the kit's, even where no hook above saw why.
    if int(code) not in (0, 1) and not plugin.internal_errors:
        plugin.internal_errors.append(
            f"pytest exited with status {int(code)} ({getattr(code, 'name', code)}) on the {name} suites"
        )
    if plugin.internal_errors:
        _forget_suites()
    questions = scoring.score(cfg, name, plugin.outcomes, kit_fault=bool(plugin.internal_errors))
    scoring.note_stand_ins(questions, stand_in.used)
    form_causes.name_causes(questions, submission.form)
    notes = [t("internal_error_note", n=len(plugin.internal_errors))] if plugin.internal_errors else []
    meta = detect.metadata(submission, cfg)
    if meta and meta != name:
        notes.append(t("metadata_note", meta=meta, name=name))
    if remote.load_failure:
        notes.append(t("not_run", reason=remote.load_failure))
    if remote.over_budget:
        notes.append(t("stopped_early", reason=remote.over_budget))
    notes += [t("note", text=one_line(e, MAX_LINE_CHARS)) for e in remote.cell_errors[:10]]
    notes += [t("note", text=one_line(n, MAX_LINE_CHARS)) for n in list(remote.notes.values())[:10]]
    result = GradeResult(
        Path(path),
        name,
        questions,
        notes,
        time.monotonic() - start,
        remote.peak_mb,
        status="internal_error" if plugin.internal_errors else "graded",
    )
    result.flags = {
        k: v
        for k, v in {
            "metadata_assignment": meta if meta and meta != name else None,
            "not_run": remote.load_failure,
            "over_budget": remote.over_budget,
            "skipped_cells": len(remote.skipped),
            "cell_errors": len(remote.cell_errors),
            "notes": len(remote.notes),
            "stand_ins": sorted({n for names in stand_in.used.values() for n in names}),
            # nothing scored and no graded part written: the template as it came (the report lists it)
            "untouched": not result.score and detect.untouched(submission, name, cfg),
        }.items()
        if v
    }
    if result.status == "graded":  # a grader fault is said at once, whatever the terms
        result.terms, result.public = terms, public
    if keep_public:
        result.public_failed = public_failed(ran)
    result.judge_peak_mb = _peak_memory_mb()
    result.internal_errors = plugin.internal_errors
    result.outcomes = plugin.outcomes
    return result


def _run_public(remote: Remote, submission: Submission) -> list[Any] | str:
    """The notebook's own public checks (its otter metadata, what `grader.check` runs), run
    beside its code in the submission's worker: the worker's results, or why they could not
    run. They earn nothing; a student reads them before the deadline."""
    from autograder.judge import public_checks

    tests = public_checks.public_tests(submission.notebook)
    if not tests:
        return []
    try:
        return remote.public(tests)
    except WorkerDied as exc:  # a dead worker: the student is told why, the score stands
        return one_line(exc.reason, 300)


def _public_checks(
    ran: list[Any] | str, submission: Submission
) -> dict[str, tuple[int, int, list[tuple[str, str]]]] | str:
    """What the feedback shows of the public checks that ran (`_run_public`): {question:
    (passed, total, [(case, error)])}, or why they could not run."""
    from autograder.judge import public_checks

    if isinstance(ran, str):
        return ran
    rows = public_checks.report(ran, submission)
    return {question: (passed, total, errors) for question, _, passed, total, errors in rows}


def public_failed(ran: list[Any] | str | None) -> list[str]:
    """The failing public checks of a run (`_run_public`) as `check` counts them, the form's
    costs aside: ["question/case"] ([] when every one passes), or one line why none ran (the
    audit's column, `audit.public.failures`'s format)."""
    from autograder.judge import public_checks

    if ran is None:
        return ["(not run: the kit's own error, see internal_errors)"]
    if isinstance(ran, str):
        return [f"(not run: WorkerDied: {ran[:200]})"]
    rows = public_checks.report(ran)
    if not rows:
        return ["(no public tests ran)"]
    return [f"{question}/{case}" for question, _, _, _, errors in rows for case, _ in errors]
