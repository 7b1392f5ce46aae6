"""The class report (`python -m autograder report OUT`): its numbers against
ones computed by hand on a small folder (synthetic results.json files of an
assignment `toy`, beside one submission really graded), the page rendered in
headless Chromium (every figure drawn, the numbers it shows equal to
grades.csv's), both languages, byte-identical reruns, the Canvas and Moodle
exports, bad input, and the public part of the kit.
"""

import csv
import html
import json
import math
import os
import re
import shutil
import subprocess
import sys

import pytest

from autograder import config, messages
from autograder.judge.scoring import check_label
from autograder.messages import t
from autograder.report import load, pointer, stats, words
from conftest import ROOT, run_cli

pytestmark = pytest.mark.slow  # every test here grades, builds or runs a kernel

REAL = ROOT / "examples" / "submissions" / "scaled_dot_product" / "sdpa_scaled_by_dk.ipynb"
NEW_COLUMNS = ["id", "path", "assignment", "name", "email", "sid", "status", "reason"]
TOY = {"q1": 2.0, "q2": 3.0}


# -- the folder ----------------------------------------------------------------------
def _check(question, check, failed=0, causes=()):
    return {
        "question": question,
        "check": check,
        "cases": 1,
        "failed": failed,
        "evidence_failed": 0,
        "causes": list(causes),
    }


def _cause(key, lang, questions, checks, text=None, **fields):
    """A results.json cause record; a field given as a (key, fields) pair is a message itself."""
    msgs = {k: {"key": v[0], "fields": v[1]} for k, v in fields.items() if isinstance(v, tuple)}
    texts = {k: t(v[0], lang, **v[1]) if isinstance(v, tuple) else v for k, v in fields.items()}
    record = {
        "text": text or t(key, lang, **texts),
        "key": key,
        "fields": texts if key else None,
        "questions": questions,
        "checks": checks,
    }
    if msgs:
        record["field_msgs"] = msgs
    return record


def _toy(q1, q2, *, checks, causes=(), flags=None, status="graded", lang="en", submitters=None, output=None):
    data = {
        "score": q1 + q2,
        "assignment": "toy",
        "tests": [
            {"name": "q1", "score": q1, "max_score": TOY["q1"], "output": ""},
            {"name": "q2", "score": q2, "max_score": TOY["q2"], "output": ""},
        ],
        "extra_data": {
            "status": status,
            "language": lang,
            "internal_errors": 0,
            "checks": checks,
            "causes": list(causes),
            "flags": flags or {},
        },
    }
    if submitters is not None:
        data["extra_data"]["submitters"] = submitters
    if output:
        data["output"] = output
    return data


def _toy_results():
    """{id: results.json text} of the synthetic class (see the module's expected numbers)."""
    ok = [_check("q1", "test_values"), _check("q1", "test_gradients"), _check("q2", "test_values")]
    scaled_en = _cause("cause_sdpa_not_scaled", "en", ["q1"], ["q1::test_values"])
    return {
        "toy_s1": _toy(2, 3, checks=ok, submitters=[{"name": "Ana Souza", "email": "ana@example.edu", "sid": "1001"}]),
        "toy_s2": _toy(1, 3, checks=[_check("q1", "test_values", 1, [0]), ok[1], ok[2]], causes=[scaled_en]),
        "toy_s3": _toy(
            0,
            0,
            lang="pt-BR",
            checks=[
                _check("q1", "test_values", 2, [0]),
                _check("q1", "test_gradients", 1, [1]),
                _check("q2", "test_values", 1, [2]),
            ],
            causes=[
                _cause("cause_sdpa_not_scaled", "pt-BR", ["q1"], ["q1::test_values"]),
                _cause(None, "pt-BR", ["q1"], ["q1::test_gradients"], text="os gradientes somem no meio do caminho"),
                _cause("cause_python_loop", "pt-BR", ["q2"], ["q2::test_values"], over=("loop_over_batch", {})),
            ],
        ),
        "toy_s4": _toy(
            2,
            1,
            flags={"over_budget": "the submission used up its time budget of 60 s"},
            checks=[ok[0], ok[1], _check("q2", "test_values", 1, [0])],
            causes=[_cause("cause_sdpa_not_scaled", "en", ["q2"], ["q2::test_values"])],
        ),
        "toy_s5": _toy(0, 0, status="not_graded", checks=[], flags={"not_graded": "hw.ipynb is not a notebook"}),
    }


def _write_csv(path, header, rows):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=header)
        w.writeheader()
        w.writerows(rows)


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    """One submission graded by the kit: (its id, its results.json)."""
    out = tmp_path_factory.mktemp("real")
    run_cli("grade", REAL, "--out", out, "--no-progress", "--jobs", "1")
    (folder,) = [p for p in out.iterdir() if (p / "results.json").is_file()]
    return folder.name, json.loads((folder / "results.json").read_text())


@pytest.fixture(scope="module")
def out(real, tmp_path_factory):
    """The class folder: the real submission, the toy class, one unreadable results.json
    with a grades.csv row (toy_s6), one that is neither readable nor in grades.csv (toy_s7),
    and grades.csv in the layout with assignment, identities, status and the max columns."""
    rid, rdata = real
    out = tmp_path_factory.mktemp("class") / "OUT"
    (out / rid).mkdir(parents=True)
    (out / rid / "results.json").write_text(json.dumps(rdata))
    for sid, data in _toy_results().items():
        (out / sid).mkdir()
        (out / sid / "results.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    (out / "toy_s6").mkdir()
    (out / "toy_s6" / "results.json").write_text("{not json")
    (out / "toy_s7").mkdir()
    (out / "toy_s7" / "results.json").write_text('{"tests": "oops"}')
    real_q = {t_["name"]: t_ for t_ in rdata["tests"]}
    header = NEW_COLUMNS + list(TOY) + list(real_q) + ["total"] + [f"{q}_max" for q in [*TOY, *real_q]] + ["total_max"]
    people = {
        "toy_s2": ("Bruno Lima", "bruno@example.edu", "1002"),
        "toy_s3": ("Carla Dias; Davi Reis", "carla@example.edu; davi@example.edu", "1003; 1004"),
        "toy_s5": ("Eva Nunes", "eva@example.edu", ""),
        "toy_s6": ("Fábio Rocha", "", "1006"),
    }
    rows = [
        {
            "id": rid,
            "path": str(REAL),
            "assignment": "scaled_dot_product",
            "status": "graded",
            **{q: v["score"] for q, v in real_q.items()},
            "total": rdata["score"],
            **{f"{q}_max": v["max_score"] for q, v in real_q.items()},
            "total_max": sum(v["max_score"] for v in real_q.values()),
        }
    ]
    toy = {
        **{sid: (d["tests"][0]["score"], d["tests"][1]["score"]) for sid, d in _toy_results().items()},
        "toy_s6": (1, 2),
    }
    status = {
        "toy_s4": ("partial", "the submission used up its time budget of 60 s"),
        "toy_s5": ("not_graded", "hw.ipynb is not a notebook"),
    }
    for sid, (q1, q2) in toy.items():
        name, email, num = people.get(sid, ("", "", ""))
        st, reason = status.get(sid, ("graded", ""))
        rows.append(
            {
                "id": sid,
                "path": f"{sid}.ipynb",
                "assignment": "toy",
                "name": name,
                "email": email,
                "sid": num,
                "status": st,
                "reason": reason,
                "q1": q1,
                "q2": q2,
                "total": q1 + q2,
                "q1_max": 2,
                "q2_max": 3,
                "total_max": 5,
            }
        )
    _write_csv(out / "grades.csv", header, rows)
    return out


# -- (1) the numbers, by hand ------------------------------------------------------------
def test_pearson_and_the_summary_against_hand_computed_values():
    # x = (2, 1, 0, 2, 1), y = (3, 3, 0, 1, 2): sxy = 2.2, sxx = 2.8, syy = 6.8
    assert stats.pearson([2, 1, 0, 2, 1], [3, 3, 0, 1, 2]) == pytest.approx(2.2 / math.sqrt(2.8 * 6.8))
    assert stats.pearson([1, 1, 1], [0, 1, 2]) is None  # no spread
    assert stats.pearson([0, 1], [1, 0]) is None  # two points always correlate: not reported
    s = stats.describe([5, 4, 0, 3, 3], [5] * 5)
    assert (s.count, s.mean, s.median, s.maximum) == (5, 3, 3, 5)
    assert s.sd == pytest.approx(math.sqrt(14 / 5))  # deviations 2, 1, -3, 0, 0
    assert (s.at_zero, s.at_full) == (0.2, 0.2)


def test_the_class_statistics_match_the_hand_computed_values(out, real):
    folder = load.load(out)
    by = {a.name: a for a in stats.by_assignment(folder.submissions)}
    assert list(by) == ["scaled_dot_product", "toy", None]  # toy_s7: no assignment it could be placed in
    toy = by["toy"]
    # scored: s1 5, s2 4, s3 0, s4 3 (partial: over its time budget), s6 3 (grades.csv: its results.json is broken)
    assert sorted(s.id for s in toy.scored) == ["toy_s1", "toy_s2", "toy_s3", "toy_s4", "toy_s6"]
    assert toy.left_out == 1  # s5, not graded
    s = toy.summary
    assert (s.count, s.mean, s.median, s.maximum, s.at_zero, s.at_full) == (5, 3, 3, 5, 0.2, 0.2)
    assert s.sd == pytest.approx(math.sqrt(2.8))
    q1, q2 = toy.questions
    r = 2.2 / math.sqrt(2.8 * 6.8)  # q1 = (2, 1, 0, 2, 1) against the rest (3, 3, 0, 1, 2), and the other way
    assert (q1.name, q1.mean, q1.full_credit, q1.difficulty) == ("q1", pytest.approx(1.2), 0.4, pytest.approx(0.6))
    assert (q2.name, q2.mean, q2.full_credit, q2.difficulty) == ("q2", pytest.approx(1.8), 0.4, pytest.approx(0.6))
    assert q1.discrimination == pytest.approx(r) and q2.discrimination == pytest.approx(r)
    # checks: of the 4 graded submissions with check data, most failed first, ties in question order
    assert [(c.question, c.check, c.failing, c.of) for c in toy.checks] == [
        ("q1", "test_values", 2, 4),
        ("q2", "test_values", 2, 4),
        ("q1", "test_gradients", 1, 4),
    ]
    # causes: one cause in two languages counts once per submission, by its key
    causes = {c.key or c.text: c for c in toy.causes}
    scaled = toy.causes[0]
    assert (scaled.key, scaled.count, scaled.share, scaled.questions, scaled.ids) == (
        "cause_sdpa_not_scaled",
        3,
        0.75,
        ["q1", "q2"],
        ["toy_s2", "toy_s3", "toy_s4"],
    )
    assert causes["os gradientes somem no meio do caminho"].count == 1
    assert causes["cause_python_loop"].ids == ["toy_s3"]
    assert words.cause_text(scaled, "en") == t("cause_sdpa_not_scaled", "en")
    assert words.cause_text(scaled, "pt-BR") == t("cause_sdpa_not_scaled", "pt-BR")
    # the pt-BR submission's field ("os itens do batch") is worded again in English, from its key
    assert words.cause_text(causes["cause_python_loop"], "en") == t("cause_python_loop", "en", over="the batch")
    # the real submission, alone in its assignment: a correlation of one is not one
    sdp = by["scaled_dot_product"]
    rid, rdata = real
    assert sdp.summary.count == 1 and sdp.summary.mean == pytest.approx(rdata["score"])
    assert sdp.summary.maximum == sum(t_["max_score"] for t_ in rdata["tests"])
    assert all(q.discrimination is None for q in sdp.questions)
    assert any(c.failing for c in sdp.checks) and sdp.causes  # the scale bug is named
    look = {s.id: words.reasons(s.reasons, "en") for s in folder.submissions if s.reasons}
    assert sorted(look) == ["toy_s4", "toy_s5", "toy_s6", "toy_s7"], look
    assert look["toy_s4"].startswith("stopped at its time budget: the submission used up")
    assert look["toy_s5"] == "not graded: hw.ipynb is not a notebook"
    assert look["toy_s6"].startswith("results.json cannot be read: JSONDecodeError")
    assert "`tests` is not a list" in look["toy_s7"] and "not in grades.csv" in look["toy_s7"]


# -- (2) the command, the page in a browser ------------------------------------------------
def chromium():
    """Debian's chromium: installed here when it is missing and we are root; under CI=true
    its absence fails the test (elsewhere it skips, saying why)."""
    exe = shutil.which("chromium")
    if exe is None and os.geteuid() == 0 and shutil.which("apt-get"):
        subprocess.run(
            "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium",
            shell=True,
            capture_output=True,
            timeout=1800,
        )
        exe = shutil.which("chromium")
    if exe is None:
        message = (
            "chromium is missing and could not be installed (apt-get install -y chromium): the page is not rendered"
        )
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return exe


PROBE = """<script>
(function () {
  var figures = Array.prototype.map.call(document.querySelectorAll("svg, img"), function (e) {
    var r = e.getBoundingClientRect(), b = e.getBBox ? e.getBBox() : {width: r.width, height: r.height};
    var where = e.closest("[data-figure]");
    return {w: r.width, h: r.height, bw: b.width, bh: b.height, marks: e.querySelectorAll("path, rect, use").length,
            figure: where ? where.getAttribute("data-figure") : ""};
  });
  var stats = {};
  document.querySelectorAll("section[data-assignment]").forEach(function (s) {
    var a = s.getAttribute("data-assignment"); stats[a] = {};
    s.querySelectorAll("[data-stat]").forEach(function (e) {
      var q = e.closest("[data-question]");
      stats[a][(q ? q.getAttribute("data-question") + "/" : "") + e.getAttribute("data-stat")] = e.textContent.trim();
    });
  });
  var pre = document.createElement("pre"); pre.id = "probe";
  pre.textContent = JSON.stringify({figures: figures, stats: stats, lang: document.documentElement.lang});
  document.body.appendChild(pre);
})();
</script>"""


def rendered(page, tmp_path, script=PROBE):
    """What Chromium laid out for the report `page`: the findings of the probe `script` (by
    default: sizes of every figure, the text of every data-stat number), from the DOM it dumps
    after load, where the script leaves them as JSON in <pre id="probe">."""
    exe = chromium()
    probe = tmp_path / "probe.html"
    text = page.read_text(encoding="utf-8")
    assert text.count("</body>") == 1
    probe.write_text(text.replace("</body>", script + "</body>"), encoding="utf-8")
    proc = subprocess.run(
        [
            exe,
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--window-size=1200,900",
            "--virtual-time-budget=5000",
            "--dump-dom",
            probe.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    found = re.search(r'<pre id="probe">(.*?)</pre>', proc.stdout, re.S)
    assert found, f"chromium dumped no probe (exit {proc.returncode}): {proc.stderr[-2000:]}"
    return json.loads(html.unescape(found.group(1)))


def _from_csv(path):
    """{assignment: (count, mean total, {question: mean})} over grades.csv's graded rows."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r["status"] in ("graded", "partial")]
    out = {}
    for name in sorted({r["assignment"] for r in rows}):
        mine = [r for r in rows if r["assignment"] == name]
        qs = [
            q
            for q in mine[0]
            if q not in NEW_COLUMNS and not q.endswith("_max") and q != "total" and all(r[q] != "" for r in mine)
        ]
        out[name] = (
            len(mine),
            sum(float(r["total"]) for r in mine) / len(mine),
            {q: sum(float(r[q]) for r in mine) / len(mine) for q in qs},
        )
    return out


@pytest.mark.parametrize("lang", ["en", "pt-BR"])
def test_the_page_renders_every_figure_and_shows_the_numbers_of_grades_csv(out, tmp_path, lang):
    page = tmp_path / f"report-{lang}.html"
    proc = run_cli("report", out, "--out", page, "--lang", lang)
    text = page.read_text(encoding="utf-8")
    # self-contained: nothing loaded from anywhere (the SVG namespaces are names, not addresses);
    # one inline script (the student list's sorting), no other
    for forbidden in ("<script ", "<link", "@import", 'src="', 'href="http', "url(http", "<iframe"):
        assert forbidden not in text, forbidden
    assert text.count("<script>") == 1
    seen = rendered(page, tmp_path)
    assert seen["lang"] == lang
    # a score histogram per assignment with scores, and one per question (2 for toy, the real one's)
    kinds = [f["figure"] for f in seen["figures"]]
    real_questions = len(config.load(ROOT / "grading.yml").questions("scaled_dot_product"))
    assert kinds.count("scores") == 2 and kinds.count("question") == 2 + real_questions, kinds
    for f in seen["figures"]:
        assert f["w"] > 20 and f["h"] > 10 and f["bw"] > 10 and f["bh"] > 10 and f["marks"] >= 5, f
    for name, (count, mean, questions) in _from_csv(out / "grades.csv").items():
        shown = seen["stats"][name]
        assert int(shown["count"]) == count, (name, shown)
        # a number reads as the page's language writes it (pt-BR: a decimal comma)
        assert float(shown["mean"].replace(",", ".")) == pytest.approx(mean, abs=0.006), (name, shown)
        assert "." not in shown["mean"] or lang == "en", shown
        for q, m in questions.items():
            assert float(shown[f"{q}/q-mean"].replace(",", ".")) == pytest.approx(m, abs=0.006), (name, q, shown)
    toy = seen["stats"]["toy"]
    assert (toy["median"], toy["sd"], toy["at-zero"], toy["at-full"], toy["left-out"]) == (
        "3",
        messages.decimal("1.67", lang),
        "20%",
        "20%",
        "1",
    )
    assert toy["q1/q-difficulty"] == messages.decimal("0.6", lang) and toy["q2/q-full"] == "40%"
    assert toy["q1/q-discrimination"] == messages.decimal("0.5", lang)
    assert seen["stats"]["scaled_dot_product"]["causal_mask/q-discrimination"] == t("report_na", lang)
    # the words are the report's language, labels from the catalog
    assert f"<h1>{t('report_title', lang)}</h1>" in text and f'<html lang="{lang}">' in text
    assert html.escape(t("cause_sdpa_not_scaled", lang)) in text
    with messages.language(lang):
        assert html.escape(check_label("test_gradients")) in text
    assert html.escape(t("report_look_not_graded", lang, reason="hw.ipynb is not a notebook")) in text
    # and the terminal summary says the same
    assert t("report_title", lang) in proc.stdout
    assert f"{t('report_mean', lang)} 3 {t('report_out_of', lang)} 5" in proc.stdout
    assert f"{t('report_look', lang)}: 4" in proc.stdout


def test_the_report_is_byte_identical_across_runs_and_folders(out, tmp_path):
    run_cli("report", out, "--lang", "en")
    first = (out / "report.html").read_bytes()
    run_cli("report", out, "--lang", "en")
    assert (out / "report.html").read_bytes() == first
    moved = tmp_path / "merged"  # a merged run: the same results in another folder
    shutil.copytree(out, moved)
    (moved / "report.html").unlink()
    run_cli("report", moved, "--lang", "en")
    assert (moved / "report.html").read_bytes() == first
    ids = re.findall(r' id="([^"]+)"', first.decode())
    assert len(ids) == len(set(ids)) and len(ids) > 50  # the inline SVGs share no id


# -- (3) the LMS exports --------------------------------------------------------------
def _read(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def test_the_canvas_and_moodle_exports(out, real):
    rid, rdata = real
    proc = run_cli("report", out, "--lang", "en", "--export", "canvas", "--export", "moodle")
    total = words.num(rdata["score"], 4)
    canvas = _read(out / "canvas.csv")
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "scaled_dot_product", "toy"]
    full = sum(config.load(ROOT / "grading.yml").questions("scaled_dot_product").values())
    assert canvas[1] == ["Points Possible", "", "", "", "", words.num(full, 4), "5"]
    assert canvas[2:] == [
        ["Ana Souza", "", "1001", "ana@example.edu", "", "", "5"],  # from results.json's submitters
        ["Bruno Lima", "", "1002", "bruno@example.edu", "", "", "4"],  # from grades.csv
        ["Carla Dias", "", "1003", "carla@example.edu", "", "", "0"],  # a group: each submitter gets the grade
        ["Davi Reis", "", "1004", "davi@example.edu", "", "", "0"],
        ["Eva Nunes", "", "", "eva@example.edu", "", "", ""],  # not graded: left blank
        ["Fábio Rocha", "", "1006", "", "", "", "3"],
        [rid, "", "", "", "", total, ""],  # no identity: the kit's id
        ["toy_s4", "", "", "", "", "", "3"],
    ]
    moodle = _read(out / "moodle.csv")
    assert moodle[0] == ["Email address", "ID number", "Full name", "scaled_dot_product", "toy"]
    assert moodle[1] == ["ana@example.edu", "1001", "Ana Souza", "", "5"]
    assert len(moodle) == 1 + len(canvas) - 2
    assert [r[2] for r in moodle[1:]] == [r[0] for r in canvas[2:]]
    for name in ("canvas.csv", "moodle.csv"):
        assert f"{name}: 2 row(s) have no name, email or student id" in proc.stderr
        assert f"{name}: 1 submission(s) not graded were left blank" in proc.stderr


# -- (4) bad input, the old grades.csv, the public part, the pointer -------------------
def test_bad_input_gets_one_line_and_no_traceback(tmp_path):
    missing = run_cli("report", tmp_path / "nowhere", check=False)
    assert missing.returncode == 2 and missing.stderr.strip().count("\n") == 0 and "is not a folder" in missing.stderr
    (tmp_path / "empty").mkdir()
    empty = run_cli("report", tmp_path / "empty", check=False)
    assert empty.returncode == 2 and "holds no results.json" in empty.stderr and "Traceback" not in empty.stderr
    lang = run_cli("report", tmp_path / "empty", "--lang", "klingon", check=False)
    assert lang.returncode == 2 and "unknown language" in lang.stderr and "Traceback" not in lang.stderr
    weird = tmp_path / "weird"
    for n, text in enumerate(
        [
            "[]",
            '{"tests": [{"name": "q", "score": NaN, "max_score": 1}]}',
            "\xff\xfe",
            '{"tests": [], "extra_data": {"checks": 3, "causes": [{"text": 1}], "flags": []}}',
            '{"tests": [{"name": "q", "score": true, "max_score": 1}]}',
        ]
    ):
        (weird / f"s{n}").mkdir(parents=True)
        (weird / f"s{n}" / "results.json").write_text(text, encoding="latin-1")
    (weird / "grades.csv").write_text('id,total\n../../etc,3\n"unterminated\n')
    proc = run_cli("report", weird, "--lang", "en", "--export", "canvas")
    assert "Traceback" not in proc.stderr
    page = (weird / "report.html").read_text()
    assert page.count("results.json cannot be read") == 4 and "is malformed and was left out" in page
    assert (
        "../../etc</code></td><td></td><td>no results.json (listed in grades.csv)" in page
        and not (tmp_path / "etc").exists()
    )


def test_the_older_grades_csv_is_read_by_name_and_max_scores_come_from_results_json(real, tmp_path):
    rid, rdata = real
    out = tmp_path / "old"
    (out / rid).mkdir(parents=True)
    (out / rid / "results.json").write_text(json.dumps(rdata))
    qs = [t_["name"] for t_ in rdata["tests"]]
    _write_csv(
        out / "grades.csv",
        ["id", "path", *qs, "total"],
        [{"id": rid, "path": str(REAL), **{t_["name"]: t_["score"] for t_ in rdata["tests"]}, "total": rdata["score"]}],
    )
    folder = load.load(out)
    (sdp,) = stats.by_assignment(folder.submissions)
    assert sdp.summary.count == 1 and sdp.summary.maximum == sum(t_["max_score"] for t_ in rdata["tests"])
    assert [q.maximum for q in sdp.questions] == [t_["max_score"] for t_ in rdata["tests"]]
    assert not folder.problems and not any(s.reasons for s in folder.submissions)


def test_the_report_runs_from_the_public_part_of_the_kit(out, tmp_path):
    from autograder.build.public import public_files

    public = tmp_path / "public"
    for name, data in public_files().items():
        (public / name).parent.mkdir(parents=True, exist_ok=True)
        (public / name).write_bytes(data)
    assert not (public / "autograder" / "private").exists()
    which = subprocess.run(
        [
            sys.executable,
            "-c",
            "import autograder.report as r, autograder.layout as l; print(l.has_private(), r.__file__)",
        ],
        cwd=public,
        capture_output=True,
        text=True,
    )
    assert which.stdout.split() == ["False", str(public / "autograder" / "report" / "__init__.py")], which
    proc = subprocess.run(
        [sys.executable, "-m", "autograder", "report", out, "--out", tmp_path / "r.html", "--lang", "en"],
        cwd=public,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    # the same page but for the similar-submissions section, which subtracts the starter code only
    # where the student template is (a checkout of the kit), and says so where it is not
    public_page, full_page = (tmp_path / "r.html").read_text(), _fresh(out, tmp_path).decode()
    assert "Assignment toy" in proc.stdout and _without_similar(public_page) == _without_similar(full_page)
    assert '<section id="similar"' in public_page


def _without_similar(page):
    start = page.index('<section id="similar"')
    return page[:start] + page[page.index("</section>", start) + len("</section>") :]


def _fresh(out, tmp_path):
    run_cli("report", out, "--out", tmp_path / "r2.html", "--lang", "en")
    return (tmp_path / "r2.html").read_bytes()


def test_the_pointer_names_the_command_and_the_folder(tmp_path):
    line = pointer(tmp_path / "my out")
    assert "\n" not in line and "python -m autograder report" in line and f"'{tmp_path / 'my out'}'" in line
    with messages.language("pt-BR"):
        assert pointer("OUT").startswith("relatório da turma")


def test_an_export_never_writes_a_formula():
    """A student named "=HYPERLINK(...)" must not become a formula in the instructor's spreadsheet."""
    from autograder.report import export

    assert export._cell('=HYPERLINK("http://x")') == '\'=HYPERLINK("http://x")'
    assert [export._cell(x) for x in ("+1", "-1", "@SUM(A1)", "Ana Souza", "", None)] == [
        "'+1",
        "'-1",
        "'@SUM(A1)",
        "Ana Souza",
        "",
        "",
    ]
