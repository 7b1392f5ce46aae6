"""The notebook reader: whatever the file, a Submission or a one-line SubmissionError.

Most cases call the helper's pure function (`reader.read_bytes`) in this
process; the ones about limits, crashes and the judge's side go through the
helper process (`reader.read_file`, `notebook.load_submission`).
"""

import io
import json
import os
import subprocess
import sys
import zipfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograder import config
from autograder.judge import reader, sourcecheck
from autograder.judge.form import LABEL_CHARS
from autograder.judge.notebook import Cell, Submission, SubmissionError, load_submission, read_notebook_json

LIMITS = dict(config.load().limits)
KNOWN = tuple(config.load().assignments)
GOOD = "import torch\n\ndef causal_mask(n):\n    return torch.ones(n, n, dtype=torch.bool).tril()\n"
OTHER = "def padding_mask(lengths, max_len=None):\n    return lengths\n"


def code(source, metadata=None, **extra):
    return {
        "cell_type": "code",
        "execution_count": None,
        "metadata": {} if metadata is None else metadata,
        "outputs": [],
        "source": source,
        **extra,
    }


def notebook(*cells, metadata=None):
    meta = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
    return {
        "cells": list(cells),
        "metadata": meta if metadata is None else metadata,
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def dumps(nb):
    return json.dumps(nb).encode()


def read(data, name="sub.ipynb", limits=LIMITS, **kw):
    return reader.read_bytes(data, name, limits, KNOWN, **kw)


def one_line_error(fn, *args, **kw):
    with pytest.raises(SubmissionError) as info:
        fn(*args, **kw)
    message = str(info.value)
    assert message and "\n" not in message and "\r" not in message and len(message) <= 700, message
    return message


def by_index(result):
    return {c["index"]: c for c in result["cells"]}


def write(tmp_path, data, name="sub.ipynb"):
    path = tmp_path / name
    path.write_bytes(data)
    return path


# -- zips ----------------------------------------------------------------------------------
def zipped(members, method=zipfile.ZIP_DEFLATED):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return buf.getvalue()


def patched(data, fn):
    data = bytearray(data)
    fn(data, data.find(b"PK\x01\x02"))
    return bytes(data)


def encrypted(d, central):  # the "encrypted" flag bit in the local and central headers
    d[6] |= 1
    d[central + 8] |= 1


def deflate64(d, central):  # compression method 9 (Deflate64), which zipfile cannot read
    d[8] = 9
    d[central + 10] = 9


def corrupt_stream(d, central):
    start = 30 + d[26] + 10  # past the local header and the member's name
    for i in range(start, start + 24):
        d[i] ^= 0x5A


ZIP_NB = dumps(notebook(code(GOOD + "#" * 4000), code(OTHER)))


# == whole-file problems: one line each ===================================================
@pytest.mark.parametrize(
    "data, needle",
    [
        (b"[" * 200_000 + b"]" * 200_000, "nested more deeply"),
        (b'{"cells": [], "metadata": {"x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}", "nested more deeply"),
        (b"\x89PNG\r\n\x1a\n" + bytes(range(256)), "not a notebook"),
        (b"def f():\n    return 1\n", "invalid JSON"),
        (dumps(notebook(code(GOOD)))[:40], "invalid JSON"),
        (b'{"cells": 5}', "no list of cells"),
        (b"[1, 2]", "no list of cells"),
        (b'{"worksheets": []}', "nbformat 3"),
        (dumps(notebook(code(GOOD), metadata={"kernelspec": {"language": "R", "display_name": "R\n# x"}})), "kernel"),
        (dumps(notebook(code("x = 1\n" * 400_000))), "KB of code"),
        (dumps(notebook(*[code("") for _ in range(reader.MAX_CODE_CELLS + 1)])), "code cells"),
        (b'{"cells": [], "n": 1' + b"0" * 5000 + b"}", "invalid JSON"),
    ],
)
def test_malformed_files_give_one_line(data, needle):
    assert needle in one_line_error(read, data)


@pytest.mark.parametrize(
    "data, needle",
    [
        (b"[" * 200_000 + b"]" * 200_000, "nested more deeply"),
        (
            b'{"cells": [], "metadata": {"kit_language": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}",
            "nested more deeply",
        ),
        (b'{"cells": [], "n": 1' + b"0" * 5000 + b"}", "invalid JSON"),
        (b"[1, 2]", "no list of cells"),
    ],
)
def test_check_reads_the_notebook_only_through_the_reader(tmp_path, capsys, data, needle):
    """`check` (and `check --json`) learns even the notebook's edition from what the reader
    read, never from a parse of its own: a file the reader refuses is its one line, exit 2
    (a quick look of check's own once crashed on deep nesting with a traceback)."""
    from autograder import check

    path = tmp_path / "sub.ipynb"
    path.write_bytes(data)
    assert check.main(notebook=str(path), lang="en", json=True) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and needle in err, err[-300:]


@pytest.mark.parametrize(
    "data, needle",
    [
        (patched(zipped([("nb/sub.ipynb", ZIP_NB)]), encrypted), "encrypted"),
        (patched(zipped([("sub.ipynb", ZIP_NB)]), deflate64), "compressed with a method"),
        (patched(zipped([("sub.ipynb", ZIP_NB)]), corrupt_stream), "damaged zip"),
        (zipped([("sub.ipynb", ZIP_NB)])[:200], "damaged zip"),
        (zipped([("sub.ipynb", ZIP_NB)])[:-10], "damaged zip"),
        (zipped([("sub.ipynb", ZIP_NB)], zipfile.ZIP_BZIP2)[:-60], "damaged zip"),
        (zipped([("sub.ipynb", ZIP_NB), ("b.ipynb", ZIP_NB)]), "submit exactly one"),
        (zipped([("readme.txt", b"x")]), "no notebook"),
        (zipped([(f"f{i}.txt", b"x") for i in range(reader.MAX_ZIP_MEMBERS + 1)]), "over the limit"),
        (zipped([("\n# evil\r\u202e.ipynb", b"[")]), "invalid JSON"),
    ],
)
def test_broken_zips_give_one_line(data, needle):
    message = one_line_error(read, data, "export.zip")
    assert needle in message


def test_zip_member_names_are_one_line_and_bounded():
    message = one_line_error(read, zipped([("\x1b[31m" + "n" * 500 + "\n.ipynb", ZIP_NB), ("b.ipynb", ZIP_NB)]))
    assert "\x1b" not in message and len(message) < 400


def test_a_good_zip_reads():
    result = read(zipped([("sub.ipynb", ZIP_NB), (".OTTER_LOG", b"\x80\x04junk")]), "export.zip")
    assert [c["index"] for c in result["cells"]] == [1, 2]


def test_file_over_the_size_limit():
    assert "over the limit" in one_line_error(read, b" " * (2 << 20), limits={**LIMITS, "notebook_file_mb": 1})


# == bad cells: only that cell is affected ================================================
def test_lone_surrogate_in_one_cell():
    data = (
        b'{"cells": ['
        + json.dumps(code("x = 1")).encode()
        + b', {"cell_type": "code", "source": "s = \\"\\ud800\\udfff\\ud83d\\""}, '
        + json.dumps(code(OTHER)).encode()
        + b'], "metadata": {}}'
    )
    cells = by_index(read(data))
    assert cells[1]["source"] == "x = 1" and cells[3]["source"] == OTHER
    cells[2]["source"].encode("utf-8")  # valid text now
    assert cells[2]["source"].startswith("s = ")


def test_undecodable_bytes_are_replaced_not_fatal():
    data = dumps(notebook(code("x = 1"), code("y = 'PLACE'"))).replace(b"PLACE", b"\xff\xfe")
    cells = by_index(read(data))
    assert cells[1]["source"] == "x = 1" and "\ufffd" in cells[2]["source"]


@pytest.mark.parametrize("newline", ["\r", "\r\n"])
def test_lone_cr_and_crlf_line_ends(newline):
    src = newline.join(
        ["import otter", "grader = otter.Notebook('sdp.ipynb')", "def f():", "    return 1", "grader.check('q1')", ""]
    )
    cells = by_index(read(dumps(notebook(code(src), code(OTHER)))))
    assert cells[1]["source"] == "pass\npass\ndef f():\n    return 1\npass\n"
    assert cells[1]["original"] == src.replace("\r\n", "\n").replace("\r", "\n")
    assert cells[1]["unparsed"] is None


@pytest.mark.parametrize(
    "deep",
    [
        "x = " + "-" * 100_000 + "1\n",
        "x = a" + ".b" * 200_000 + "\n",
        "x = " + "(" * 5000 + "1" + ")" * 5000 + "\n",
        "x = " + "[" * 3000 + "]" * 3000 + "\n",
        "x = 1 +" + " 1 +" * 100_000 + " 1\n",
        "x = '\x00'\n",
    ],
)
def test_an_unparsable_cell_costs_only_that_cell(deep):
    result = read(dumps(notebook(code(GOOD), code(deep), code(OTHER))))
    cells = by_index(result)
    assert cells[1]["source"] == GOOD and cells[3]["source"] == OTHER
    assert cells[1]["unparsed"] is None and cells[3]["unparsed"] is None
    assert cells[2]["original"] == deep
    assert result["defined"] == sorted(["causal_mask", "padding_mask"] + (["x"] if not cells[2]["unparsed"] else []))


@pytest.mark.parametrize("metadata", [[1, 2], "tags", 5, None, {"tags": "kit-provided"}, {"tags": [["kit-provided"]]}])
def test_cell_and_notebook_metadata_of_any_type(metadata):
    nb = notebook(code(GOOD, metadata=metadata), code(OTHER), metadata=metadata)
    result = read(dumps(nb))
    assert [c["source"] for c in result["cells"]] == [GOOD, OTHER]
    assert result["assignment"] is None


@pytest.mark.parametrize(
    "source, expected",
    [
        (5, ""),
        (None, ""),
        ({"a": 1}, ""),
        (["a = 1\n", 3, ["x"], None, "b = 2"], "a = 1\nb = 2"),
        (True, ""),
        ([], ""),
        ("", ""),
    ],
)
def test_sources_of_odd_type(source, expected):
    cells = by_index(read(dumps(notebook(code(source), code(OTHER)))))
    assert cells[1]["source"] == expected and cells[2]["source"] == OTHER


def test_cells_that_are_not_dicts_are_skipped_and_indices_kept():
    nb = notebook(
        "text",
        7,
        None,
        [code(GOOD)],
        {"cell_type": ["code"]},
        {"cell_type": "markdown", "source": "x"},
        code(GOOD),
        {"source": "y = 1"},
    )
    result = read(dumps(nb))
    assert [(c["index"], c["source"]) for c in result["cells"]] == [(7, GOOD)]


def test_cells_are_labelled_as_jupyter_and_colab_show_them():
    """The prompt beside a cell ([7]: once run, [ ]: never run; no cell's place among the
    notebook's cells, which neither shows) and the first line of its code, cut to fit."""
    long = "def scaled_dot_product_attention(query, key, value, mask=None, dropout=0.0):\n    pass\n"
    nb = notebook(
        {"cell_type": "markdown", "source": "# title"},
        code(GOOD, execution_count=7),
        code("\n\n  x = 1  \n", execution_count=None),
        code(long, execution_count=12),
        code("", execution_count=True),
    )
    labels = [c["label"] for c in read(dumps(nb))["cells"]]
    assert labels[:3] == [
        "[7]: import torch",
        "[ ]: x = 1",
        "[12]: def scaled_dot_product_attention(query, key, value, ma ...",
    ]
    assert labels[3] == "[ ]:"  # a count that is not a number Jupyter would show
    assert all(len(x) <= LABEL_CHARS for x in labels)


def test_a_source_finding_names_its_cell_as_the_student_sees_it():
    """The reader's findings say "cell 3" (a place among the notebook's cells); the feedback
    names that cell by its prompt and first line, in the language in force."""
    from autograder import messages
    from autograder.private.suites import properties

    found = "cell 3, line 2: uses torch's built-in `scaled_dot_product_attention`"
    cells = [Cell(3, "import math\n", "import math\n", None, "[11]: import math")]
    with messages.language("pt-BR"):
        text = properties.finding_text(found, cells)
    assert text == "célula `[11]: import math`, linha 2: usa a função pronta do torch `scaled_dot_product_attention`"
    with messages.language("en"):
        assert properties.finding_text(found, []).startswith("cell 3 of the notebook, line 2: ")


def test_outputs_dropped_and_code_only():
    nb = notebook(
        code(GOOD, outputs=[{"output_type": "stream", "text": "x" * 1000}]), {"cell_type": "raw", "source": "raw"}
    )
    nb["cells"][0]["outputs"] = [{"output_type": "stream", "text": "x" * 1000}]
    result = read(dumps(nb))
    assert result["notebook"]["cells"] == [{"cell_type": "code", "source": GOOD, "metadata": {}}]
    assert "outputs" not in json.dumps(result)


def test_magics_provided_cells_and_assignment():
    nb = notebook(
        code('import otter\ngrader = otter.Notebook("multi_head.ipynb")'),
        code("%matplotlib inline\n  !ls\nx = 1"),
        code("# PROVIDED: helper.\ndef helper():\n    return 1\n"),
        code("def tagged():\n    pass\n", metadata={"tags": ["kit-provided", 3]}),
        code(GOOD),
    )
    result = read(dumps(nb))
    assert result["assignment"] == "multi_head"
    assert [c["index"] for c in result["cells"]] == [1, 2, 5]
    assert by_index(result)[2]["source"] == "pass\n  pass\nx = 1"
    assert result["provided"] == ["helper", "tagged"]
    kept = read(dumps(nb), keep_provided=True)
    assert [c["index"] for c in kept["cells"]] == [1, 2, 3, 4, 5]


def test_assignment_from_metadata_and_public_tests_passed_through():
    meta = {
        "otter": {
            "assignment_name": "classic_attention",
            "tests": {"q1": "def test(): pass\r\n", "q2": 5, "q3": {"src": "t3"}, "q4": {"src": [1]}},
        },
        "kit_assignment": ["x"],
    }
    result = read(dumps(notebook(code(GOOD), metadata=meta)))
    assert result["assignment"] == "classic_attention"
    assert result["notebook"]["metadata"]["otter"]["tests"] == {"q1": "def test(): pass\n", "q3": "t3"}
    big = {"otter": {"tests": {f"q{i}": "x" * 100_000 for i in range(100)}}}
    tests = read(dumps(notebook(code(GOOD), metadata=big)))["notebook"]["metadata"]["otter"]["tests"]
    assert sum(len(v) for v in tests.values()) <= LIMITS["notebook_code_kb"] * 1024


def test_twenty_megabytes_of_outputs_are_accepted(tmp_path):
    png = "iVBORw0KGgo" * ((20 << 20) // 11)
    nb = notebook(code(GOOD), code(OTHER))
    nb["cells"][0]["outputs"] = [{"output_type": "display_data", "data": {"image/png": png}, "metadata": {}}]
    data = dumps(nb)
    assert len(data) > 20 << 20
    sub = load_submission(write(tmp_path, data), KNOWN)
    assert [c.source for c in sub.cells] == [GOOD, OTHER]


# == the source checks' findings ===========================================================
def test_findings_in_the_reader():
    nb = notebook(
        code(
            "import torch.nn.functional as F\ndef sdpa(q, k, v):\n    return helper(q)\n"
            "def helper(q):\n    return F.scaled_dot_product_attention(q, q, q)\n"
        ),
        code("def mha(q):\n    return scaled_dot_product_attention(q, q, q)\n"),
        code("import torch\nwith torch._C.DisableTorchFunction():\n    pass\n"),
        code("x = (" + "-" * 100_000 + "1)\nimport autograder\n"),
    )
    f = read(dumps(nb))["findings"]
    assert (
        f["forbidden"]["sdpa"]
        == f["forbidden"]["helper"]
        == ["cell 1, line 5: uses torch's built-in `scaled_dot_product_attention`"]
    )
    assert f["excused"] == {
        "cell 2, line 2: uses torch's built-in `scaled_dot_product_attention`": "scaled_dot_product_attention"
    }
    assert any("`_C`" in t and t.startswith("cell 3") for t in f["tracing"])
    assert any(t.startswith("cell 4: could not be parsed") and "autograder" in t for t in f["tracing"])


@pytest.mark.parametrize(
    "source",
    [
        "import autograder",
        "import autograder.worker.runner as r",
        "from autograder.worker import runner",
        "import importlib\nr = importlib.import_module('autograder.worker.runner')",
        "import sys\nr = sys.modules['autograder']",
        "exec('import autograder')",
        "x = some.autograder",
        "from autograder import worker",
        "import autograder.private.solutions as s\nautograder.worker",
    ],
)
def test_reaching_for_the_kit_is_tampering(source):
    cells = [Cell(1, source, source)]
    assert any("grader's own modules" in f for f in sourcecheck.tracing_tampering(cells)), source


@pytest.mark.parametrize(
    "source",
    [
        'def f():\n    """Graded by the autograder."""\n    print("the autograder checks this")\n    return 1\n',
        "open('/nonexistent/autograder.zip')\nglob.glob('/autograder/**/*.zip')",
        # a hunt for answers in the private package (empty in a worker: the sandbox's business, not the counter's)
        "import importlib\nimportlib.import_module('autograder.private.solutions.scaled_dot_product')",
        "import autograder.private.solutions.x as y\nfrom autograder.private import solutions\n"
        "autograder.private.solutions.f()\nexec('from autograder.private import x')",
    ],
)
def test_talking_about_the_autograder_is_not_tampering(source):
    assert sourcecheck.tracing_tampering([Cell(1, source, source)]) == [], source


NAMES = [f"f{i}" for i in range(6)]


@st.composite
def programs(draw):
    """Top-level functions calling one another (cycles allowed), some using built-in attention."""
    lines = ["import torch.nn.functional as F", "from torch.nn.functional import scaled_dot_product_attention as s"]
    uses = [
        "F.scaled_dot_product_attention(x, x, x)",
        "scaled_dot_product_attention(x)",
        "s(x)",
        "getattr(F, 'multi_head_attention_forward')",
        "MultiheadAttention(1, 1)",
        "x + 1",
    ]
    for name in draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=6, unique=True)):
        body = [f"    {draw(st.sampled_from(NAMES))}(x)" for _ in range(draw(st.integers(0, 3)))]
        body += [f"    {draw(st.sampled_from(uses))}" for _ in range(draw(st.integers(0, 2)))]
        lines += [f"def {name}(x):"] + (body or ["    pass"])
    return "\n".join(lines) + "\n"


@settings(max_examples=150, deadline=None)
@given(programs(), st.sampled_from([(), ("scaled_dot_product_attention",), ("MultiheadAttention", "x")]))
def test_findings_for_every_name_agree_with_forbidden_uses(source, provided):
    cells = [Cell(1, source, source)]
    f = sourcecheck.findings([(cells[0], *sourcecheck.parse(source))])
    for name in NAMES:
        mine = sorted(x for x in f["forbidden"].get(name, []) if f["excused"].get(x) not in provided)
        full = sourcecheck.forbidden_uses(cells, name, provided)
        assert set(mine) <= set(full) and mine[:5] == full[:5], (name, source)


# == through the helper process: limits, crashes, the judge's side ============================
def test_load_submission_end_to_end(tmp_path):
    nb = notebook(
        code("import otter\ngrader = otter.Notebook('scaled_dot_product.ipynb')"),
        code(GOOD),
        {"cell_type": "markdown", "source": "hi"},
        code("x = (" + "-" * 100_000 + "1)\n"),
        code(OTHER),
        metadata={"otter": {"tests": {"causal_mask": "t"}}},
    )
    sub = load_submission(write(tmp_path, dumps(nb)), KNOWN)
    assert isinstance(sub, Submission) and sub.assignment == "scaled_dot_product"
    assert [(c.index, c.unparsed is None) for c in sub.cells] == [(1, True), (2, True), (4, False), (5, True)]
    assert sub.findings == {"forbidden": {}, "excused": {}, "tracing": [], "unchecked": []}
    assert sub.notebook["metadata"]["otter"]["tests"] == {"causal_mask": "t"}
    assert read_notebook_json(write(tmp_path, dumps(nb)))["cells"][1]["source"] == GOOD


def test_unreadable_paths(tmp_path):
    assert "cannot read" in one_line_error(load_submission, tmp_path / "missing\n.ipynb", KNOWN)
    assert "not a regular file" in one_line_error(load_submission, tmp_path, KNOWN)
    fifo = tmp_path / "fifo.ipynb"
    os.mkfifo(fifo)
    assert "not a regular file" in one_line_error(load_submission, fifo, KNOWN)


def test_deep_json_parses_in_the_helper(tmp_path):
    """The helper's big stack: nesting far past the default recursion limit still reads."""
    nb = b'{"cells": [' + dumps(code(GOOD)) + b'], "metadata": {"x": ' + b"[" * 50_000 + b"]" * 50_000 + b"}}"
    sub = load_submission(write(tmp_path, nb), KNOWN)
    assert [c.source for c in sub.cells] == [GOOD]
    deeper = b'{"cells": [], "metadata": {"x": ' + b"[" * 2_000_000 + b"]" * 2_000_000 + b"}}"
    assert "nested more deeply" in one_line_error(load_submission, write(tmp_path, deeper), KNOWN)


def test_broken_zip_through_the_helper(tmp_path):
    path = write(tmp_path, patched(zipped([("sub.ipynb", ZIP_NB)]), deflate64), "export.zip")
    assert "compressed with a method" in one_line_error(load_submission, path, KNOWN)


JUDGE_SIDE = """
import json, resource, sys, types
pkg = sys.argv[1]
for name, path in (('autograder', pkg), ('autograder.judge', pkg + '/judge')):
    m = types.ModuleType(name); m.__path__ = [path]; sys.modules[name] = m
from autograder.judge import reader
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
r = reader.read_file(sys.argv[2], [], False, json.loads(sys.argv[3]))
print(json.dumps({"before_kb": before, "self_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "child_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
                  "unparsed": [c["unparsed"] for c in r["cells"]]}))
"""


def test_a_million_statements_stay_within_the_limits(tmp_path):
    """The judge's side holds only the answer; the helper stays under its memory limit
    (the cell that does not fit is marked, the other is intact)."""
    path = write(tmp_path, dumps(notebook(code(GOOD), code("a\n" * 1_000_000))))
    out = subprocess.run(
        [sys.executable, "-c", JUDGE_SIDE, str(reader.PACKAGE_DIR), str(path), json.dumps(LIMITS)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    got = json.loads(out.stdout)
    assert got["unparsed"][0] is None and "memory limit" in got["unparsed"][1]
    assert got["child_kb"] <= LIMITS["reader_memory_mb"] * 1024
    assert got["self_kb"] - got["before_kb"] < 100 * 1024, got  # the answer: ~6 MB of text, decoded


def test_memory_limit_of_the_helper(tmp_path):
    nb = notebook(code(GOOD))
    nb["cells"][0]["outputs"] = [{"output_type": "stream", "text": ["x"] * 3_000_000}]
    path = write(tmp_path, dumps(nb))
    message = one_line_error(reader.read_file, path, KNOWN, False, {**LIMITS, "reader_memory_mb": 100})
    assert "memory limit of 100 MB" in message


def test_cpu_limit_of_the_helper(tmp_path):
    path = write(tmp_path, dumps(notebook(code(GOOD), code("a\n" * 1_000_000))))
    message = one_line_error(
        reader.read_file, path, KNOWN, False, {**LIMITS, "reader_memory_mb": 4096, "reader_seconds": 1}
    )
    assert "CPU time limit of 1 s" in message


@pytest.mark.parametrize(
    "boot, needle",
    [
        ("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", "stopped (signal 11)"),
        ("raise MemoryError", "memory limit"),
        ("import os, signal; os.kill(os.getpid(), signal.SIGXCPU)", "CPU time limit"),
        ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", "limits"),
        ("import sys; sys.exit(7)", "exit status 7"),
        ("print('not json')", "no answer"),
        ("print('[1]')", "wrong shape"),
        ('print(\'{"ok": true, "result": {"cells": [{"index": "1"}]}}\')', "wrong shape"),
        (
            'print(\'{"ok": false, "reason": {"key": "json_invalid", "fields": {"name": "x", '
            '"why": "bad\\\\nline"}}}\')',
            "bad line",
        ),
        ('print(\'{"ok": false, "reason": {"key": "no_such_key", "fields": {}}}\')', "wrong shape"),
        ('print(\'{"ok": false, "reason": "a reason in words"}\')', "reader failed"),
        ('print(\'{"ok": false, "internal": "KeyError"}\')', "reader failed"),
        ("import time; time.sleep(30)", "time limit"),
    ],
)
def test_the_judge_maps_every_end_of_the_helper_to_one_line(tmp_path, monkeypatch, boot, needle):
    monkeypatch.setattr(reader, "_BOOT", boot)
    monkeypatch.setattr(reader, "WALL_SLACK", 0)
    path = write(tmp_path, dumps(notebook(code(GOOD))))
    assert needle in one_line_error(reader.read_file, path, KNOWN, False, {**LIMITS, "reader_seconds": 1})


@pytest.mark.parametrize(
    "mutate",
    [
        lambda r: r.update(cells="x"),
        lambda r: r["cells"].append({"index": True, "source": "", "original": "", "unparsed": None}),
        lambda r: r.update(assignment="elsewhere"),
        lambda r: r["findings"].update(forbidden={"f": [1]}),
        lambda r: r["findings"].update(tracing=None),
        lambda r: r["findings"]["excused"].update({"x": None}),
        lambda r: r["notebook"]["metadata"]["otter"].update(tests={"q": {"src": "x"}}),
        lambda r: r["notebook"].update(cells=[{"cell_type": "markdown", "source": ""}]),
        lambda r: r.update(defined=[1]),
    ],
)
def test_the_judge_checks_the_shape_of_the_answer(mutate):
    result = read(dumps(notebook(code(GOOD))))
    assert reader._submission_dict(json.loads(json.dumps(result)), "x", KNOWN)
    mutate(result)
    assert "wrong shape" in one_line_error(reader._submission_dict, result, "x", KNOWN)


# == fuzz ======================================================================================
SPECIAL = [
    "\r",
    "\r\n",
    "\ud800",
    "\udfff",
    "\x00",
    "%time x",
    "!ls",
    "import otter\n",
    "grader.check('q')",
    "# PROVIDED: f.",
    "def f():\n  return 1\n",
    "(((",
    "kit-provided",
    "code",
    "\ufeff",
    "\u2028",
    "import torch._C",
    "F.scaled_dot_product_attention",
    "'autograder'",
]
texts = st.one_of(
    st.text(st.characters(exclude_categories=()), max_size=30),
    st.sampled_from(SPECIAL),
    st.lists(st.sampled_from(SPECIAL), max_size=5).map("".join),
)
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), texts)
junk = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(texts, inner, max_size=4)),
    max_leaves=12,
)
sources = st.one_of(texts, st.lists(st.one_of(texts, junk), max_size=5), junk)
metadata = st.one_of(
    junk,
    st.fixed_dictionaries(
        {}, optional={"tags": st.one_of(junk, st.lists(st.one_of(st.just("kit-provided"), texts, junk), max_size=3))}
    ),
)
cell = st.fixed_dictionaries(
    {"cell_type": st.sampled_from(["code", "code", "code", "markdown", "raw"]), "source": sources},
    optional={"metadata": metadata, "outputs": junk, "execution_count": junk},
)
cells = st.one_of(cell, cell, cell, junk)
nb_metadata = st.one_of(
    junk,
    st.fixed_dictionaries(
        {},
        optional={
            "kernelspec": st.one_of(
                junk,
                st.fixed_dictionaries(
                    {}, optional={"language": st.one_of(st.just("python"), junk), "name": junk, "display_name": junk}
                ),
            ),
            "language_info": junk,
            "otter": st.one_of(
                junk,
                st.fixed_dictionaries(
                    {},
                    optional={
                        "assignment_name": st.one_of(st.sampled_from(KNOWN), junk),
                        "tests": st.one_of(
                            junk,
                            st.dictionaries(
                                texts, st.one_of(texts, st.fixed_dictionaries({"src": junk}), junk), max_size=3
                            ),
                        ),
                    },
                ),
            ),
            "kit_assignment": st.one_of(st.sampled_from(KNOWN), junk),
        },
    ),
)
notebook_dict = st.fixed_dictionaries(
    {"cells": st.one_of(st.lists(cells, min_size=1, max_size=6), st.lists(cells, max_size=6), junk)},
    optional={"metadata": nb_metadata, "nbformat": junk, "worksheets": junk},
)
notebooks = st.one_of(notebook_dict, notebook_dict, notebook_dict, junk)


@st.composite
def files(draw):
    """Bytes of a notebook-ish file: JSON of a notebook-ish value, maybe cut, flipped,
    deeply nested, or put in a zip (maybe with its headers patched or cut)."""
    data = json.dumps(draw(notebooks)).encode()
    kind = draw(st.sampled_from(["plain", "plain", "plain", "cut", "flip", "deep", "zip", "zip"]))
    if kind == "cut":
        data = data[: draw(st.integers(0, len(data)))]
    elif kind == "flip" and data:
        buf = bytearray(data)
        for _ in range(draw(st.integers(1, 4))):
            buf[draw(st.integers(0, len(buf) - 1))] = draw(st.integers(0, 255))
        data = bytes(buf)
    elif kind == "deep":
        depth = draw(st.integers(1, 5000))
        data = b'{"cells": [], "metadata": ' + b"[" * depth + b"]" * depth + b"}"
    elif kind == "zip":
        names = draw(
            st.lists(
                st.one_of(
                    st.sampled_from(["sub.ipynb", "a/b.ipynb", ".x.ipynb", "r.txt"]), st.text(min_size=1, max_size=10)
                ),
                min_size=1,
                max_size=3,
                unique=True,
            )
        )
        method = draw(st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA]))
        try:
            data = zipped([(n, data) for n in names], method)
        except (ValueError, UnicodeEncodeError, IndexError):  # a name zipfile cannot write
            data = zipped([("sub.ipynb", data)], method)
        patch = draw(st.sampled_from([None, encrypted, deflate64, corrupt_stream, "cut"]))
        if patch == "cut":
            data = data[: draw(st.integers(0, len(data)))]
        elif patch is not None and len(data) > 200:
            data = patched(data, patch)
    return data


def check_result(result):
    checked = reader._submission_dict(json.loads(json.dumps(result, ensure_ascii=False)), "x", KNOWN)
    indices = [c["index"] for c in checked["cells"]]
    assert indices == sorted(set(indices)) and all(i >= 1 for i in indices)
    for c in checked["cells"]:
        for text in (c["source"], c["original"]):
            text.encode("utf-8")  # strict: no lone surrogates left
            assert "\r" not in text


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(files(), st.booleans())
def test_fuzz_the_reader(data, keep_provided):
    try:
        result = read(data, "fuzz.ipynb", keep_provided=keep_provided)
    except SubmissionError as exc:
        message = str(exc)
        assert message and "\n" not in message and "\r" not in message and len(message) <= 700, message
    else:
        check_result(result)


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
@given(files())
def test_fuzz_through_the_helper(tmp_path, data):
    path = write(tmp_path, data, "fuzz.zip")
    try:
        sub = load_submission(path, KNOWN)
    except SubmissionError as exc:
        assert "\n" not in str(exc) and len(str(exc)) <= 700
    else:
        assert isinstance(sub, Submission) and all(isinstance(c, Cell) for c in sub.cells)


# -- the kit's init cell: a try around otter with a stand-in for where otter cannot run ----------
@pytest.mark.parametrize("assignment", list(config.load().assignments))
def test_the_kit_init_cell_is_stripped_whole(assignment):
    from autograder.build.assign import init_cell_source

    src = init_cell_source(assignment)
    stripped = reader.strip_otter(src)
    assert {line for line in stripped.split("\n") if line and not line.startswith("#")} == {"pass"}
    assert len(stripped.split("\n")) == len(src.split("\n"))  # line numbers kept
    result = read(dumps(notebook(code(src), code(GOOD))))
    cells = by_index(result)
    assert "otter" not in cells[1]["source"].replace("Initialize Otter", "").replace("otter cannot", "").replace(
        "otter-grader", ""
    )
    assert result["assignment"] == assignment  # still told by otter.Notebook("<assignment>.ipynb")
    assert "_KitChecks" not in result["defined"] and "grader" not in result["defined"]


def test_the_committed_templates_init_cell_is_the_kit_one_and_is_stripped():
    from conftest import ASSIGNMENTS, template

    for a in ASSIGNMENTS:
        src = template(a)["cells"][0]["source"]
        src = "".join(src) if isinstance(src, list) else src
        assert "import otter" in src and "_KitChecks" in src
        assert set(reader.strip_otter(src).split("\n")) - {"", "pass"} <= {
            line for line in src.split("\n") if line.startswith("#")
        }


@pytest.mark.parametrize(
    "src, kept",
    [
        ("try:\n    import otter\nexcept ImportError:\n    x = 1\n", False),
        ("try:\n    grader = otter.Notebook('a.ipynb')\nexcept Exception:\n    grader = None\n", False),
        ("try:\n    import numpy\nexcept ImportError:\n    x = 1\n", True),  # not otter's: runs
        ("try:\n    x = 1\nfinally:\n    import otter\n", True),  # otter only in the clean-up: the try runs
        ("if True:\n    import otter\n", True),  # only a try is the init cell's form
    ],
)
def test_a_try_is_stripped_only_when_its_body_is_otter(src, kept):
    assert (reader.strip_otter(src) == src) is kept


def test_check_exits_3_when_the_machine_cannot_confine_its_worker(tmp_path, capsys, monkeypatch):
    """`check`'s exit 1 means a public check failed: a worker the machine cannot confine (the
    kernel refuses the load's CPU budget over the submission's, EINVAL) is the kit's fault,
    one line and exit 3, never a traceback read as a failed check."""
    from autograder import check
    from conftest import ROOT, limits

    # limits the schema refuses (the load's budget over the submission's), given past it as a
    # machine whose kernel refuses a step would: the real worker, the real setrlimit
    refused = limits(load_seconds=30, submission_cpu_seconds=5)
    monkeypatch.setattr(check.Limits, "from_config", lambda _: refused)
    example = ROOT / "examples/submissions/scaled_dot_product/reference.ipynb"
    assert check.main(notebook=str(example), lang="en", json=True) == 3
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and "could not be confined" in err, err[-500:]
