"""Regrades that say what changed: `grade --resume` keeps a result only while what scores it
(the hidden suites, the reference, grading.yml's scoring settings) is unchanged
(`autograder.grade.fingerprint`), and OUT/changes.csv lists the scores the regrade moved."""

import csv
import shutil

import pytest
import yaml

from autograder import config, layout
from autograder.audit import examples as examples_mod
from autograder.grade import changes, fingerprint
from conftest import ROOT, run_cli

SDP = examples_mod.EXAMPLES / "scaled_dot_product"


def _cfg(tmp_path, change=None, name="grading.yml"):
    """The kit's grading.yml, changed by `change(data)`, as a course's own file."""
    data = yaml.safe_load((ROOT / "grading.yml").read_text())
    if change:
        change(data)
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return config.load(path)


def test_the_settings_fingerprint_moves_with_what_scores_and_only_that(tmp_path):
    base = _cfg(tmp_path, name="base.yml")
    a, other = "scaled_dot_product", "multi_head"

    def moved(change, name):
        cfg = _cfg(tmp_path, change, name)
        return {x: fingerprint.settings(cfg, x) != fingerprint.settings(base, x) for x in (a, other)}

    scoring = {
        "points": lambda d: d["assignments"][a]["questions"].update(padding_mask=3),
        "tolerance": lambda d: d["tolerances"]["float32"].update(atol=1e-4),
        "weight": lambda d: d["scoring"].update(weights={"causal_mask": {"test_device_argument": 2}}),
        "limit": lambda d: d["limits"].update(cpu_seconds_per_call=30),
        "device": lambda d: d["devices"].update(cpu=["float64", "float32"]),
    }
    for n, (what, change) in enumerate(scoring.items()):
        assert moved(change, f"s{n}.yml") == {a: True, other: what != "points"}, what
    for n, change in enumerate(
        [
            lambda d: d["assignments"][a].update(title="Another title"),
            lambda d: d.update(language="en"),
            lambda d: d["ci"].update(pass_fraction=0.9),
            lambda d: d["limits"].update(export_metadata_mb=32),
            lambda d: d["assignments"]["transformer_block"]["run"].update(steps=500),  # another's run
        ]
    ):
        assert moved(change, f"n{n}.yml") == {a: False, other: False}, n
    lab = _cfg(tmp_path, lambda d: d["assignments"]["transformer_block"]["run"].update(steps=500), "run.yml")
    assert fingerprint.settings(lab, "transformer_block") != fingerprint.settings(base, "transformer_block")
    assert fingerprint.settings(lab, "seq2seq_attention") == fingerprint.settings(base, "seq2seq_attention")


def test_the_suites_fingerprint_moves_with_the_assignments_suites_the_shared_files_and_its_reference(
    tmp_path, monkeypatch
):
    private = tmp_path / "private"
    shutil.copytree(layout.PRIVATE, private, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(layout, "PRIVATE", private)
    monkeypatch.setattr(layout, "SUITES", private / "suites")
    monkeypatch.setattr(layout, "ASSIGNMENTS", private / "assignments")
    monkeypatch.setattr(layout, "SOLUTIONS", private / "solutions")
    names = ("scaled_dot_product", "multi_head")
    before = {a: fingerprint.suites(a) for a in names}

    def touch(path):
        path.write_text(path.read_text() + "\n# changed\n")
        now = {a: fingerprint.suites(a) != before[a] for a in names}
        before.update({a: fingerprint.suites(a) for a in names})
        return now

    assert touch(private / "assignments" / "scaled_dot_product" / "test_padding_mask.py") == {
        "scaled_dot_product": True,
        "multi_head": False,
    }
    assert touch(private / "solutions" / "multi_head.py") == {"scaled_dot_product": False, "multi_head": True}
    assert touch(private / "suites" / "value_checks.py") == {"scaled_dot_product": True, "multi_head": True}
    # the catalog and the battery cases in the assignment's folder are the audit's: they score nothing
    assert touch(layout.catalog("multi_head") / "mha_no_out_proj.py") == {
        "scaled_dot_product": False,
        "multi_head": False,
    }
    assert touch(private / "assignments" / "scaled_dot_product" / "battery.py") == {
        "scaled_dot_product": False,
        "multi_head": False,
    }
    (private / "assignments" / "multi_head" / "new_helper.py").write_text("X = 1\n")  # a file added counts too
    assert {a: fingerprint.suites(a) != before[a] for a in names} == {"scaled_dot_product": False, "multi_head": True}


def _result(scores, fp, people=()):
    return {
        "score": sum(scores.values()),
        "tests": [{"name": q, "score": s, "max_score": 2.0} for q, s in scores.items()],
        "extra_data": {"fingerprint": fp, "submitters": list(people)},
    }


def test_why_and_which_scores_moved():
    fp = {"suites": "a", "settings": "b"}
    old = _result({"q1": 1.0, "q2": 2.0}, fp)
    assert changes.why(old, fp) is None
    assert changes.why(old, {"suites": "A", "settings": "b"}) == "suites changed"
    assert changes.why(old, {"suites": "a", "settings": "B"}) == "grading.yml changed"
    assert changes.why(old, {"suites": "A", "settings": "B"}) == "suites changed; grading.yml changed"
    assert changes.why({"tests": []}, fp) == "graded by an older kit"
    assert changes.why({"tests": []}, None) is None  # no assignment to score it: nothing to compare
    new = _result({"q1": 1.0, "q2": 3.0, "q3": 0.0}, fp, [{"name": "=Ana", "sid": "1"}, {"name": "Bia"}])
    assert changes.moved(old, new) == [("q2", 2.0, 3.0), ("q3", None, 0.0)]
    assert changes.rows([("s1", old, new, "grading.yml changed"), ("s2", old, old, "suites changed")]) == [
        ["s1", "'=Ana; Bia", "q2", 2.0, 3.0, "grading.yml changed"],
        ["s1", "'=Ana; Bia", "q3", "", 0.0, "grading.yml changed"],
    ]


def _changes(out):
    with open(out / changes.CHANGES_NAME, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def _by_id(out):
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        return {r["id"]: r for r in csv.DictReader(f)}


@pytest.mark.slow
def test_a_points_change_then_resume_regrades_and_changes_csv_lists_exactly_the_scores_that_moved(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    for name in ("reference", "padding_mask_off_by_one"):
        shutil.copy(SDP / f"{name}.ipynb", subs / f"{name}.ipynb")
    out = tmp_path / "out"
    run_cli("grade", subs, "--out", out, "--no-progress", "--jobs", "2")
    assert not (out / changes.CHANGES_NAME).exists()
    first = _by_id(out)
    # the same settings: nothing regraded, the file says so
    stamps = {p: p.stat().st_mtime_ns for p in out.glob("*/results.json")}
    run_cli("grade", subs, "--out", out, "--no-progress", "--jobs", "2", "--resume")
    assert {p: p.stat().st_mtime_ns for p in out.glob("*/results.json")} == stamps
    assert _changes(out) == [list(changes.COLUMNS)]
    # padding_mask is worth 3 rather than 2 in the course's grading.yml
    course = _cfg(tmp_path, lambda d: d["assignments"]["scaled_dot_product"]["questions"].update(padding_mask=3))
    proc = run_cli(
        "grade",
        subs,
        "--out",
        out,
        "--no-progress",
        "--jobs",
        "2",
        "--resume",
        env={"KIT_GRADING_YML": str(course.path)},
    )
    assert "(done before)" not in proc.stdout + proc.stderr
    assert all(p.stat().st_mtime_ns != stamps[p] for p in stamps)  # every one regraded
    now = _by_id(out)
    assert all(r["padding_mask_max"] == "3.0" for r in now.values())
    expected = [
        [sid, "", "padding_mask", first[sid]["padding_mask"], now[sid]["padding_mask"], "grading.yml changed"]
        for sid in sorted(first, key=lambda s: first[s]["path"])
        if float(first[sid]["padding_mask"]) > 0
    ]
    # those with marks on padding_mask gain half of them; the off-by-one, without, is no row
    assert {r[0] for r in expected} == {"reference"}
    assert all(float(r[4]) == pytest.approx(1.5 * float(r[3])) for r in expected)
    header, *rows = _changes(out)
    assert header == list(changes.COLUMNS)
    assert sorted(rows) == sorted(expected)
    # and the class report shows them, first
    run_cli("report", out, "--lang", "en")
    page = (out / "report.html").read_text(encoding="utf-8")
    assert 'data-changes="1"' in page and page.index('id="changes"') < page.index('class="students')
    assert 'data-change="reference"' in page and 'data-change="padding_mask_off_by_one"' not in page
