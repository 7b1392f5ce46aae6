"""Hostile battery cases of this assignment: files the notebook reader must survive.

Registered into `cases.CASES` on import. Each is read by the reader's limited
helper process (`autograder.judge.reader`): a file it cannot read gives a
one-line reason and no points; a cell it cannot read costs that cell only.
"""

import io
import json
import zipfile

from autograder.audit.hostile.cases import append, case, code_cell, ipynb, reference, replace_function
from autograder.private.assignments.scaled_dot_product.battery_cases import FULL, SDP_QS, others


def _zip(name, data, method=zipfile.ZIP_DEFLATED, patch=None):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as zf:
        zf.writestr(name, data)
    out = bytearray(buf.getvalue())
    if patch:
        patch(out, out.find(b"PK\x01\x02"))
    return ".zip", bytes(out)


def _notebook_bytes():
    return ipynb(reference())[1]


# -- the whole file -------------------------------------------------------------------------
@case(
    "json_nested_deep",
    "the reference notebook with 2 million nested lists in its metadata",
    max_score=0,
    reason_contains=["nested more deeply"],
)
def _():
    data = _notebook_bytes()
    depth = 2_000_000
    return ".ipynb", data[:1] + b'"deep": ' + b"[" * depth + b"]" * depth + b", " + data[1:]


@case(
    "json_nested_50k",
    "the reference notebook with 50 000 nested lists in its metadata (parsed, ignored)",
    max_score=FULL,
    questions_keep_full=list(SDP_QS),
)
def _():
    data = _notebook_bytes()
    return ".ipynb", data[:1] + b'"deep": ' + b"[" * 50_000 + b"]" * 50_000 + b", " + data[1:]


@case(
    "zip_encrypted_member",
    "an export zip whose notebook is encrypted (password-protected)",
    max_score=0,
    reason_contains=["encrypted"],
)
def _():
    def encrypted(d, central):
        d[6] |= 1
        d[central + 8] |= 1

    return _zip("reference.ipynb", _notebook_bytes(), patch=encrypted)


@case(
    "zip_deflate64",
    "an export zip whose notebook is compressed with Deflate64 (method 9), which zipfile cannot read",
    max_score=0,
    reason_contains=["compressed with a method"],
)
def _():
    def deflate64(d, central):
        d[8] = 9
        d[central + 10] = 9

    return _zip("reference.ipynb", _notebook_bytes(), patch=deflate64)


@case(
    "zip_corrupt_deflate",
    "an export zip whose notebook's deflate stream is corrupt",
    max_score=0,
    reason_contains=["damaged zip"],
)
def _():
    def corrupt(d, central):
        start = 30 + d[26] + 40
        for i in range(start, start + 64):
            d[i] ^= 0x5A

    return _zip("reference.ipynb", _notebook_bytes(), patch=corrupt)


@case("zip_truncated", "an export zip cut off half way", max_score=0, reason_contains=["damaged zip"])
def _():
    suffix, data = _zip("reference.ipynb", _notebook_bytes())
    return suffix, data[: len(data) // 2]


@case(
    "stored_outputs_20mb",
    "the reference notebook with 20 MB of stored plot outputs (not code: accepted)",
    max_score=FULL,
    questions_keep_full=list(SDP_QS),
)
def _():
    nb = reference()
    png = "iVBORw0KGgoAAAANSUhEUgAA" * ((20 << 20) // 24)
    cell = next(c for c in nb["cells"] if c["cell_type"] == "code")
    cell["outputs"] = [{"output_type": "display_data", "data": {"image/png": png}, "metadata": {}}]
    return ipynb(nb)


@case(
    "code_over_limit",
    "a cell of 3 MB of code (over the 2 MB limit on code)",
    max_score=0,
    reason_contains=["KB of code"],
)
def _():
    return ipynb(append(reference(), "x = 1\n" * 500_000))


# -- one cell -------------------------------------------------------------------------------
@case(
    "lone_surrogate_cell",
    "a lone surrogate (JSON \\ud800) inside padding_mask's code",
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
            "def padding_mask(lengths, max_len=None):\n    return lengths\ud800\n",
        )
    )


@case(
    "lone_surrogate_string",
    "a lone surrogate in a string of an extra cell (other cells intact)",
    max_score=FULL,
    questions_keep_full=list(SDP_QS),
)
def _():
    return ipynb(append(reference(), "note = 'broken \ud800 text'\n"))


@case(
    "lone_cr_line_ends",
    "every code cell with old-Mac line ends (lone \\r), otter's statements included",
    max_score=FULL,
    questions_keep_full=list(SDP_QS),
)
def _():
    nb = reference()
    for c in nb["cells"]:
        src = "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        c["source"] = src.replace("\n", "\r")
    return ipynb(nb)


@case(
    "deep_expression_cell",
    "an extra cell holding an expression nested 100 000 levels deep",
    max_score=FULL,
    questions_keep_full=list(SDP_QS),
)
def _():
    return ipynb(append(reference(), "x = " + "-" * 100_000 + "1\n"))


@case(
    "million_statements_cell",
    "an extra cell of a million tiny statements (2 MB)",
    max_score=FULL,
    questions_keep_full=list(SDP_QS),
)
def _():
    return ipynb(append(reference(), "0\n" * 1_000_000))


@case(
    "list_metadata",
    "every cell's metadata and the notebook's metadata are lists",
    max_score=FULL,
    questions_keep_full=list(SDP_QS),
)
def _():
    nb = reference()
    for c in nb["cells"]:
        c["metadata"] = ["tags", "kit-provided"]
    nb["metadata"] = [{"kernelspec": "R"}]
    return ipynb(nb)


@case(
    "odd_sources",
    "extra cells whose sources are a number, a dict, null and a list of mixed types",
    max_score=FULL,
    questions_keep_full=list(SDP_QS),
)
def _():
    nb = reference()
    for source in (5, {"a": 1}, None, ["x = 1\n", 2, ["y"], "z = 3\n"]):
        nb["cells"].append({**code_cell(""), "source": source})
    nb["cells"] += ["not a cell", 7, None]
    return ".ipynb", json.dumps(nb).encode()


@case(
    "reaches_for_runner",
    "an extra cell imports the kit's worker module (where the op counter lives): every "
    "check that counts torch calls fails",
    max_score=FULL - 0.01,
    questions_keep_full=["causal_mask"],
    questions_lose=["padding_mask", "scaled_dot_product_attention"],
    reason_contains=["grader's own modules"],
)
def _():
    nb = reference(demo=False)
    return ipynb(append(nb, "try:\n    import autograder.worker.runner as _r\nexcept ImportError:\n    _r = None\n"))


@case(
    "odd_language_metadata",
    "the notebook's metadata names a language the kit lacks, 100 KB long, with Markdown and control characters in it",
    max_score=FULL,
    questions_keep_full=list(SDP_QS),
    must_not_contain=["klingon", "\x1b["],
)
def _():
    nb = reference()
    nb["metadata"]["kit_language"] = "klingon \x1b[31m# " + "x" * 100_000
    return ipynb(nb)


@case(
    "language_metadata_not_text",
    "the notebook's metadata language is a nested object, not a string",
    max_score=FULL,
    questions_keep_full=list(SDP_QS),
)
def _():
    nb = reference()
    nb["metadata"]["kit_language"] = {"en": ["pt-BR", {"x": None}]}
    return ipynb(nb)


HOSTILE_LABEL = (
    "raise ValueError('boom')  # <script>alert(1)</script><img src=x onerror=alert(2)> **b** [x](javascript:x) "
    "\x1b[31mred\x1b[0m \u202eevil\u200b\x07 | </td></tr> `tick` " + "A" * 20_000
)


@case(
    "cell_labels_hostile",
    "cells that raise as the notebook loads, their first lines (the labels the feedback shows) full of HTML, "
    "Markdown, ANSI, bidi and control characters, 20 KB long, their execution counts a string, 10**30, "
    "true, -1 and 1e308, their metadata not a mapping",
    max_score=FULL,
    questions_keep_full=list(SDP_QS),
    reason_contains=["boom"],
    must_not_contain=["<script>", "<img", "\x1b[", "\u202e", "\u200b", "\x07", "A" * 200],
)
def _():
    nb = reference(demo=False)
    for count in ("<script>9</script>", 10**30, True, -1, 1e308):
        cell = code_cell(HOSTILE_LABEL)
        cell["execution_count"], cell["metadata"] = count, "not a mapping"
        nb["cells"].append(cell)
    return ipynb(nb)
