"""A pt-BR build emits no English to a student: every buggy and correct entry of
the catalog, filled into the pt-BR edition of its assignment, is graded (once for
the whole run: conftest's `catalog_graded`, which the audit reads too), and every
line of its feedback (summaries, likely causes, failures, notes) is read for
English words outside code."""

import re

import pytest

# Common English words that no Portuguese sentence of the kit uses; the course's
# English terms (query, key, value(s), shape, batch, softmax, scores, padding) are not here.
ENGLISH = set(
    """the expected differ should must likely cause returned instead is are was were of and or but this
that which because every each from than into over only its it does has have give gives returns got not with when
row rows been be an there their they what why how these those would could""".split()
)
CODE = re.compile(r"`[^`]*`|\b\w+(?:\.\w+)+\(?|\.?\b\w+\(|\.\w+")  # code spans, dotted names, calls, attributes


def english_in(line):
    """English words in a feedback line, outside code and outside the text of an error
    the student's own code raised (torch's messages are English)."""
    line = re.sub(r"(lançou|raised) [\w.]+( \([^)]*\))?: .*?(?=(Causa provável|$))", " ", line.replace("\\", ""))
    return sorted(set(re.findall(r"\b[a-z]+\b", CODE.sub(" ", line).lower())) & ENGLISH)


def test_the_detector_finds_english():
    assert english_in("FAIL test_x: 3 of 9 values differ from the reference") == ["differ", "from", "of", "the"]
    assert english_in("Causa provável: use torch.where(row.any(-1), w, 0)") == []


@pytest.mark.slow
def test_every_line_of_pt_br_feedback_is_portuguese(catalog_graded):
    assert len(catalog_graded) >= 100
    leaks = []
    for entry, data in catalog_graded:
        assert data["extra_data"]["language"] == "pt-BR", entry.name
        for text in [data.get("output", "")] + [t["output"] for t in data.get("tests", [])]:
            leaks += [
                f"{entry.assignment}/{entry.name}: {english_in(line)}: {line[:160]}"
                for line in text.splitlines()
                if english_in(line)
            ]
    assert not leaks, "\n".join(leaks[:20])
