"""Failures as data: a suite fails a check with `judge.failure.Failure` (its symptom and its
likely cause's catalog key and fields), the judge records the parts, and every text is
rendered from them where it is shown. Nothing reads a cause back out of rendered words: a
cause is the same key in every language and after its wording changes, words a student's
code prints that look like a cause stay words, and a check that fails with bare text is the
kit's fault, not the student's."""

import ast
import io
import itertools
import json
import re
from pathlib import Path

import pytest

from autograder import ci, config, messages
from autograder.audit import run as audit_run
from autograder.audit.catalog import Entry
from autograder.judge import GradeResult, scoring
from autograder.judge.failure import Failure, Msg, Said
from autograder.judge.remote import Reply, _error_line, raised_type
from autograder.judge.scoring import TestOutcome
from autograder.private.suites import calls, failing
from autograder.report import load, stats, words
from autograder.text import one_line
from conftest import ROOT, grade, suite_skeleton

CFG = config.load(ROOT / "grading.yml")
REFERENCE = ROOT / "examples/submissions/scaled_dot_product/reference.ipynb"
FAKE = "grade me full marks"  # what a student's own error message says, dressed as a cause

# Checks that fail with a likely cause, one with student words holding the marker in every language.
CAUSED_SUITE = f"""
from autograder.judge.failure import Msg
from autograder.messages import LANGUAGES, t
from autograder.private.suites import calls, failing

QUESTION = "causal_mask"


def test_values(sub):
    failing.fail(failing.caused("causal_mask(4) -> mask: 3 of 16 entries differ.", Msg("cause_mask_ignored")))


def test_error_contract(sub):
    words = " ".join(f"{{t('cause_marker', lang)}} {FAKE}" for lang in LANGUAGES)
    failing.fail(calls.with_cause(f"raised ValueError: {{words}}", frame=calls.after("causal_mask(0)")))
"""

WORDS_ONLY_SUITE = """
import pytest

QUESTION = "causal_mask"


def test_values(sub):
    pytest.fail("causal_mask(4) -> mask: wrong. Likely cause: a cause that is only words", pytrace=False)
"""


def test_a_cause_is_data_that_never_becomes_text():
    """The mechanism: a `Msg` (and a symptom with its cause) refuses to be formatted into a
    sentence, and a check cannot give a cause as words; so no cause reaches a text to be
    split again, whichever helper a suite calls."""
    cause = Msg("cause_mask_ignored")
    with pytest.raises(TypeError):
        str(cause)
    with pytest.raises(TypeError):
        f"symptom. {cause}"  # noqa: B018
    with pytest.raises(TypeError):
        f"{failing.caused('symptom', cause)}"  # noqa: B018
    with pytest.raises(TypeError):
        failing.caused("symptom", messages.t("cause_mask_ignored"))  # a cause given as words
    with pytest.raises(TypeError):
        Said("symptom", "a cause in words")
    with messages.language("pt-BR"):
        assert cause.render() == messages.t("cause_mask_ignored", "pt-BR")
    assert cause.render("en") == messages.t("cause_mask_ignored", "en")
    nested = Msg("cause_python_loop", over=Msg("loop_over_batch"))
    assert nested.render("en") == messages.t("cause_python_loop", "en", over=messages.t("loop_over_batch", "en"))
    with pytest.raises(Failure) as failed:
        failing.fail(failing.caused("symptom.", cause))
    assert (failed.value.symptom, failed.value.cause) == ("symptom. ", cause)


def _graded(tmp_path, monkeypatch, suite, lang, name):
    """The reference graded by one suite file (`name`: a module name of its own, as pytest keeps
    an imported suite module by name)."""
    folder = suite_skeleton(tmp_path / lang, "scaled_dot_product", monkeypatch)
    (folder / "__init__.py").write_text("")
    (folder / f"{name}.py").write_text(suite)
    return grade(REFERENCE, cfg=CFG, lang=lang)


def test_causes_count_by_key_in_every_language_and_after_a_wording_change(tmp_path, monkeypatch):
    results = {lang: _graded(tmp_path, monkeypatch, CAUSED_SUITE, lang, "test_caused") for lang in messages.LANGUAGES}
    for lang, result in results.items():
        assert result.status == "graded", result.internal_errors
        lines = result.questions["causal_mask"].lines
        said = messages.t("cause_marker", lang).rstrip(":")  # how a cause line starts (a failure's: FAIL)
        # one cause, from the data; the student's words that look like one stay in their failure line
        assert [c["key"] for c in result.records()["causes"]] == ["cause_mask_ignored"]
        assert result.records()["causes"][0]["text"] == messages.t("cause_mask_ignored", lang).strip()
        assert sum(line.startswith(said) for line in lines) == 1, lines
        assert any(FAKE in line and line.startswith(messages.t("fail_prefix", lang)) for line in lines), lines
        assert not any(FAKE in line and line.startswith(said) for line in lines), lines

    # the class report counts the cause once per submission, by key, across the two languages
    out = tmp_path / "out"
    for lang, result in results.items():
        (out / lang).mkdir(parents=True)
        (out / lang / "results.json").write_text(json.dumps(result.to_gradescope()))
    folder = load.load(out)
    [found] = stats.cause_stats([s for s in folder.submissions if s.scored], ["causal_mask"])
    assert (found.key, found.count) == ("cause_mask_ignored", 2)

    # the same failures, scored after the catalog rewords the cause: the same key, the new words
    entry = messages.catalog()["cause_mask_ignored"]
    before = dict(entry)
    try:
        entry["en"] = "the mask is never applied (reworded)."
        with messages.language("en"):
            questions = scoring.score(CFG, "scaled_dot_product", results["en"].outcomes)
        again = results["en"]
        again.questions = questions
        [cause] = again.records()["causes"]
        assert (cause["key"], cause["text"]) == ("cause_mask_ignored", "the mask is never applied (reworded).")
        said = questions["causal_mask"].lines[1]
        assert said.startswith("Likely cause") and said.endswith(": the mask is never applied (reworded)."), said
    finally:
        entry.update(before)


def test_a_check_failing_with_bare_words_is_the_kits_fault(tmp_path, monkeypatch):
    """pytest.fail(text) carries no parts to record: the judge reports it to the staff as its
    own fault (internal_error), never scores the student on words it would have to parse."""
    result = _graded(tmp_path, monkeypatch, WORDS_ONLY_SUITE, "en", "test_words_only")
    assert result.status == "internal_error"
    assert any("test_values" in e for e in result.internal_errors), result.internal_errors
    assert not result.records()["causes"]


# -- the readers of a failure: each reads data, none reads a rendered line back ----------------
NONCE = re.compile(r"§\d+§")


def speak_nonce(monkeypatch):
    """A third pseudo-language: every message, each time it is rendered, starts with a new
    number (`§17§Likely cause: ...`), so a reader that finds a line by how a message starts
    (a prefix rendered again, in any language) finds nothing, while one that reads the
    failure's data reads the same. `NONCE.sub("", text)` is the text in the real language."""
    real = messages.catalog()
    count = itertools.count()

    class Nonced(dict):
        def __getitem__(self, lang):
            return f"§{next(count)}§{super().__getitem__(lang)}"

    nonced = {key: Nonced(entry) for key, entry in real.items()}
    monkeypatch.setattr(messages, "catalog", lambda: nonced)


def _scored():
    """A graded result of a few outcomes, scored in English: causal_mask fails with a likely
    cause, padding_mask twice without one, the other questions pass."""
    outcomes = [
        TestOutcome(
            "causal_mask",
            "test_values",
            "",
            False,
            "causal_mask(4) -> mask: 3 of 16 entries differ. ",
            Msg("cause_mask_ignored"),
        ),
        TestOutcome("causal_mask", "test_shapes", "", True),
        TestOutcome("padding_mask", "test_values", "4-2", False, "padding_mask(lengths) -> mask: 2 entries wrong"),
        TestOutcome("padding_mask", "test_values", "5-1", False, "padding_mask(lengths) -> mask: 2 entries wrong"),
        TestOutcome("scaled_dot_product_attention", "test_shapes", "", True),
        TestOutcome("by_hand", "test_answers", "", True),
    ]
    with messages.language("en"):
        questions = scoring.score(CFG, "scaled_dot_product", outcomes)
    return GradeResult(Path("hw.ipynb"), "scaled_dot_product", questions, language="en", outcomes=outcomes)


def _read_by_every_reader(folder):
    """What the ci summary, the audit and the class report make of `_scored()`'s result."""
    result = _scored()
    summary = ci.summary_markdown(result, 3.0)
    data = result.to_gradescope()
    targets = ["causal_mask", "padding_mask"]
    entry = Entry("scaled_dot_product", "bug", ROOT, "", False, targets, targets, False, {})
    rows = audit_run.verdicts([entry], [data], None, CFG)
    audit = io.StringIO()
    audit_run.report(rows, CFG, out=audit)
    (folder / "s1").mkdir(parents=True)
    (folder / "s1" / "results.json").write_text(json.dumps(data))
    loaded = [s for s in load.load(folder).submissions if s.scored]
    causes = [(c.key, c.count, c.questions) for c in stats.cause_stats(loaded, list(result.questions))]
    return summary, audit.getvalue(), causes


def test_the_readers_classify_the_same_in_a_language_whose_words_no_parser_can_predict(tmp_path, monkeypatch):
    """The mechanism closing the class: with every message starting anew each time it is
    rendered, the ci summary, the audit's matrix and figures and the report's causes are the
    real language's, number for number and word for word (once the numbers are taken out)."""
    summary, audit, causes = _read_by_every_reader(tmp_path / "en")
    # what the readers say in the real language: the failed check, its cause, the figures
    row = next(line for line in summary.splitlines() if "`causal_mask`" in line)
    assert "test_values: likely cause: " in row and messages.t("cause_mask_ignored", "en")[:20] in row, row
    padding = "| `padding_mask` | 0 | 2 | test_values\\[4-2, 5-1\\] (2 cases): padding_mask(lengths) -\\> mask: 2"
    assert padding in summary and "| `by_hand` | 2 | 2 |  |" in summary, summary
    assert "likely-cause rate (caught entries whose message offers a likely cause): 1/1" in audit, audit
    assert "causal_mask: test_values: causal_mask(4) -> mask: 3 of 16 entries differ [Likely cause:" in audit, audit
    assert causes == [("cause_mask_ignored", 1, ["causal_mask"])]

    speak_nonce(monkeypatch)
    nonce = _read_by_every_reader(tmp_path / "nonce")
    assert NONCE.search(nonce[0]) and NONCE.search(nonce[1])  # the pseudo-language was in force
    assert (NONCE.sub("", nonce[0]), NONCE.sub("", nonce[1]), nonce[2]) == (summary, audit, causes)


def test_an_error_is_asked_of_by_its_type_never_by_its_words(monkeypatch):
    """A check asks what the student's code raised from the type the worker reported
    (`Reply.raised`), in a language whose words no prefix predicts; words that look like an
    error report (a student's message, a death's reason) are never taken for one."""
    speak_nonce(monkeypatch)
    report = {"type": "ValueError", "message": "raised AssertionError: lançou AssertionError", "where": None}
    reply = Reply(False, error=_error_line(report), raised=raised_type(report))
    assert NONCE.match(reply.error)
    assert calls.raised(reply, "ValueError") and not calls.raised(reply, "AssertionError")
    assert not calls.raised(Reply(False, error="raised ValueError: x"), "ValueError")
    assert not calls.raised(Reply(False, error=reply.error, raised="ValueErrorish"), "ValueError")
    assert raised_type({"type": "OutputLimit", "cap": 100}) is None and raised_type("raised ValueError") is None
    assert raised_type({"type": "x" * 500}) == one_line("x" * 500, 80)

    # explain_errors gives a second look to a failure that reports a raised error, by its data
    def failed(error, raised):
        with pytest.raises(Failure) as caught, failing.explain_errors(lambda: Msg("cause_mask_ignored")):
            calls.call_failed("f(x)", error, hint=False, raised=raised)
        return caught.value

    looked = failed(reply.error, reply.raised)
    assert looked.raised == "ValueError" and looked.again().raised == "ValueError"
    assert looked.explain is not None and looked.explain().cause == Msg("cause_mask_ignored")
    assert failed("raised ValueError: only words", None).explain is None


def test_a_cause_field_that_is_a_message_is_worded_again_from_its_key():
    """The class report words a pt-BR submission's cause in English from the keys results.json
    keeps (`causes[].field_msgs`), never by finding the field's words back in the catalog: a
    field with no key stays as the student read it."""
    cause = Msg("cause_python_loop", over=Msg("loop_over_batch"))
    record = {
        "text": cause.render("pt-BR"),
        "key": cause.key,
        "fields": cause.field_texts("pt-BR"),
        "field_msgs": cause.field_msgs(),
    }
    assert record["field_msgs"] == {"over": {"key": "loop_over_batch", "fields": {}}}

    def worded(record):
        return words.cause_text(
            stats.CauseStats(cause.key, record["text"], 1, 1.0, [], ["s1"], [("pt-BR", "s1", record)]), "en"
        )

    assert worded(record) == cause.render("en")
    without = {k: v for k, v in record.items() if k != "field_msgs"}
    assert worded(without) == messages.t("cause_python_loop", "en", over=messages.t("loop_over_batch", "pt-BR"))


# Modules still finding a message's words in a rendered text, each with what takes it out; the
# list only shrinks (a new reader of rendered words fails the test below). Empty: a failure's
# parts, its likely cause and its counterexample travel as data (`Failure`, `counterexample.Shown`).
STILL_READING_WORDS: set[str] = set()


def _renders(node):
    """Whether an expression holds a call of the catalog (`t(...)`, `messages.t(...)`)."""
    return any(
        isinstance(n, ast.Call) and (getattr(n.func, "id", None) == "t" or getattr(n.func, "attr", None) == "t")
        for n in ast.walk(node)
    )


def test_no_module_reads_a_rendered_message_back():
    """No module of the kit cuts a rendered message apart (`t(...).split/partition/...`) or
    looks for one at the start or end of a line (`line.startswith(t(...))`): what a failure
    says travels as data (`judge.failure`, `QuestionResult.failures`/`causes_said`, the
    results.json records, `Reply.raised`) and is rendered once, where it is shown."""
    cuts = {"split", "rsplit", "partition", "rpartition", "startswith", "endswith", "index", "find", "removeprefix"}
    # the readers of feedback lines the kit had (the tests' own now, `conftest.is_failure_line`)
    line_readers = {"is_failure_line", "is_cause_line", "is_value_failure", "lines_shown", "is_input_line"}
    found = set()
    for path in sorted((ROOT / "autograder").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (getattr(node, "id", None) or getattr(node, "attr", None)) in line_readers:
                found.add(str(path.relative_to(ROOT)))
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in cuts):
                continue
            if _renders(node.func.value) or (
                node.func.attr in ("startswith", "endswith") and any(map(_renders, node.args))
            ):
                found.add(str(path.relative_to(ROOT)))
    assert found <= STILL_READING_WORDS, sorted(found - STILL_READING_WORDS)


def test_the_battery_says_why_from_data(monkeypatch):
    """The hostile battery's one line per case reads results.json's data (the not-graded or
    not-run flag, the feedback record's first failure), whatever words the messages have."""
    from autograder.audit import hostile

    speak_nonce(monkeypatch)
    data = _scored().to_gradescope()
    line = NONCE.sub("", hostile._reason(data))
    assert line == "FAIL test_values: causal_mask(4) -> mask: 3 of 16 entries differ"[:110], line
    data["extra_data"]["flags"] = {"not_graded": "hw.ipynb is not a notebook"}
    assert NONCE.sub("", hostile._reason(data)) == "Not graded: hw.ipynb is not a notebook"
    assert hostile._reason(None) == ""
