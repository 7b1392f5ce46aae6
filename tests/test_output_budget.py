"""Budgets belong to what they measure: what the cells print while the grader loads the
notebook costs no graded call, and each call prints within the whole output budget
(limits.output_bytes) whatever came before it. Real workers, a real grade."""

import json
from pathlib import Path

import pytest
import torch

from autograder.judge.notebook import Cell, Submission
from autograder.judge.remote import Remote
from conftest import ROOT, grade, limits

pytestmark = pytest.mark.slow  # real workers (a load that prints megabytes), a real grade

CAP = 200_000  # limits.output_bytes for the sandbox cases: small, so a loop passes it quickly
LOADING = f"""
import os
for step in range(200):
    print(step, "x" * {CAP // 50})  # 200 prints: 4 times the budget, through print
os.write(1, b"y" * {CAP // 2})  # half of it written to the file itself
"""
CODE = f"""
import os
def chatty(x):
    print("z" * {CAP * 3 // 4})  # three quarters of the budget, every call
    return x * 2
def flood(x):
    print("w" * {CAP * 2})  # more than the whole budget in one call
    return x
def writes(x):
    os.write(1, b"v" * {CAP * 3 // 4})
    return x + 1
"""
AFTER = f"""
os.write(1, b"u" * {CAP * 3 // 4})  # a later cell's own writes have the whole budget too
after = True
"""


@pytest.fixture(scope="module")
def remote(forkserver):
    cells = [Cell(i, src, src) for i, src in enumerate((LOADING, CODE, AFTER), start=1)]
    r = Remote(
        Submission(Path("inline.ipynb"), {}, cells),
        "",
        limits(cpu_seconds_per_call=5, load_seconds=30, output_bytes=CAP),
        forkserver=forkserver,
    )
    yield r
    r.close()


def test_loading_prints_cost_no_cell_and_no_call(remote):
    x = torch.arange(3.0)
    for _ in range(4):  # each call prints 3/4 of the budget: together three times over it
        reply = remote.call("chatty", [x])
        assert reply.ok, reply.error
        assert torch.equal(reply.value, x * 2)
        reply = remote.call("writes", [x])
        assert reply.ok, reply.error
    assert remote.cell_errors == []  # the loading cells ran to their end, the third one included


def test_a_call_still_has_a_budget_of_its_own(remote):
    reply = remote.call("flood", [torch.arange(3.0)])
    assert not reply.ok
    assert f"printed more than the {CAP}-byte output limit" in reply.error, reply.error
    remote.dead.pop("flood", None)
    assert remote.call("chatty", [torch.arange(3.0)]).ok  # and the next call has the whole budget again


def _scratch_notebook(tmp_path):
    """The correct scaled_dot_product example with a debugging print in the graded function
    and a scratch cell printing tensors in a 200-step loop (over 1 MB: the default limit)."""
    nb = json.loads((ROOT / "examples/submissions/scaled_dot_product/reference.ipynb").read_text())
    cells = nb["cells"]
    for cell in cells:
        src = "".join(cell["source"])
        if src.startswith("def scaled_dot_product_attention"):
            head, sep, body = src.partition('    """\n    d_k')
            assert sep, "the example's function no longer reads as this test expects"
            cell["source"] = head + '    """\n    print("scores", query @ key.transpose(-2, -1))\n    d_k' + body
    at = next(i for i, c in enumerate(cells) if "".join(c["source"]).startswith("def scaled_dot_product_attention"))
    scratch = (
        "x = torch.randn(8, 16, 16)\n"
        "for step in range(200):\n"
        "    out, w = scaled_dot_product_attention(x, x, x)\n"
        "    print(step, out, w)\n"
    )
    cells.insert(
        at + 2, {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": scratch}
    )
    path = tmp_path / "scratch_print.ipynb"
    path.write_text(json.dumps(nb))
    return path


def test_a_correct_notebook_with_a_printing_scratch_cell_scores_full_marks(tmp_path):
    result = grade(_scratch_notebook(tmp_path))
    assert result.status == "graded"
    assert result.score == result.max_score, {q.name: (q.score, q.lines[:3]) for q in result.questions.values()}
    said = json.dumps(result.to_gradescope())
    assert "output limit" not in said, said[:2000]
