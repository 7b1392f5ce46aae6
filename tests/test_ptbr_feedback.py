"""A pt-BR build emits no English to a student: every buggy and correct entry of
the catalog, filled into the pt-BR edition of its assignment, is graded (once for
the whole run: conftest's `catalog_graded`, which the audit reads too), and every
line of its feedback (summaries, likely causes, failures, notes) is read for
English words outside code."""

import pytest

from ptbr import english_in


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
