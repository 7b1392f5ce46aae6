"""The hostile battery: broken and malicious submissions, each with what the grader must do.

Each case is built from `examples/submissions/<assignment>/reference.ipynb` (a
correct notebook) by replacing or appending cells, or is a raw file. Its
expectation:

    max_score            the total may not exceed this
    questions_keep_full  these questions keep their full points
    questions_zero       these questions score 0
    not_above            name of a control case: no question may score more than
                         it does there (the honest part of the submission)
    reason_contains      one of these strings appears in results.json's messages
    must_not_contain     strings that must not appear anywhere in results.json
    leak_files           kit files (relative to the kit root) whose distinctive
                         lines must not appear in results.json
    gap                  a known hole: shown in the table, never fails the run
    root_only            why the case needs a root judge (uid drop, hidden paths):
                         under a non-root judge it is listed as skipped, not run
                         (README: a non-root worker can read solutions/ and
                         signal the judge, so these would harm the run itself)

Every case must also: write results.json, and not echo the judge's secret
environment marker (`SECRET_ENV`).
"""
import io
import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

KIT_ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = KIT_ROOT / "examples" / "submissions"
SECRET_ENV = ("KIT_HOSTILE_SECRET", "judge-only-7f3a9c1e")
SDP = "scaled_dot_product"
ROOT_WHY = "needs a root judge: otherwise the worker runs as the judge's own user"
SDP_QS = ("causal_mask", "padding_mask", "scaled_dot_product_attention")


@dataclass
class Case:
    name: str
    assignment: str
    what: str
    build: object  # () -> (suffix, bytes)
    expect: dict = field(default_factory=dict)


CASES = []


def case(name, what, assignment=SDP, **expect):
    def register(fn):
        CASES.append(Case(name, assignment, what, fn, expect))
        return fn
    return register


# -- notebook helpers ------------------------------------------------------------
def reference(assignment=SDP, demo=True):
    """The reference notebook; demo=False drops its plotting cell (which calls the
    graded functions while the notebook loads), so a case's behaviour happens in
    the graded call rather than at load time."""
    nb = json.loads((EXAMPLES / assignment / "reference.ipynb").read_text())
    if not demo:
        nb["cells"] = [c for c in nb["cells"] if "demo_x" not in _src(c)]
    return nb


def _src(cell):
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else s


def code_cell(source):
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source}


def replace_function(nb, name, source):
    for cell in nb["cells"]:
        if cell["cell_type"] == "code" and f"def {name}(" in _src(cell):
            cell["source"] = source
            return nb
    raise KeyError(name)


def drop_function(nb, name):
    nb["cells"] = [c for c in nb["cells"] if not (c["cell_type"] == "code" and f"def {name}(" in _src(c))]
    return nb


def append(nb, source):
    nb["cells"].append(code_cell(source))
    return nb


def ipynb(nb):
    return ".ipynb", json.dumps(nb).encode()


def others(*lost):
    return [q for q in SDP_QS if q not in lost]


CORRECT_CAUSAL = "    return torch.ones(seq_len, seq_len, dtype=torch.bool, device=device).tril()\n"
WRONG_FUNCTIONS = {
    "causal_mask": "def causal_mask(seq_len, device=None):\n"
                   "    return torch.zeros(seq_len, seq_len, dtype=torch.bool, device=device)\n",
    "padding_mask": "def padding_mask(lengths, max_len=None):\n"
                    "    n = int(lengths.max()) if max_len is None else max_len\n"
                    "    return torch.zeros(lengths.shape[0], n, dtype=torch.bool, device=lengths.device)\n",
    "scaled_dot_product_attention": (
        "def scaled_dot_product_attention(query, key, value, mask=None):\n"
        "    w = torch.zeros(*query.shape[:-1], key.shape[-2], dtype=query.dtype, device=query.device)\n"
        "    return w @ value, w\n"),
}


def wrong(nb):
    """Every graded function replaced, in place, by one returning zeros of the right shape."""
    for name, source in WRONG_FUNCTIONS.items():
        replace_function(nb, name, source)
    return nb


# -- controls ----------------------------------------------------------------------
@case("reference", "the correct notebook, unchanged (control)", max_score=10, questions_keep_full=list(SDP_QS))
def _():
    return ipynb(reference())


@case("wrong_functions", "all three functions return zeros of the right shape (control)", max_score=9.99)
def _():
    return ipynb(wrong(reference()))


# -- resources ---------------------------------------------------------------------
@case("loop_in_function", "infinite loop inside causal_mask", max_score=8, questions_zero=["causal_mask"],
      questions_keep_full=others("causal_mask"), reason_contains=["CPU time limit", "timed out"])
def _():
    return ipynb(replace_function(reference(demo=False), "causal_mask",
                                  "def causal_mask(seq_len, device=None):\n    while True:\n        pass\n"))


@case("loop_top_level", "infinite loop at top level in an extra cell", max_score=10,
      questions_keep_full=list(SDP_QS), reason_contains=["was skipped"])
def _():
    return ipynb(append(reference(), "while True:\n    pass\n"))


@case("fork_bomb", "fork bomb inside padding_mask", max_score=8, questions_zero=["padding_mask"],
      questions_keep_full=others("padding_mask"), reason_contains=["padding_mask"],
      root_only=ROOT_WHY)
def _():
    return ipynb(replace_function(reference(demo=False), "padding_mask", (
        "def padding_mask(lengths, max_len=None):\n    import os\n    while True:\n"
        "        try:\n            os.fork()\n        except OSError:\n            pass\n")))


@case("alloc_20gb", "a 20 GB allocation inside scaled_dot_product_attention", max_score=4,
      questions_zero=["scaled_dot_product_attention"], questions_keep_full=others("scaled_dot_product_attention"),
      reason_contains=["scaled_dot_product_attention"])
def _():
    return ipynb(replace_function(reference(demo=False), "scaled_dot_product_attention", (
        "def scaled_dot_product_attention(query, key, value, mask=None):\n"
        "    return torch.empty(20 * 2**30, dtype=torch.uint8).fill_(1)\n")))


@case("print_100mb", "100 MB of printed output inside causal_mask", max_score=8, questions_zero=["causal_mask"],
      questions_keep_full=others("causal_mask"), reason_contains=["output limit"])
def _():
    return ipynb(replace_function(reference(demo=False), "causal_mask", (
        "def causal_mask(seq_len, device=None):\n    import sys\n    sys.stdout.write('x' * 100_000_000)\n"
        + CORRECT_CAUSAL)))


@case("runaway_recursion", "unbounded recursion with the recursion limit raised, in padding_mask", max_score=8,
      questions_zero=["padding_mask"], questions_keep_full=others("padding_mask"), reason_contains=["padding_mask"])
def _():
    return ipynb(replace_function(reference(demo=False), "padding_mask", (
        "import sys\nsys.setrecursionlimit(10**7)\n"
        "def padding_mask(lengths, max_len=None):\n    return padding_mask(lengths, max_len) + 1\n")))


@case("segfault", "a segfault via ctypes inside causal_mask", max_score=8, questions_zero=["causal_mask"],
      questions_keep_full=others("causal_mask"), reason_contains=["signal", "SIGSEGV"])
def _():
    return ipynb(replace_function(reference(demo=False), "causal_mask", (
        "def causal_mask(seq_len, device=None):\n    import ctypes\n    ctypes.string_at(0)\n" + CORRECT_CAUSAL)))


@case("os_exit", "os._exit(0) inside scaled_dot_product_attention", max_score=4,
      questions_zero=["scaled_dot_product_attention"], questions_keep_full=others("scaled_dot_product_attention"),
      reason_contains=["exited early"])
def _():
    return ipynb(replace_function(reference(demo=False), "scaled_dot_product_attention", (
        "def scaled_dot_product_attention(query, key, value, mask=None):\n    import os\n    os._exit(0)\n")))


@case("kill_parent", "causal_mask tries to SIGKILL its parent (the judge or fork server), then answers",
      max_score=10, questions_keep_full=list(SDP_QS),
      root_only=ROOT_WHY)
def _():
    return ipynb(replace_function(reference(demo=False), "causal_mask", (
        "def causal_mask(seq_len, device=None):\n    import os\n    try:\n        os.kill(os.getppid(), 9)\n"
        "    except OSError:\n        pass\n" + CORRECT_CAUSAL)))


@case("kill_everything", "padding_mask sends SIGKILL to every process it may signal (kill -1), then returns None", max_score=8,
      questions_zero=["padding_mask"], questions_keep_full=others("padding_mask"), reason_contains=["None"],
      root_only=ROOT_WHY)
def _():
    return ipynb(replace_function(reference(demo=False), "padding_mask", (
        "def padding_mask(lengths, max_len=None):\n    import os\n    os.kill(-1, 9)\n")))


# -- tampering --------------------------------------------------------------------
@case("patch_allclose", "wrong functions, then a last cell patching torch.allclose/equal/Tensor.__eq__ to say True",
      not_above="wrong_functions", max_score=9.99)
def _():
    return ipynb(append(wrong(reference(demo=False)), (
        "torch.allclose = lambda *a, **k: True\ntorch.equal = lambda *a, **k: True\n"
        "torch.testing.assert_close = lambda *a, **k: None\n"
        "torch.Tensor.__eq__ = lambda self, other: torch.ones((), dtype=torch.bool)\n")))


@case("no_check_cells", "every grader.check cell deleted", max_score=10, questions_keep_full=list(SDP_QS))
def _():
    nb = reference()
    nb["cells"] = [c for c in nb["cells"] if "grader.check" not in _src(c)]
    return ipynb(nb)


@case("lying_subclass", "wrong functions returning a Tensor subclass whose __eq__/allclose/equal say True",
      not_above="wrong_functions", max_score=9.99)
def _():
    return ipynb(append(wrong(reference()), '''
class Liar(torch.Tensor):
    def __eq__(self, other):
        return torch.ones((), dtype=torch.bool)
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if getattr(func, "__name__", "") in ("allclose", "equal", "isclose"):
            return True
        return super().__torch_function__(func, types, args, kwargs or {})
_wrong = (causal_mask, padding_mask, scaled_dot_product_attention)
def causal_mask(seq_len, device=None):
    return _wrong[0](seq_len, device).as_subclass(Liar)
def padding_mask(lengths, max_len=None):
    return _wrong[1](lengths, max_len).as_subclass(Liar)
def scaled_dot_product_attention(query, key, value, mask=None):
    o, w = _wrong[2](query, key, value, mask)
    return o.as_subclass(Liar), w.as_subclass(Liar)
'''))


@case("global_torch_state", "correct functions, then a cell setting float64 default dtype, grad mode off, "
      "no other change", max_score=10, questions_keep_full=list(SDP_QS))
def _():
    return ipynb(append(reference(), "torch.set_default_dtype(torch.float64)\ntorch.set_grad_enabled(False)\n"))


@case("fake_banner", "wrong functions plus a cell printing a fake 'All tests passed' banner",
      not_above="wrong_functions", max_score=9.99, must_not_contain=["FAKE-BANNER"])
def _():
    return ipynb(append(wrong(reference()), "print('FAKE-BANNER All tests passed! Score: 10/10')\n"))


# -- wrong return values ------------------------------------------------------------
@case("numpy_return", "causal_mask returns a numpy array with the right values", max_score=8,
      questions_zero=["causal_mask"], questions_keep_full=others("causal_mask"), reason_contains=["numpy"])
def _():
    return ipynb(replace_function(reference(demo=False), "causal_mask", (
        "def causal_mask(seq_len, device=None):\n"
        "    return torch.ones(seq_len, seq_len, dtype=torch.bool).tril().numpy()\n")))


@case("list_return", "padding_mask returns a Python list with the right values", max_score=8,
      questions_zero=["padding_mask"], questions_keep_full=others("padding_mask"), reason_contains=["list"])
def _():
    return ipynb(replace_function(reference(demo=False), "padding_mask", (
        "def padding_mask(lengths, max_len=None):\n    n = int(lengths.max()) if max_len is None else max_len\n"
        "    return (torch.arange(n)[None, :] < lengths[:, None].cpu()).tolist()\n")))


@case("nan_return", "scaled_dot_product_attention returns NaN tensors of the right shape", max_score=4,
      questions_zero=["scaled_dot_product_attention"], questions_keep_full=others("scaled_dot_product_attention"))
def _():
    return ipynb(replace_function(reference(demo=False), "scaled_dot_product_attention", (
        "def scaled_dot_product_attention(query, key, value, mask=None):\n"
        "    w = torch.full((*query.shape[:-1], key.shape[-2]), float('nan'), dtype=query.dtype, device=query.device)\n"
        "    return w @ value, w\n")))


# -- information leaks ----------------------------------------------------------------
def _raise_file(path):
    return ("def causal_mask(seq_len, device=None):\n"
            f"    raise RuntimeError(open({str(KIT_ROOT / path)!r}).read())\n")


@case("read_solutions", "causal_mask raises an error holding solutions/scaled_dot_product.py, read from disk",
      max_score=8, questions_zero=["causal_mask"], questions_keep_full=others("causal_mask"),
      leak_files=["solutions/scaled_dot_product.py"],
      root_only=ROOT_WHY)
def _():
    return ipynb(replace_function(reference(demo=False), "causal_mask", _raise_file("solutions/scaled_dot_product.py")))


@case("read_suites", "causal_mask raises an error holding the hidden suite file, read from disk",
      max_score=8, questions_zero=["causal_mask"], questions_keep_full=others("causal_mask"),
      leak_files=["autograder/suites/scaled_dot_product/test_causal_mask.py"],
      root_only=ROOT_WHY)
def _():
    return ipynb(replace_function(reference(demo=False), "causal_mask",
                                  _raise_file("autograder/suites/scaled_dot_product/test_causal_mask.py")))


@case("read_environ", "causal_mask raises an error holding os.environ", max_score=8, questions_zero=["causal_mask"],
      questions_keep_full=others("causal_mask"), must_not_contain=[SECRET_ENV[1]])
def _():
    return ipynb(replace_function(reference(demo=False), "causal_mask", (
        "def causal_mask(seq_len, device=None):\n    import os\n    raise RuntimeError(repr(dict(os.environ)))\n")))


# -- malformed input --------------------------------------------------------------------
@case("not_a_notebook", "a PNG saved as .ipynb", max_score=0, reason_contains=["not a notebook"])
def _():
    return ".ipynb", b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4


@case("invalid_json", "a .ipynb holding text that is not JSON", max_score=0, reason_contains=["invalid JSON"])
def _():
    return ".ipynb", b"def causal_mask(seq_len):\n    return None\n"


@case("truncated", "the reference notebook cut off half way", max_score=0, reason_contains=["invalid JSON"])
def _():
    data = ipynb(reference())[1]
    return ".ipynb", data[: len(data) // 2]


@case("nbformat3", "an nbformat 3 notebook (worksheets)", max_score=0, reason_contains=["nbformat 3"])
def _():
    nb = {"nbformat": 3, "nbformat_minor": 0, "metadata": {"name": SDP},
          "worksheets": [{"cells": [{"cell_type": "code", "input": "x = 1", "outputs": []}]}]}
    return ".ipynb", json.dumps(nb).encode()


@case("syntax_error_cell", "a syntax error in the padding_mask cell", max_score=8, questions_zero=["padding_mask"],
      questions_keep_full=others("padding_mask"), reason_contains=["SyntaxError"])
def _():
    return ipynb(replace_function(reference(demo=False), "padding_mask",
                                  "def padding_mask(lengths, max_len=None)\n    return lengths\n"))


@case("missing_function", "the padding_mask cell deleted", max_score=8, questions_zero=["padding_mask"],
      questions_keep_full=others("padding_mask"), reason_contains=["not defined"])
def _():
    return ipynb(drop_function(reference(demo=False), "padding_mask"))


def _zip(members):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return ".zip", buf.getvalue()


@case("two_notebooks_zip", "a zip holding two notebooks", max_score=0, reason_contains=["submit exactly one"])
def _():
    data = ipynb(reference())[1]
    return _zip([("a.ipynb", data), ("b.ipynb", data)])


@case("many_files_zip", "a zip holding the notebook and 5000 small files", max_score=0,
      reason_contains=["over the limit"])
def _():
    return _zip([("reference.ipynb", ipynb(reference())[1])] + [(f"junk/{i}.txt", b"x") for i in range(5000)])


@case("zip_bomb", "a zip whose notebook inflates to 200 MB of whitespace", max_score=0,
      reason_contains=["over the limit", "over the size limit"])
def _():
    data = ipynb(reference())[1]
    return _zip([("reference.ipynb", data[:-1] + b" " * (200 << 20) + data[-1:])])
