"""What passes in the notebook passes in the grader: every way a submission loses a question for
how it is written (a package the grader lacks, a `!pip` line, a typed answer's form, a name only
a later cell defines) fails the notebook's public check the same way, with the words the grade
names as its likely cause. Each case is a correct notebook written one such way, held against
three sides: the public checks as otter runs them in the student's kernel (real otter-grader, the
student's names run as the kernel ran them), `check` (the public checks in the sandboxed worker)
and a real grade."""

import copy
import json
import sys
import types

import pytest

from autograder import messages
from autograder.judge import form as written
from autograder.judge.notebook import load_submission
from conftest import EDITIONS, ROOT, code_cell, grade, process_forkserver, template

pytestmark = pytest.mark.slow  # a real grade and a worker per case

ASSIGNMENT = "scaled_dot_product"
SDPA = "scaled_dot_product_attention"
TRANSPOSE = "key.transpose(-2, -1)"
REARRANGE = 'einops.rearrange(key, "... t d -> ... d t")'


def _reference(lang):
    """The edition's student notebook with the reference's answers in it."""
    from autograder.audit.catalog import fill_reference

    return fill_reference(template(ASSIGNMENT, lang), ASSIGNMENT)


def _cell(nb, start):
    return next(c for c in nb["cells"] if "".join(c["source"]).startswith(start))


def _source(cell):
    return "".join(cell["source"])


def extra_package(nb):
    cell = _cell(nb, f"def {SDPA}")
    cell["source"] = "import einops\n\n" + _source(cell).replace(TRANSPOSE, REARRANGE)
    return SDPA, "form_package"


def package_the_grader_holds(nb):
    """A package that happens to be installed where the kit runs (PyYAML, a dependency of the
    kit) is still not one the notebook may use: the worker refuses it as the checks do."""
    cell = _cell(nb, f"def {SDPA}")
    cell["source"] = "import yaml\n\n" + _source(cell)
    return SDPA, "form_package"


def pip_line(nb):
    cell = _cell(nb, f"def {SDPA}")
    cell["source"] = _source(cell).replace(TRANSPOSE, REARRANGE)
    nb["cells"].insert(nb["cells"].index(cell), code_cell("!pip install einops\nimport einops\n"))
    return SDPA, "form_package_installed"


def typed_expression(nb):
    cell = _cell(nb, "# kit-by-hand")
    assert "0.0454" in _source(cell)
    cell["source"] = _source(cell).replace("0.0454", "1/22.03")  # the same number, as arithmetic
    return "by_hand", "by_hand_operator"


def later_name(nb):
    cell = _cell(nb, f"def {SDPA}")
    cell["source"] = "SCALE = scale_of\n\n" + _source(cell).replace("math.sqrt(d_k)", "SCALE(d_k)")
    nb["cells"].insert(nb["cells"].index(cell) + 2, code_cell("def scale_of(d_k):\n    return math.sqrt(d_k)\n"))
    return SDPA, "form_later_name"


CASES = {f.__name__: f for f in (extra_package, package_the_grader_holds, pip_line, typed_expression, later_name)}


def _einops_stand_in(monkeypatch):
    """The package as the student's own machine has it (the grader's has none)."""
    import torch

    module = types.ModuleType("einops")
    module.rearrange = lambda t, pattern: torch.transpose(t, -2, -1)
    monkeypatch.setitem(sys.modules, "einops", module)


def _kernel_env(nb, monkeypatch):
    """The notebook's names as the student's kernel holds them: every code cell run, shell
    lines by the kernel (einops is installed there), the later cell first (as the student ran it)."""
    import builtins

    _einops_stand_in(monkeypatch)
    env = {"__name__": "__main__", "__builtins__": builtins}
    cells = [_source(c) for c in nb["cells"] if c["cell_type"] == "code"]
    cells = [c for c in cells if c.startswith("def scale_of")] + cells  # run out of order, as the student did
    for src in cells:
        if "otter.Notebook(" in src or "grader." in src:
            continue  # the set-up cell and otter's (the test puts the kernel's grader in env)
        lines = [line for line in src.split("\n") if not line.lstrip().startswith(("!", "%"))]
        exec("\n".join(lines), env)  # the by-hand cell's arithmetic too, as the kernel runs it
    return env


@pytest.mark.parametrize("lang", EDITIONS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_public_check_and_the_grade_agree_with_the_named_cause(case, lang, tmp_path, monkeypatch):
    import otter

    from autograder.check import run_checks
    from autograder.judge.public_checks import report

    nb = _reference(lang)
    question, key = CASES[case](nb)
    path = tmp_path / f"{case}.ipynb"
    path.write_text(json.dumps(nb))

    sub = load_submission(path, [ASSIGNMENT])
    parts = _expected(sub, question, key, lang)

    # the grade: the question loses its points, and names the cause
    result = grade(path)
    q = result.questions[question]
    assert q.score < q.max_score, (case, q.lines)
    assert all(any(part in line for line in q.lines) for part in parts), (parts, q.lines)
    assert all(other.score == other.max_score for name, other in result.questions.items() if name != question), {
        n: o.lines[:3] for n, o in result.questions.items()
    }

    # `check`: the public checks in the worker fail the question with the same words
    checked, _, results = run_checks(path, forkserver=process_forkserver())
    with messages.language(lang):
        rows = {row[0]: row for row in report(results, checked)}
    assert not rows[question][1], rows[question]
    assert any(all(part in error for part in parts) for _, error in rows[question][4]), (parts, rows[question])
    assert all(row[1] for name, row in rows.items() if name != question), rows

    # the notebook: otter's grader.check in the kernel the student wrote it in
    env = _kernel_env(copy.deepcopy(nb), monkeypatch)
    monkeypatch.chdir(tmp_path)
    env["grader"] = grader = otter.Notebook(path.name)  # the set-up cell's, as the kernel holds it
    shown = grader.check(question, global_env=env)
    assert shown.grade < 1, repr(shown)
    assert all(part in repr(shown) for part in parts), (parts, repr(shown))
    for other in rows:
        if other != question:
            assert grader.check(other, global_env=env).grade == 1, (other, repr(grader.check(other, global_env=env)))


def _expected(sub, question, key, lang):
    """What each side must say for the case, in the edition's words: the form
    finding's text; a typed answer's failure and its likely cause (the grade shows them on two
    lines, the public checks on one)."""
    from autograder.judge import form_causes

    with messages.language(lang):
        if key.startswith("form_"):
            found = [f for f in sub.form if f["key"] == key]
            assert found, (key, sub.form)
            return [form_causes.text(found[0])]
        line = form_causes.typed_problem(question, sub.by_hand)
        assert line and messages.t(key, line=4) in line, line
        return [part.strip() for part in line.split(messages.t("cause_marker"))]


def test_the_form_module_finds_nothing_in_the_kit_s_own_notebooks():
    """The student notebooks as built and the reference examples: no finding (a false one would
    fail a correct notebook's public check)."""
    paths = sorted((ROOT / "student_template").glob("*/*.ipynb")) + sorted(
        (ROOT / "examples/submissions").glob("*/*.ipynb")
    )
    for path in paths:
        nb = json.loads(path.read_text())
        cells = [(i, f"#{i}", _source(c)) for i, c in enumerate(nb["cells"], 1) if c["cell_type"] == "code"]
        assert written.findings(cells) == [], path
