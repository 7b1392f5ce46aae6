"""What `grader.check` and `grader.export()` print in a student notebook: the kit's own
words in the edition's language, never otter's English frame.

otter frames a failing case in English ("Test case failed", "Error at line 42 in test
...", the assertion's source line, "results:") and its export answers "Your submission has
been exported"; no setting of otter's quiets either. The init cell's `grader` runs otter's
tests (otter's own reader where otter-grader is installed) and shows each failing case with
the kit's message alone. Here with real otter-grader, the notebook in a Jupyter kernel."""

import ast
import re
import zipfile

import pytest

from autograder import messages
from autograder.build import texts

pytestmark = pytest.mark.slow  # a kernel

ASSIGNMENT = "scaled_dot_product"
# Everything otter writes around a check's result or an export (otter 7's ExceptionTestFile,
# TestFile._repr_html_/summary, GradingResults and Notebook.export).
OTTER_FRAME = (
    "Test case failed",
    "Test case passed",
    "Error at line",
    "in test ",
    "results:",
    "result:",
    "All test cases passed",
    "passed!",
    "Your submission has been exported",
    "Click",
)


def cell_text(cell):
    """What a cell shows: its printed text, and its displayed objects as text and as HTML."""
    data = [o.get("data", {}) for o in cell.outputs]
    return "".join(o.get("text", "") for o in cell.outputs) + "".join(
        d.get("text/plain", "") + d.get("text/html", "") for d in data
    )


def checks(run):
    """{question: what its `grader.check("question")` cell printed}."""
    found = {}
    for cell in run.cells:
        m = re.fullmatch(r'grader\.check\("(\w+)"\)\s*', cell.source) if cell.cell_type == "code" else None
        if m:
            found[m.group(1)] = cell_text(cell)
    return found


def public_messages(nb, question):
    """The MESSAGES templates of `question`'s public test cases, their {fields} cut out: the
    fixed pieces of text a failing case may show."""
    pieces = []
    for literal in re.findall(r"MESSAGES = (\{.*\})", nb["metadata"]["otter"]["tests"][question]):
        for said in ast.literal_eval(literal).values():
            pieces += [p for p in re.split(r"\{[^{}]*\}", said) if len(p.strip()) >= 12]
    return pieces


def test_a_failing_check_shows_the_kits_message_without_otters_frame_or_the_assertion(ptbr_buggy_run):
    nb, _, run = ptbr_buggy_run
    first = "".join(o.get("text", "") + o.get("evalue", "") for o in run.cells[0].outputs)
    assert not first, first  # otter's own set-up ran, silently
    shown = checks(run)
    failed = shown["causal_mask"]
    header = texts.get("init_failed", "pt-BR").split("{k}")[0].format(question="causal_mask")
    assert failed.startswith(header) or header in failed, failed
    assert any(piece in failed for piece in public_messages(nb, "causal_mask")), failed
    assert "test_causal_mask_small" in failed  # the case's name, as the kit names it
    for frame in OTTER_FRAME:
        assert frame not in failed, (frame, failed)
    # no line of the test's own source (otter prints the failing line, `assert torch.equal(...)`)
    assert "assert " not in failed and "MESSAGES[" not in failed and "AssertionError" not in failed, failed
    typed = shown["by_hand"]
    operator = messages.catalog()["by_hand_operator"]["pt-BR"].split("{")[-1].split("}", 1)[1][:40]
    assert "test_by_hand_as_graded: " in typed and operator in typed, (operator, typed)
    passed = texts.get("init_passed", "pt-BR").split("(")[0].format(question="padding_mask").strip()
    assert passed in shown["padding_mask"], shown["padding_mask"]
    for text in shown.values():
        assert not any(frame in text for frame in OTTER_FRAME), text


def test_check_all_speaks_the_edition_and_otter_ran_the_tests(ptbr_buggy_run):
    _, _, run = ptbr_buggy_run
    report = cell_text(next(c for c in run.cells if c.cell_type == "code" and "grader.check_all()" in c.source))
    assert report.count(" falhou em ") == 2 and report.count(" passou (") == 2, report
    assert not any(frame in report for frame in OTTER_FRAME), report


def test_export_answers_in_the_edition_and_writes_otters_zip(ptbr_buggy_run):
    _, folder, run = ptbr_buggy_run
    cell = next(c for c in run.cells if c.cell_type == "code" and "grader.export(" in c.source)
    shown = cell_text(cell)
    assert texts.get("init_exported", "pt-BR") in shown, shown
    assert not any(frame in shown for frame in OTTER_FRAME), shown
    zips = sorted(folder.glob(f"{ASSIGNMENT}_*.zip"))
    assert len(zips) == 1 and zips[0].name in shown
    with zipfile.ZipFile(zips[0]) as zf:
        assert f"{ASSIGNMENT}.ipynb" in zf.namelist()
