"""The judge side holds against what a worker or a student's text can send it."""

import json
import os
import re
import struct

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from autograder import config, release, text
from autograder.audit import hostile
from autograder.protocol import wire
from conftest import ROOT, run_cli

# the scaled_dot_product total, from grading.yml
SDP_FULL = sum(config.load(ROOT / "grading.yml").questions("scaled_dot_product").values())


def _body(header_bytes, payload=b""):
    return struct.pack(">I", len(header_bytes)) + header_bytes + payload


@pytest.mark.parametrize(
    "header",
    [
        b"[" * 100_000 + b"]" * 100_000,  # nesting the JSON parser cannot follow
        b'{"$dict": 5}',
        b'{"$tuple": 7}',
        b'{"$float": "abc"}',
        b'{"$float": 1}',
        b'{"$t": 0, "dtype": "float32", "shape": "x"}',
        b'{"$t": 0, "dtype": "float32", "shape": [3]}',
        b'{"$t": 0, "dtype": "nope", "shape": [1]}',
        b'{"$dict": {"a": {"$zzz": 1}}}',
        b"\xff\xfe",
        b"",
    ],
)
def test_every_forged_reply_is_a_wire_error(header):
    with pytest.raises(wire.WireError):
        wire.decode(_body(header))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_decoding_arbitrary_bytes_gives_a_value_or_a_wire_error(data):
    try:
        wire.decode(data)
    except wire.WireError:
        pass


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["$t", "$tuple", "$dict", "$float", "$other", "dtype", "shape", "x"]), inner, max_size=4
        )
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(json_values, st.binary(max_size=64))
def test_decoding_arbitrary_headers_gives_a_value_or_a_wire_error(value, payload):
    try:
        wire.decode(_body(json.dumps(value).encode(), payload))
    except wire.WireError:
        pass


def test_round_trip_still_exact():
    value = {"a": (torch.arange(6.0).reshape(2, 3), [torch.ones(2, dtype=torch.bool)]), "n": float("nan")}
    back = wire.decode(memoryview(wire.encode(value))[8:])
    assert torch.equal(back["a"][0], value["a"][0]) and back["a"][1][0].dtype == torch.bool


@pytest.mark.parametrize("raw", ["a\nb", "\x1b[31mred", "x\r\ny", "\ud800 lone", "\u202etxt", "a" * 10_000])
def test_student_text_becomes_one_bounded_printable_line(raw):
    line = text.one_line(raw, 100)
    assert "\n" not in line and "\r" not in line and "\x1b" not in line and len(line) <= 100
    line.encode("utf-8")  # never a lone surrogate


def test_markdown_of_student_text_cannot_start_the_graders_lines():
    import re

    md = text.markdown("### 10 / 10\n| a | b |\n![x](y) <img src=x> ::warning::x `code`")
    assert "\n" not in md
    for special in "#|![]<>`":
        assert not re.search(r"(?<!\\)" + re.escape(special), md), (special, md)


@pytest.mark.slow
def test_ci_summary_and_results_of_an_injecting_notebook_stay_the_graders(tmp_path):
    case = next(c for c in hostile.CASES if c.name == "feedback_injection")
    suffix, data = case.build()
    notebook = tmp_path / f"scaled_dot_product{suffix}"
    notebook.write_bytes(data)
    summary = tmp_path / "summary.md"
    proc = run_cli("ci", notebook, "--out", tmp_path / "grading", "--summary", summary, check=False)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    lines = summary.read_text().splitlines()
    # the case loses 2 points (causal_mask) of the assignment's total
    assert [line for line in lines if line.startswith("#")] == [
        lines[0]
    ] and f"{SDP_FULL - 2:g} / {SDP_FULL:g}" in lines[0]
    rows = [line for line in lines if line.startswith("|")]
    n = len(config.load(ROOT / "grading.yml").questions("scaled_dot_product"))
    assert len(rows) == 2 + n, rows  # header, rule, one row per question
    assert not any(line.startswith(("::", "<", "!", "\x1b")) for line in lines)
    assert not any(line.startswith(("::", "\x1b")) for line in proc.stdout.splitlines())
    results = json.loads((tmp_path / "grading" / "results.json").read_text())
    assert results["output_format"] == "md" and results["score"] == SDP_FULL - 2
    for t in results["tests"]:  # Markdown that Gradescope renders: nothing of the student's acts as Markdown or HTML
        for line in t["output"].splitlines():
            assert not line.startswith(("#", "|", "!", "<", "::", "\x1b", ">")), line
            assert not re.search(r"(?<!\\)[`<>|#!\[\]]", line.replace("**", "")), line


@pytest.mark.skipif(os.geteuid() != 0 and not os.environ.get("CI"), reason="control groups need a root judge")
def test_groups_left_by_a_judge_that_died_are_swept(tmp_path):
    from autograder.sandbox import cgroup

    found = cgroup.layout()
    assert found, "as root, the judge makes control groups (CI runs as root)"
    parent = found[0][1]
    dead = 2**22 + 12345  # above pid_max: no such process
    left = parent / f"kit-{dead}-0"
    left.mkdir()
    mine = parent / f"kit-{os.getpid()}-999"
    mine.mkdir()
    try:
        cgroup.sweep(parent)
        assert not left.exists() and mine.exists()
    finally:
        for d in (left, mine):
            if d.exists():
                d.rmdir()


@pytest.mark.slow
def test_a_notebook_cannot_choose_its_assignment_through_its_metadata(tmp_path):
    from autograder.audit import examples as examples_mod

    nb = json.loads((examples_mod.EXAMPLES / "scaled_dot_product" / "reference.ipynb").read_text())
    nb["metadata"].setdefault("otter", {})["assignment_name"] = "classic_attention"
    for cell in nb["cells"]:
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        cell["source"] = src.replace(
            'otter.Notebook("scaled_dot_product.ipynb")', 'otter.Notebook("classic_attention.ipynb")'
        )
    notebook = tmp_path / "hw.ipynb"
    notebook.write_text(json.dumps(nb))
    proc = run_cli("ci", notebook, "--out", tmp_path / "grading", "--summary", tmp_path / "s.md", check=False)
    results = json.loads((tmp_path / "grading" / "results.json").read_text())
    assert {t["name"] for t in release.scored(results["tests"])} == set(
        config.load(ROOT / "grading.yml").questions("scaled_dot_product")
    )
    assert results["score"] == SDP_FULL and "metadata names the classic_attention assignment" in results["output"], (
        proc.stdout
    )
