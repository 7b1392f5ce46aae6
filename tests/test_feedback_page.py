"""feedback.html as a student sees it, laid out and photographed by headless Chromium: each
question marked full, partial or zero (a mark and a word, in colour), each check marked where
the question's view shows every check, the counterexample in a monospace block, and every word
in the edition's language (the title too). The submission is graded for real: a notebook with
one question right, one partly right and one wrong."""

import json
import struct
import subprocess
import zlib

import pytest

from autograder import config, messages
from autograder.grade import feedback, results
from autograder.text import Code, Strong, fenced
from conftest import ROOT, grade
from ptbr import english_in
from test_report import chromium, rendered

CFG = config.load()
LANG = "pt-BR"
TRIU = "import torch\n\n\ndef causal_mask(seq_len, device=None):\n    return torch.ones(seq_len, seq_len, dtype=torch.bool, device=device).triu()\n"
COLOURS = {feedback.PASS: (0x1A, 0x7F, 0x37), feedback.PART: (0x9A, 0x67, 0x00), feedback.FAIL: (0xCF, 0x22, 0x2E)}

# Collects what Chromium laid out: each question's mark (its box, colour, word) and each
# check's, the counterexample block's font (monospace: every glyph as wide as the next),
# the visible text outside code, the title and the language.
PROBE = """<script>
(() => {
  const box = (el) => { const r = el.getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; };
  const mark = (el) => ({box: box(el), bg: getComputedStyle(el).backgroundColor, word: el.getAttribute("aria-label"),
                         text: el.textContent});
  const width = (pre, s) => { const span = document.createElement("span"); span.textContent = s;
                              pre.appendChild(span); const w = span.getBoundingClientRect().width; span.remove(); return w; };
  const pre = document.querySelector("pre.code");
  const out = {
    lang: document.documentElement.lang,
    title: document.title,
    h1: document.querySelector("h1").textContent,
    questions: [...document.querySelectorAll("section.question")].map((s) => ({
      kind: s.className.replace("question", "").trim(),
      name: s.querySelector("h2 .name").textContent,
      mark: mark(s.querySelector("h2 .mark")),
      checks: [...s.querySelectorAll("ul.checks li")].map((li) => ({kind: li.className, text: li.textContent,
                                                                    mark: mark(li.querySelector(".mark"))})),
    })),
    code: pre && {font: getComputedStyle(pre).fontFamily, narrow: width(pre, "iiiiiiiiii"), wide: width(pre, "MMMMMMMMMM"),
                  text: pre.textContent, box: box(pre)},
    prose: [...document.querySelectorAll("main p, main h1, main h2, main li")].map((e) => e.innerText),
  };
  const el = document.createElement("pre"); el.id = "probe"; el.textContent = JSON.stringify(out);
  document.body.appendChild(el);
})();
</script>"""


def _notebook(tmp_path):
    """sdpa_scaled_by_dk (scaled_dot_product_attention partly right, with a counterexample)
    with causal_mask's triu bug (that question at zero); the other questions right."""
    nb = json.loads((ROOT / "examples/submissions/scaled_dot_product/sdpa_scaled_by_dk.ipynb").read_text())
    cell = next(c for c in nb["cells"] if c["cell_type"] == "code" and "def causal_mask(" in "".join(c["source"]))
    cell["source"] = TRIU
    path = tmp_path / "student.ipynb"
    path.write_text(json.dumps(nb))
    return path


def _pixels(png):
    """(width, height, rows of RGB tuples) of an 8-bit RGB or RGBA PNG (what Chromium writes)."""
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, head = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + n]
        if kind == b"IHDR":
            head = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    width, height, depth, colour, _, _, interlace = head
    assert depth == 8 and colour in (2, 6) and not interlace, head
    step = 3 if colour == 2 else 4
    raw, stride, rows, prev = zlib.decompress(idat), width * step, [], bytearray(width * step)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - step] if i >= step else 0
            b, c = prev[i], prev[i - step] if i >= step else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * step : x * step + 3]) for x in range(width)])
        prev = line
    return width, height, rows


def _screenshot(page, tmp_path, size=(1200, 3000)):  # as wide as `rendered` lays it out
    shot = tmp_path / "shot.png"
    proc = subprocess.run(
        [
            chromium(),
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--hide-scrollbars",
            "--force-device-scale-factor=1",
            f"--user-data-dir={tmp_path / 'shot-profile'}",
            f"--window-size={size[0]},{size[1]}",
            f"--screenshot={shot}",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert shot.is_file(), f"chromium wrote no screenshot (exit {proc.returncode}): {proc.stderr[-2000:]}"
    return _pixels(shot)


def test_code_lines_are_one_fenced_block_whatever_they_hold():
    """A counterexample's lines stay literal in the Markdown and the page: a fence longer than
    any backticks they hold, their text escaped once, in a <pre>."""
    lines = ["call: f(x=[[1, 2]])", "yours: ```<b>``` **x**"]
    md = fenced(lines)
    assert md.startswith("````\n") and md.endswith("\n````")
    html = feedback.render(f"intro\n\n{md}\n\nafter")
    assert '<pre class="code"><code>call: f(x=[[1, 2]])\nyours: ```&lt;b&gt;``` **x**</code></pre>' in html
    assert html.startswith("<p>intro</p>") and html.endswith("<p>after</p>") and "<b>" not in html
    from autograder.judge import markdown_lines

    out = markdown_lines(["3 / 6", Strong("Falhou em 1 de 2 verificações."), Code("a"), Code("b"), "FALHOU x"])
    assert out == "3 / 6\n\n**Falhou em 1 de 2 verificações.**\n\n```\na\nb\n```\n\nFALHOU x"


@pytest.mark.slow
def test_the_page_marks_every_question_and_check_and_shows_the_counterexample_in_monospace(tmp_path):
    result = grade(_notebook(tmp_path), cfg=CFG, lang=LANG)
    kinds = {
        n: feedback.PASS if q.score >= q.max_score else feedback.FAIL if q.score <= 0 else feedback.PART
        for n, q in result.questions.items()
    }
    assert kinds["causal_mask"] == feedback.FAIL and kinds["scaled_dot_product_attention"] == feedback.PART
    assert kinds["padding_mask"] == feedback.PASS
    data = {**result.to_gradescope(), "assignment": result.assignment}  # as the batch writes it (grade.judges)
    results.write_result(tmp_path / "out", "s1", data, CFG)
    page = tmp_path / "out" / "s1" / feedback.HTML_NAME
    text = page.read_text(encoding="utf-8")
    assert "Content-Security-Policy" in text and "<script" not in text
    # the probe's copy runs one script: the page itself allows none
    probe = tmp_path / "probe-page.html"
    probe.write_text(text.replace("default-src 'none'", "default-src 'none'; script-src 'unsafe-inline'"))
    seen = rendered(probe, tmp_path, PROBE)

    with messages.language(LANG):
        title = messages.t("feedback_title", assignment=messages.title(CFG, "scaled_dot_product", LANG))
        assert seen["lang"] == LANG and seen["title"] == seen["h1"] == title
        assert "máscaras" in title and "masks" not in title
        # one mark per question, by its score: a symbol, a word read aloud, a colour of its own
        assert [q["name"] for q in seen["questions"]] == list(result.questions)
        for q in seen["questions"]:
            kind = kinds[q["name"]]
            assert q["kind"] == kind and q["mark"]["text"] == feedback._MARKS[kind], q
            assert q["mark"]["word"] == messages.t(f"feedback_question_{kind}")
            assert q["mark"]["bg"] == "rgb({}, {}, {})".format(*COLOURS[kind]), q
        # each check marked, where the question's view shows them all (by_hand's shows its score only)
        by_name = {q["name"]: q for q in seen["questions"]}
        assert by_name["by_hand"]["checks"] == []
        sdpa = by_name["scaled_dot_product_attention"]["checks"]
        # failed, passed, or passed but held to the values' share (scoring's gate on property checks)
        records = result.questions["scaled_dot_product_attention"].checks
        want = [feedback.FAIL if r["failed"] else feedback.PART if r.get("gated") else feedback.PASS for r in records]
        assert [c["kind"] for c in sdpa] == want and set(want) == {feedback.PASS, feedback.PART, feedback.FAIL}
        words = {feedback.PASS: "passed", feedback.PART: "gated", feedback.FAIL: "failed"}
        for c in sdpa:
            assert c["mark"]["word"] == messages.t(f"feedback_check_{words[c['kind']]}")
        # the counterexample: one monospace block (every glyph the same width)
        code = seen["code"]
        assert code and "monospace" in code["font"] and abs(code["narrow"] - code["wide"]) < 0.5, code
        assert messages.t("counterexample_yours", outputs="").strip() in code["text"]
        # every word outside code in the edition's language
        leaks = [(english_in(line), line) for line in seen["prose"] if english_in(line)]
        assert not leaks, leaks

    # the photograph: on each mark's line, a block of its colour where the layout put it (the
    # probe's window had a scrollbar, so the photograph's columns may sit a few pixels over)
    width, height, rows = _screenshot(page, tmp_path)
    marked = seen["questions"] + [c for q in seen["questions"] for c in q["checks"]]
    assert len(marked) > 20
    for q in marked:
        x, y, w, h = q["mark"]["box"]
        assert y + h < height, "the page is taller than the screenshot"
        row = rows[int(y + h / 2)][max(0, int(x) - 20) : int(x + w) + 20]
        painted = {
            kind: sum(all(abs(a - b) <= 8 for a, b in zip(px, rgb)) for px in row) for kind, rgb in COLOURS.items()
        }
        assert painted[q["kind"]] >= w / 4 and sum(painted.values()) == painted[q["kind"]], (q, painted)
