"""The mutation audit: every catalog bug is caught on its questions, every
correct variant keeps full marks, and no public check catches a bug that no hidden
check charges (a change that weakens a hidden test fails here).

The catalog is graded once for the whole run (conftest's `catalog_graded`, in the
course's edition, pt-BR), each entry's public checks run in its grading's worker after
the last verdict and kept as data, as `python -m autograder audit` runs them
(`catalog_public`); this test makes the audit's verdicts and report from them with the
audit's own functions."""

import io
import re

import pytest

from autograder import config
from autograder.audit import causes
from autograder.audit import run as audit_run
from conftest import ROOT, run_cli

CFG = config.load(ROOT / "grading.yml")


@pytest.mark.slow
def test_audit_catches_every_bug_and_passes_every_correct_variant(catalog_graded, catalog_public):
    chosen = [e for e, _ in catalog_graded]
    flagged = [catalog_public[(e.assignment, e.name)][1] for e in chosen]
    rows = audit_run.verdicts(chosen, [data for _, data in catalog_graded], flagged, CFG)
    fits = causes.fits(chosen, [data for _, data in catalog_graded])
    out = io.StringIO()
    bad = audit_run.report(rows, CFG, out=out, fits=fits)
    text = out.getvalue()
    print(text[text.index("(* marks") :])  # the figures, for `pytest -s` and the log of a failure
    weaker = [f"{e.assignment}/{e.name} on {q} ({check})" for e, q, check in audit_run.weaker_than_public(rows, CFG)]
    assert not weaker, f"a public check catches what no hidden check charges: {weaker}"
    assert bad == 0, text[-5000:]
    caught = re.search(r"caught on their questions: (\d+)/(\d+)", text)
    correct = re.search(r"correct entries at full marks: (\d+)/(\d+)", text)
    assert caught and caught.group(1) == caught.group(2) and int(caught.group(2)) >= 50
    assert correct and correct.group(1) == correct.group(2) and int(correct.group(2)) >= 8
    rate = re.search(r"likely-cause rate .*?: (\d+)/(\d+)", text)
    assert rate and int(rate.group(1)) >= 0.9 * int(rate.group(2)), "at least 90% of caught bugs get a likely cause"
    real = re.search(r"likely-cause rate on real code .*?: (\d+)/(\d+)", text)
    assert real and int(real.group(2)) >= 20 and int(real.group(1)) >= 0.9 * int(real.group(2)), (
        "at least 90% of the caught bugs from real tutorial and library code get a likely cause"
    )
    assert "CHARGED AGAIN" not in text, "a bug costs points only on the questions of the functions it defines"
    assert all(data["extra_data"]["language"] == "pt-BR" for _, data in catalog_graded)


def test_the_audit_command_refuses_an_unknown_assignment_in_one_line():
    proc = run_cli("audit", "--assignment", "no_such_assignment", check=False)
    assert proc.returncode == 2 and proc.stderr.strip() == "unknown assignment 'no_such_assignment'", proc.stderr


def test_the_catalog_reads_the_listed_assignments_and_keeps_a_coming_one_apart():
    """A catalog folder is an assignment grading.yml lists, or one still to come (its
    reference in the private root, not listed yet): the audit reads only the listed ones,
    and a coming one's entries still load (their headers and definitions)."""
    from autograder import layout
    from autograder.audit import catalog

    listed = set(config.load(ROOT / "grading.yml").assignments)
    folders = {p.name for p in layout.ASSIGNMENTS.iterdir() if layout.catalog(p.name).is_dir()}
    coming = folders - listed
    assert all((layout.SOLUTIONS / f"{name}.py").is_file() for name in folders), sorted(folders)
    assert {e.assignment for e in catalog.entries()} == listed & folders
    for name in coming:
        loaded = catalog.entries(name)
        assert loaded and all(e.questions and e.functions for e in loaded), name


def test_every_declared_cause_is_a_catalog_key_and_some_entries_declare_one():
    """A catalog entry's `causes:` header names message keys (the audit compares them with the
    judge's cause keys): a typo would make every cause of that entry look wrong."""
    from autograder import messages
    from autograder.audit import catalog

    loaded = catalog.entries()
    declared = {key for e in loaded for key in e.causes or []}
    assert declared and not declared - set(messages.catalog()), sorted(declared - set(messages.catalog()))
    assert all(not e.correct for e in loaded if e.causes is not None), "a correct entry declares no cause"


def test_the_audit_counts_causes_the_code_does_not_have_and_expected_causes():
    """From the judge's plain data (check records and cause keys): a failing check whose cause
    the entry did not declare is a cause not in the code, a caught entry must show one of its
    declared causes on a targeted question, an entry declaring `causes: []` must show none, and
    an entry with no `causes:` line is counted apart."""
    from autograder.audit.catalog import Entry

    def entry(name, declared):
        return Entry(
            "transformer_block", name, ROOT, "", False, ["DecoderBlock"], ["decoder_block"], False, {}, causes=declared
        )

    def data(*checks):
        keys = sorted({k for _, _, ks in checks for k in ks})
        records = [
            {"question": q, "check": check, "failed": 1, "causes": [keys.index(k) for k in ks]}
            for q, check, ks in checks
        ]
        records.append({"question": "decoder_block", "check": "test_passing", "failed": 0, "causes": []})
        return {"extra_data": {"causes": [{"key": k} for k in keys], "checks": records}}

    right = data(("decoder_block", "test_values", ["cause_tb_masks_or"]), ("training_run", "test_run", []))
    second = data(("decoder_block", "test_values", ["cause_tb_masks_or"]), ("decoder_block", "test_pad", ["cause_x"]))
    elsewhere = data(("training_run", "test_run", ["cause_tb_masks_or"]), ("decoder_block", "test_values", []))
    entries = [
        entry("right", ["cause_tb_masks_or"]),
        entry("second", ["cause_tb_masks_or"]),
        entry("elsewhere", ["cause_tb_masks_or"]),
        entry("undeclared", None),
        entry("silent", []),
        entry("silent_named", []),
    ]
    silent = data(("decoder_block", "test_vectorised", []))
    fits = causes.fits(entries, [right, second, elsewhere, right, silent, right])
    assert [fits[("transformer_block", e.name)].unfit for e in entries] == [
        [],
        [("decoder_block", "test_pad", "cause_x")],
        [],
        [],
        [],
        [("decoder_block", "test_values", "cause_tb_masks_or")],
    ]
    assert [fits[("transformer_block", e.name)].expected for e in entries] == [True, True, False, False, True, False]
    rows = [(e, {}, {}, "caught", None) for e in entries]
    lines, faults = causes.figures(rows, fits)
    # the stray second cause, the expected cause shown only off its questions, a cause where none fits (twice:
    # not in the code, and not the expected none)
    assert faults == 4, lines
    assert lines[0].startswith("failing checks showing a cause the entry's code does not have: 2 ")
    assert "(entries declaring their causes: 5/6)" in lines[0]
    assert (
        lines[1]
        == "caught entries with their expected cause: 3/5 (1 of them expecting none: their symptoms name the bug)"
    )
    assert "CAUSE NOT IN THE CODE: second decoder_block::test_pad: cause_x" in lines[2]
    assert "CAUSE NOT IN THE CODE: silent_named decoder_block::test_values: cause_tb_masks_or" in lines[3]
    assert "NO EXPECTED CAUSE: elsewhere" in lines[4]
    assert "NO EXPECTED CAUSE: silent_named (expects none)" in lines[5]
    out = io.StringIO()
    assert audit_run.report(rows, CFG, out=out, fits=fits) == 4  # the audit's exit status counts them
    assert "caught entries with their expected cause: 3/5" in out.getvalue()
