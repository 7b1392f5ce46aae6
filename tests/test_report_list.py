"""The class report's student list and what it flags, laid out by headless Chromium (one render
for every assertion): a row per submission with its score, status, the questions that lost
points and a link to its feedback page, sorted by a click on a header; untouched templates,
the kit's faults and the roster's students with no submission under "Needs a look"; headers
that say what they count; long tables folded; the last regrade's changes. And the judge's
flag for an untouched template, on the kit's own templates and references."""

import csv
import json

import pytest

from autograder import config
from autograder.audit import examples as examples_mod
from autograder.judge import detect
from autograder.judge.notebook import load_submission
from autograder.messages import t
from conftest import run_cli
from test_report import rendered

LANG = "pt-BR"
CHECKS = [f"test_part_{n:02d}" for n in range(12)]  # 12 checks of q1: the checks table folds after 8
PEOPLE = {
    "s01": ("Ana Souza", "ana@example.edu", "1001"),
    "s02": ("Bruno Lima", "bruno@example.edu", "1002"),
    "s03": ("Carla Dias", "", "1003"),
    "s06": ("Davi Reis", "", "1006"),
}
# id: (q1 of 2, q2 of 3, status, flags)
CLASS = {
    "s01": (2, 3, "graded", {}),
    "s02": (1, 3, "graded", {}),
    "s03": (0, 0, "graded", {"untouched": True}),
    "s04": (0, 0, "internal_error", {}),
    "s05": (0, 0, "not_graded", {"not_graded": "hw.pdf is not a notebook"}),
    "s06": (2, 2, "graded", {}),
    "s07": (1, 1, "graded", {}),
    "s08": (0, 1, "graded", {}),
    "s09": (2, 1.5, "graded", {}),
}


def _results(sid, q1, q2, status, flags):
    failed = {"s03": CHECKS, "s02": CHECKS[:1], "s07": CHECKS[:3], "s08": CHECKS}.get(sid, [])
    checks = [{"question": "q1", "check": c, "cases": 1, "failed": int(c in failed), "causes": []} for c in CHECKS]
    data = {
        "score": q1 + q2,
        "assignment": "toy",
        "tests": [{"name": "q1", "score": q1, "max_score": 2.0}, {"name": "q2", "score": q2, "max_score": 3.0}],
        "extra_data": {"status": status, "language": LANG, "checks": checks, "causes": [], "flags": flags},
    }
    if sid in PEOPLE:
        name, email, num = PEOPLE[sid]
        data["extra_data"]["submitters"] = [{"name": name, "email": email, "sid": num}]
    return data


def _write_csv(path, header, rows):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """The report of a small class (OUT), written outside it (links go back into OUT)."""
    root = tmp_path_factory.mktemp("list")
    out = root / "OUT"
    rows = []
    for sid, (q1, q2, status, flags) in CLASS.items():
        (out / sid).mkdir(parents=True)
        (out / sid / "results.json").write_text(json.dumps(_results(sid, q1, q2, status, flags)))
        if sid != "s05":  # a submission with no feedback page gets no link
            (out / sid / "feedback.html").write_text(f"<p>{sid}</p>")
        name, email, num = PEOPLE.get(sid, ("", "", ""))
        rows.append([sid, f"{sid}.ipynb", "toy", name, email, num, status, "", q1, q2, q1 + q2, 2, 3, 5])
    header = ["id", "path", "assignment", "name", "email", "sid", "status", "reason", "q1", "q2", "total"]
    _write_csv(out / "grades.csv", header + ["q1_max", "q2_max", "total_max"], rows)
    _write_csv(
        out / "changes.csv",
        ["id", "student", "question", "old_score", "new_score", "why"],
        [
            ["s02", "Bruno Lima", "q1", "2.0", "1.0", "suites changed"],
            ["s06", "Davi Reis", "q2", "3.0", "2.0", "grading.yml changed"],
            ["s06", "Davi Reis", "q1", "1.0", "2.0", "grading.yml changed"],
        ],
    )
    _write_csv(out / "not_submitted.csv", ["name", "email", "sid", "assignment"], [["Eva Nunes", "", "1009", "toy"]])
    target = root / "pages" / "report.html"
    proc = run_cli("report", out, "--out", target, "--lang", LANG)
    target.with_suffix(".txt").write_text(proc.stdout, encoding="utf-8")  # the terminal summary
    return target


PROBE = """<script>
(function () {
  function texts(list) { return Array.prototype.map.call(list, function (e) { return e.textContent.trim(); }); }
  var toy = document.querySelector('section[data-assignment="toy"]'), list = toy.querySelector("table.students");
  function order() {
    return Array.prototype.map.call(list.querySelectorAll("tr[data-row]"), function (r) { return r.dataset.id; });
  }
  var found = {order: order(), heads: texts(list.querySelectorAll("th")),
               summary: texts(toy.querySelectorAll("table.summary th")),
               checksHeads: texts(toy.querySelector("table.checks").querySelectorAll("th"))};
  found.rows = Array.prototype.map.call(list.querySelectorAll("tr[data-row]"), function (r) {
    var a = r.querySelector("a");
    return {id: r.dataset.id, status: r.dataset.status, flagged: r.classList.contains("flag"),
            cells: texts(r.cells), href: a ? a.getAttribute("href") : null, h: r.getBoundingClientRect().height,
            bg: getComputedStyle(r.cells[0]).backgroundColor};
  });
  var th = list.querySelectorAll("th");
  th[2].click(); found.scoreUp = order();
  th[2].click(); found.scoreDown = order(); found.arrow = th[2].getAttribute("aria-sort");
  th[1].click(); found.byStudent = order();
  var checks = toy.querySelector("table.checks"), folded = checks.nextElementSibling;
  found.checksShown = checks.querySelectorAll("tr[data-check]").length;
  found.checksShownHeight = checks.getBoundingClientRect().height;
  found.fold = {tag: folded.tagName, n: folded.dataset.folded, summary: folded.querySelector("summary").textContent,
                rows: folded.querySelectorAll("tr[data-check]").length,
                closed: folded.getBoundingClientRect().height, seen: folded.querySelector("table").checkVisibility()};
  folded.open = true;
  found.fold.opened = folded.getBoundingClientRect().height;
  found.fold.seenOpen = folded.querySelector("table").checkVisibility();
  found.look = Array.prototype.map.call(document.querySelectorAll("table.look tr[data-look]"), function (r) {
    return [r.dataset.kind].concat(texts(r.cells));
  });
  var changes = document.querySelector("table.changes");
  found.changes = {n: changes.dataset.changes, rows: Array.prototype.map.call(
    changes.querySelectorAll("tr[data-change]"), function (r) { return texts(r.cells); }),
    title: document.getElementById("changes").textContent, top: changes.getBoundingClientRect().top,
    list: list.getBoundingClientRect().top};
  var pre = document.createElement("pre"); pre.id = "probe"; pre.textContent = JSON.stringify(found);
  document.body.appendChild(pre);
})();
</script>"""


def _score(sid):
    q1, q2, _, _ = CLASS[sid]
    return q1 + q2


@pytest.mark.slow
def test_the_student_list_its_flags_folds_and_changes_in_chromium(page, tmp_path):
    seen = rendered(page, tmp_path, PROBE)
    ids = sorted(CLASS)
    # one row per submission, by id; each laid out, linked to its feedback page (from where the page is)
    assert seen["order"] == ids
    rows = {r["id"]: r for r in seen["rows"]}
    assert all(r["h"] > 10 for r in rows.values())
    for sid, r in rows.items():
        if sid == "s05":
            assert r["href"] is None
        else:
            assert r["href"] == f"../OUT/{sid}/feedback.html" and (page.parent / r["href"]).is_file(), r
    assert rows["s01"]["cells"] == ["s01", "Ana Souza", "5 / 5", t("report_status_graded", LANG), ""]
    assert rows["s02"]["cells"][2:] == ["4 / 5", t("report_status_graded", LANG), "q1 −1"]
    assert rows["s07"]["cells"][4] == "q1 −1, q2 −2"
    # the untouched template, the kit's fault and the file not graded say so, and stand out
    assert (rows["s03"]["status"], rows["s03"]["cells"][3]) == ("untouched", t("report_status_untouched", LANG))
    assert rows["s04"]["cells"][3] == t("report_status_internal_error", LANG)
    assert rows["s05"]["cells"][3] == t("report_status_not_graded", LANG)
    flagged = {sid for sid, r in rows.items() if r["flagged"]}
    assert flagged == {"s03", "s04", "s05"}
    assert rows["s03"]["bg"] != rows["s01"]["bg"]
    # sorted by a click: score up, then down (ties keep their order), then by student
    up = sorted(ids, key=_score)
    assert seen["scoreUp"] == up and seen["scoreDown"] == sorted(ids, key=lambda s: -_score(s))
    assert seen["arrow"] == "descending"
    assert seen["byStudent"] == sorted(seen["scoreDown"], key=lambda s: PEOPLE.get(s, ("",))[0])
    # headers say what they count
    assert t("report_at_full", LANG) in seen["summary"] and t("report_at_full", LANG).startswith("%")
    assert t("report_at_full", "en") == "share at full marks"
    assert seen["checksHeads"][2:] == [t("report_failing", LANG), t("report_share", LANG)]
    assert seen["heads"] == [
        t(k, LANG) for k in ("report_submission", "report_student", "report_score", "report_status", "report_lost")
    ]
    # 12 failing checks: the top 8 shown, 4 folded, hidden until opened
    assert seen["checksShown"] == 8 and seen["checksShownHeight"] > 8 * 15
    assert seen["fold"]["tag"] == "DETAILS" and seen["fold"]["n"] == "4" and seen["fold"]["rows"] == 4
    assert seen["fold"]["summary"] == t("report_more_rows", LANG, n=4)
    fold = seen["fold"]
    assert not fold["seen"] and fold["seenOpen"] and fold["closed"] < 40 and fold["opened"] > fold["closed"] + 4 * 15
    # needs a look: the kit's fault first, then the others by id, then who did not submit
    look = [(r[0], r[1]) for r in seen["look"]]
    assert look == [
        ("internal_error", "s04"),
        ("untouched", "s03"),
        ("not_graded", "s05"),
        ("not_submitted", "Eva Nunes"),
    ]
    assert seen["look"][1][3] == t("report_look_untouched", LANG)
    assert seen["look"][3][2:] == ["toy", t("report_look_not_submitted", LANG)]
    # the last regrade: two submissions, three scores, each with why (in the page's language), above the lists
    assert seen["changes"]["title"] == t("report_changes", LANG) and seen["changes"]["n"] == "2"
    assert seen["changes"]["rows"] == [
        ["s02", "Bruno Lima", "q1", "2", "1", t("report_why_suites", LANG)],
        ["s06", "Davi Reis", "q2", "3", "2", t("report_why_settings", LANG)],
        ["s06", "Davi Reis", "q1", "1", "2", t("report_why_settings", LANG)],
    ]
    assert seen["changes"]["top"] < seen["changes"]["list"]
    # the terminal summary says the same
    summary = page.with_suffix(".txt").read_text(encoding="utf-8")
    assert f"{t('report_changes', LANG)}: 2 {t('report_submissions', LANG)}" in summary
    assert f"{t('report_look', LANG)}: 4" in summary and f"Eva Nunes: {t('report_look_not_submitted', LANG)}" in summary


def test_the_judge_flags_the_untouched_template_and_nothing_else():
    cfg = config.load()
    for a in cfg.assignments:
        folder = examples_mod.EXAMPLES / a
        for name, untouched in (("template", True), ("reference", False)):
            sub = load_submission(folder / f"{name}.ipynb", cfg.assignments, cfg=cfg)
            assert detect.untouched(sub, a, cfg) is untouched, (a, name)
            if untouched:  # one stub written is the student's own attempt
                cell = next(c for c in sub.cells if "raise NotImplementedError" in c.source)
                cell.source = cell.source.replace("raise NotImplementedError", "return None  #", 1)
                assert not detect.untouched(sub, a, cfg), a
