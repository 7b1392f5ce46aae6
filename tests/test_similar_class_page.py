"""The similar submissions of a class of 300, as an instructor sees them in Chromium: the class
report's section (in view at its link, every pair on the page, nothing wider than the window)
and similar.html (each pair's code in two grey panels side by side, the shared lines marked in
both), from the DOM Chromium laid out and from its screenshots.

The class is built once: 285 students who each write scaled_dot_product's three functions their
own way (its folder's similar_class.py) and 15 who hand in a disguised copy of one of them
(autograder/audit/similar_class.py),
each a notebook filled from the student template with a results.json beside it, as `grade`
writes them; `report` reads the folder as it reads any class."""

import html
import json
import random
import re
import subprocess

import pytest
from PIL import Image

from autograder import declarations, report
from autograder.audit import catalog, similar_class
from autograder.messages import t
from autograder.report import similar, similar_page
from conftest import template
from test_report import chromium

pytestmark = pytest.mark.slow  # a class of 300 notebooks and the browser

A = "scaled_dot_product"
STUDENTS, COPIES = 300, 15
WINDOW = (1200, 900)
PANEL = (247, 247, 247)  # .side pre's background (#f7f7f7)
SHARED = (255, 241, 184)  # a shared line's mark (#fff1b8)


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """(OUT, planted pairs) of the class of 300, reported once (report.html and similar.html)."""
    tmp = tmp_path_factory.mktemp("class300")
    cls, planted = similar_class.planted_class(declarations.similar_class(A), STUDENTS, COPIES, random.Random(0))
    assert len(cls) == STUDENTS
    blank = template(A)
    for sid, functions in cls.items():
        path = tmp / "subs" / f"{sid}.ipynb"
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(catalog.fill(blank, functions)))
        data = {
            "score": 1.0,
            "assignment": A,
            "tests": [{"name": "causal_mask", "score": 1.0, "max_score": 1.0, "output": "", "visibility": "visible"}],
            "extra_data": {"status": "graded", "submission": {"path": str(path), "sha256": "0" * 64}},
        }
        (tmp / "out" / sid).mkdir(parents=True)
        (tmp / "out" / sid / "results.json").write_text(json.dumps(data))
    out = tmp / "out"
    assert report.main(out_dir=str(out), lang="en") == 0
    return out, planted


def _chromium(url, tmp_path, *how, window=WINDOW):
    return subprocess.run(
        [
            chromium(),
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--hide-scrollbars",
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--window-size={window[0]},{window[1]}",
            "--virtual-time-budget=5000",
            *how,
            url,
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )


def _probe(page, tmp_path, script, fragment=""):
    """What `script` (run after load, at `fragment`) found, from the DOM Chromium dumps."""
    probe = page.with_name(f"probe-{page.name}")
    probe.write_text(
        page.read_text(encoding="utf-8").replace(
            "</body>",
            # after load, once the browser has scrolled to the fragment
            "<script>window.addEventListener('load',function(){setTimeout(function(){var found=(" + script + ")();"
            "var p=document.createElement('pre');p.id='probe';p.textContent=JSON.stringify(found);"
            "document.body.appendChild(p);},200);});</script></body>",
        ),
        encoding="utf-8",
    )
    proc = _chromium(probe.as_uri() + fragment, tmp_path, "--dump-dom")
    found = re.search(r'<pre id="probe">(.*?)</pre>', proc.stdout, re.S)
    assert found, f"chromium dumped no probe (exit {proc.returncode}): {proc.stderr[-2000:]}"
    return json.loads(html.unescape(found.group(1)))


def _screenshot(page, tmp_path, window=WINDOW):
    shot = tmp_path / f"{page.stem}.png"
    proc = _chromium(page.as_uri(), tmp_path, f"--screenshot={shot}", window=window)
    assert shot.is_file(), f"chromium took no screenshot (exit {proc.returncode}): {proc.stderr[-2000:]}"
    return Image.open(shot).convert("RGB")


SECTION = """function () {
  var s = document.getElementById("similar"), b = s.getBoundingClientRect();
  var rows = Array.prototype.map.call(s.querySelectorAll("tr[data-pair]"), function (r) {
    var c = r.getBoundingClientRect(), codes = r.querySelectorAll("code");
    return {pair: [codes[0].textContent, codes[1].textContent], right: c.right, h: c.height,
            href: r.querySelector("a").getAttribute("href")};
  });
  return {top: b.top, y: b.top + window.scrollY, left: b.left, right: b.right, h: b.height, seen: s.checkVisibility(),
          title: s.querySelector("h2").textContent, rows: rows,
          view: [window.innerWidth, window.innerHeight],
          pageWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth};
}"""

PAGE = """function () {
  var pairs = document.querySelectorAll("section[data-pair]");
  var sides = Array.prototype.map.call(document.querySelectorAll(".side"), function (s) {
    return Array.prototype.map.call(s.children, function (d) {
      var b = d.getBoundingClientRect(), pre = d.querySelector("pre");
      return {left: b.left, right: b.right, top: b.top, w: b.width,
              overflow: pre.scrollWidth > pre.clientWidth + 1, scrolls: getComputedStyle(pre).overflowX};
    });
  });
  return {pairs: pairs.length, sides: sides, view: [window.innerWidth, window.innerHeight],
          pageWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth,
          marked: document.querySelectorAll(".side .shared").length};
}"""


def test_the_reports_section_lists_the_class_pairs_in_view_and_within_the_window(graded_class, tmp_path):
    out, planted = graded_class
    page = out / "report.html"
    seen = _probe(page, tmp_path, SECTION, "#similar")
    # at its link the section is in view, from the top of the window, laid out within it
    assert seen["seen"] and seen["title"] == t("similar_title", "en")
    assert 0 <= seen["top"] < 50 and seen["h"] > 200, seen
    assert seen["pageWidth"] <= seen["clientWidth"], "the report scrolls sideways"
    assert 0 <= seen["left"] and seen["right"] <= seen["view"][0]
    # every planted pair is listed; every row is one line within the section, linked to its pair
    listed = {tuple(sorted(r["pair"])) for r in seen["rows"]}
    assert planted <= listed, planted - listed
    assert len(seen["rows"]) <= 2 * len(planted), "honest students flood the section"
    for n, r in enumerate(seen["rows"]):
        assert r["right"] <= seen["right"] + 1 and 10 < r["h"] < 40, r
        assert r["href"] == f"{similar_page.PAGE_NAME}#p{n}"
    # the screenshot of the whole page (headless Chromium draws nothing when it shoots at a
    # fragment), cut to the section's box: its text is drawn, and nothing right of it
    top, bottom = round(seen["y"]), round(seen["y"] + seen["h"])
    shot = _screenshot(page, tmp_path, (WINDOW[0], bottom + 20))
    assert shot.size == (WINDOW[0], bottom + 20)
    box = shot.crop((0, top, WINDOW[0], bottom))
    dark = [i for i, rgb in enumerate(box.get_flattened_data()) if sum(rgb) < 3 * 128]
    assert len(dark) > 0.01 * box.width * box.height, f"the section is not drawn ({len(dark)} dark pixels)"
    columns = {i % box.width for i in dark}
    assert min(columns) >= seen["left"] - 1 and max(columns) <= seen["right"] + 1, "text drawn outside the section"


def test_similar_html_shows_each_pair_side_by_side_with_the_shared_lines_marked(graded_class, tmp_path):
    out, planted = graded_class
    page = out / similar_page.PAGE_NAME
    seen = _probe(page, tmp_path, PAGE)
    listed = len(similar.compare(*similar.folder_class(out)[A]))
    assert seen["pairs"] == listed and listed >= len(planted)
    assert seen["pageWidth"] <= seen["clientWidth"], "similar.html scrolls sideways"
    assert len(seen["sides"]) >= listed and seen["marked"] > 0
    for left, right in seen["sides"]:
        # two panels of the same width, side by side at the same height, within the window
        assert left["right"] <= right["left"] and abs(left["top"] - right["top"]) < 1, (left, right)
        assert abs(left["w"] - right["w"]) < 2 and left["w"] > 300 and right["right"] <= seen["view"][0]
        for panel in (left, right):
            assert not panel["overflow"] or panel["scrolls"] == "auto", "a long line widens its panel"
    # the screenshot of the first pair: two grey panels, each with a marked shared line
    shot = _screenshot(page, tmp_path)
    assert shot.size == WINDOW
    w, h = shot.size
    px = shot.load()
    columns = [x for x in range(w) if any(px[x, y] == PANEL for y in range(0, h, 3))]
    assert columns, "no code panel drawn"
    runs, start = [], columns[0]
    for a, b in zip(columns, columns[1:] + [None]):
        if b != a + 1:
            runs.append((start, a))
            start = b
    wide = [(a, b) for a, b in runs if b - a > 200]
    assert len(wide) == 2 and wide[0][1] < w // 2 < wide[1][0], f"not two panels side by side: {runs}"
    for a, b in wide:
        assert any(px[x, y] == SHARED for x in range(a, b, 4) for y in range(h)), "a panel has no shared line marked"
