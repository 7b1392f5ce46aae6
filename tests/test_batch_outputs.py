"""What a batch leaves for the course: grades.csv in the columns an LMS import takes, the
submitters of a Gradescope export folder, and per-student feedback files (feedback.md, and
feedback.html rendering exactly the judge's Markdown subset, nothing more)."""

import csv
import html.parser
import json
from pathlib import Path

import pytest

from autograder import config, messages, release
from autograder.audit import examples as examples_mod
from autograder.grade import export, feedback
from autograder.grade.grades_csv import columns
from conftest import ROOT, run_cli

pytestmark = pytest.mark.slow  # every test here grades, builds or runs a kernel

SDP = examples_mod.EXAMPLES / "scaled_dot_product"
SDP_FULL = sum(config.load(ROOT / "grading.yml").questions("scaled_dot_product").values())
MAXES = config.load(ROOT / "grading.yml").questions("scaled_dot_product")
QUESTIONS = list(MAXES)
HOSTILE = "<img src=x onerror=alert(1)> **not bold** [link](http://x) `code` # heading & done"
# the page's own tags: a section per question, its marks (span), its checks (ul, li), a code block
TAGS = {"html", "head", "meta", "title", "style", "body", "main", "h1", "h2", "p", "strong"}
TAGS |= {"section", "span", "ul", "li", "pre", "code"}


def nb(path):
    return json.loads(Path(path).read_text())


def write_nb(path, data):
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(data))


def with_cell(data, source):
    data["cells"].append(
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": source}
    )
    return data


def make_export(folder):
    """A Gradescope "Export Submissions" folder made from the example notebooks."""
    write_nb(folder / "submission_1001" / "attention.ipynb", nb(SDP / "reference.ipynb"))
    write_nb(folder / "submission_1002" / "attention.ipynb", nb(SDP / "causal_mask_triu_pt-BR.ipynb"))
    # a group of two; causal_mask raises a message full of Markdown and HTML
    write_nb(
        folder / "submission_1003" / "work.ipynb",
        with_cell(
            nb(SDP / "reference.ipynb"), f"def causal_mask(n, device=None):\n    raise ValueError({HOSTILE!r})\n"
        ),
    )
    # a cell that kills the worker: skipped, the rest graded (partial)
    write_nb(
        folder / "submission_1004" / "hw.ipynb", with_cell(nb(SDP / "reference.ipynb"), "import os\nos._exit(3)\n")
    )
    (folder / "submission_1005").mkdir()
    (folder / "submission_1005" / "broken.ipynb").write_bytes((SDP / "reference.ipynb").read_bytes()[:700])
    write_nb(folder / "loose.ipynb", nb(SDP / "template.ipynb"))  # no entry in the metadata
    (folder / "submission_metadata.yml").write_text(
        "submission_1001:\n"
        "  :submitters:\n"
        "  - :name: Ada Lovelace\n"
        "    :sid: '1815'\n"
        "    :email: ada@example.edu\n"
        "  :created_at: 2024-03-01 10:00:00.000000000 -03:00\n"
        "  :score: !ruby/object:BigDecimal 18:0.1e2\n"
        "  :status: processed\n"
        "submission_1002:\n"
        "  :submitters:\n"
        "  - :name: João da Silva\n"
        "    :sid: 2024001\n"
        "    :email: joao@example.edu\n"
        "submission_1003:\n"
        "  :submitters:\n"
        '  - :name: "=HYPERLINK(\\"http://x\\")"\n'
        "    :sid: '7'\n"
        "    :email: eve@example.edu\n"
        "  - :name: Grace Hopper\n"
        "    :sid: '1906'\n"
        "    :email: grace@example.edu\n"
        "submission_1004:\n"
        "  :submitters:\n"
        "  - :name: Alan Turing\n"
        "    :email: alan@example.edu\n"
        "submission_1005:\n"
        "  :submitters:\n"
        "  - :name: Broken File\n"
        "    :sid: '5'\n"
        "    :email: broken@example.edu\n"
    )
    return folder


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("export")
    subs, out = make_export(tmp / "assignment_42_export"), tmp / "out"
    proc = run_cli("grade", subs, "--out", out, "--no-progress", "--jobs", "2")
    results = {p.parent.name: json.loads(p.read_text()) for p in out.glob("*/results.json")}
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    return out, proc, results, rows


def test_grades_csv_has_the_lms_columns_in_order(graded):
    out, proc, results, rows = graded
    assert rows[0] == [
        "id",
        "path",
        "assignment",
        "name",
        "email",
        "sid",
        "status",
        "reason",
        *QUESTIONS,
        "total",
        *[f"{q}_max" for q in QUESTIONS],
        "total_max",
    ]
    assert rows[0] == columns(QUESTIONS)
    by_id = {r[0]: dict(zip(rows[0], r)) for r in rows[1:]}
    assert (
        set(by_id)
        == set(results)
        == {
            "submission_1001__attention",
            "submission_1002__attention",
            "submission_1003__work",
            "submission_1004__hw",
            "submission_1005__broken",
            "loose",
        }
    )
    for sid, r in by_id.items():
        data = results[sid]
        assert r["assignment"] == "scaled_dot_product" and r["total_max"] == str(float(SDP_FULL)), r
        assert [r[f"{q}_max"] for q in QUESTIONS] == [str(float(p)) for p in MAXES.values()]
        assert float(r["total"]) == data["score"]
        assert {q: float(r[q]) for q in QUESTIONS} == {t["name"]: t["score"] for t in release.scored(data["tests"])}
        assert r["path"] == data["extra_data"]["submission"]["found_as"]
    assert by_id["submission_1001__attention"]["total"] == str(float(SDP_FULL))
    assert by_id["loose"]["total"] == "0.0"


def test_status_and_reason_say_what_could_not_run(graded):
    out, proc, results, rows = graded
    by_id = {r[0]: dict(zip(rows[0], r)) for r in rows[1:]}
    assert {sid: r["status"] for sid, r in by_id.items()} == {
        "submission_1001__attention": "graded",
        "submission_1002__attention": "graded",
        "submission_1003__work": "graded",
        "submission_1004__hw": "partial",
        "submission_1005__broken": "not_graded",
        "loose": "graded",
    }
    assert results["submission_1004__hw"]["extra_data"]["flags"]["skipped_cells"] == 1
    assert results["submission_1004__hw"]["score"] == SDP_FULL, "the skipped cell costs nothing else"
    assert (
        by_id["submission_1004__hw"]["reason"]
        == "1 cell(s) skipped: running them stopped the process that runs your code"
    )
    broken = by_id["submission_1005__broken"]["reason"]
    assert broken == results["submission_1005__broken"]["output"].splitlines()[0] and "not a notebook" in broken
    assert all(r["reason"] == "" for r in by_id.values() if r["status"] == "graded")
    assert all("\n" not in r["reason"] for r in by_id.values())


def test_a_gradescope_export_gives_each_submission_its_submitters(graded):
    out, proc, results, rows = graded
    ed = {sid: d["extra_data"] for sid, d in results.items()}
    assert ed["submission_1001__attention"]["submitters"] == [
        {"name": "Ada Lovelace", "email": "ada@example.edu", "sid": "1815"}
    ]
    assert ed["submission_1002__attention"]["submitters"] == [
        {"name": "João da Silva", "email": "joao@example.edu", "sid": "2024001"}
    ]  # an unquoted sid: still text
    assert ed["submission_1004__hw"]["submitters"] == [{"name": "Alan Turing", "email": "alan@example.edu", "sid": ""}]
    assert len(ed["submission_1003__work"]["submitters"]) == 2
    assert "submitters" not in ed["loose"]
    by_id = {r[0]: dict(zip(rows[0], r)) for r in rows[1:]}
    group = by_id["submission_1003__work"]
    # several submitters joined with "; "; a name a spreadsheet would run as a formula starts with '
    assert group["name"] == '\'=HYPERLINK("http://x"); Grace Hopper'
    assert group["email"] == "eve@example.edu; grace@example.edu" and group["sid"] == "7; 1906"
    assert (by_id["submission_1001__attention"]["name"], by_id["submission_1001__attention"]["sid"]) == (
        "Ada Lovelace",
        "1815",
    )
    assert by_id["submission_1005__broken"]["email"] == "broken@example.edu", "a file not graded keeps its names"
    assert (by_id["loose"]["name"], by_id["loose"]["email"], by_id["loose"]["sid"]) == ("", "", "")
    assert "Traceback" not in proc.stderr and "submission_metadata" not in proc.stderr


class _Tags(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.text, self.lang = [], [], None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "html":
            self.lang = dict(attrs).get("lang")

    def handle_data(self, data):
        self.text.append(data)


def _parse(page):
    p = _Tags()
    p.feed(page)
    return p


def test_feedback_files_hold_the_gradescope_text_in_the_feedbacks_language(graded):
    out, proc, results, rows = graded
    for sid, data in results.items():
        md = (out / sid / "feedback.md").read_text(encoding="utf-8")
        page = (out / sid / "feedback.html").read_text(encoding="utf-8")
        lang = data["extra_data"]["language"]
        # feedback.md: the output, then each test's name and output, as results.json has them
        pieces = ([data["output"]] if data.get("output") else []) + [
            x for name, output in release.shown(data["tests"], False) for x in (feedback.md_escape(name), output)
        ]
        at = 0
        for piece in pieces:
            at = md.index(piece, at) + len(piece)
        assert messages.t("feedback_submission", lang, id=feedback.md_escape(sid)) in md
        # feedback.html: one page, in that language, no outside resource, only the tags of the subset
        parsed = _parse(page)
        assert parsed.lang == lang
        assert set(parsed.tags) <= TAGS, set(parsed.tags) - TAGS
        assert "<script" not in page and "src=" not in page.replace("src=x", "") and "href" not in page
        text = "".join(parsed.text)
        for t in release.scored(data["tests"]):
            assert t["name"] in text
    assert results["submission_1002__attention"]["extra_data"]["language"] == "pt-BR"
    assert 'lang="pt-BR"' in (out / "submission_1002__attention" / "feedback.html").read_text()
    pt = (out / "submission_1002__attention" / "feedback.md").read_text()
    # causal_mask's values are wrong (triu's diagonal): its 2 points, the device check's share included
    assert f"Nota: {SDP_FULL - 2:g} de {SDP_FULL:g}" in pt and "Enviado por: João da Silva" in pt
    en = (out / "submission_1001__attention" / "feedback.html").read_text()
    assert f"Score: {SDP_FULL:g} of {SDP_FULL:g}" in en and "Submitted by: Ada Lovelace" in en


def test_student_text_in_the_html_feedback_is_literal(graded):
    out, proc, results, rows = graded
    page = (out / "submission_1003__work" / "feedback.html").read_text()
    parsed = _parse(page)
    text = "".join(parsed.text)
    assert HOSTILE in text, "the message shows as the student wrote it"
    assert "&lt;img src=x onerror=alert(1)&gt; **not bold** [link](http://x) `code` # heading &amp; done" in page
    assert parsed.tags.count("strong") >= 1  # the judge's own summary line is bold
    assert "<strong>not bold" not in page


# -- the Markdown subset, without grading ----------------------------------------------------
@pytest.mark.parametrize(
    "md, expected",
    [
        ("one\n\ntwo", "<p>one</p>\n<p>two</p>"),
        ("a line\nthe same paragraph", "<p>a line\nthe same paragraph</p>"),
        ("**Failed 1 of 2 checks.**", "<p><strong>Failed 1 of 2 checks.</strong></p>"),
        ("x **a** and **b**", "<p>x <strong>a</strong> and <strong>b</strong></p>"),
        (r"\*\*not bold\*\* \<b\> \[x\](y) \` \# \| \~ \!", "<p>**not bold** &lt;b&gt; [x](y) ` # | ~ !</p>"),
        ("** unpaired", "<p>** unpaired</p>"),
        ("**open only", "<p>**open only</p>"),
        ("_x_ *y* `z` # h <i>i</i> &amp;", "<p>_x_ *y* `z` # h &lt;i&gt;i&lt;/i&gt; &amp;amp;</p>"),
        (r"back\slash \\ end\\", r"<p>back\slash \ end\</p>"),
        ("'\"quotes\"'", "<p>&#x27;&quot;quotes&quot;&#x27;</p>"),
        ("\n\n  \n", ""),
    ],
)
def test_the_renderer_knows_paragraphs_bold_and_escapes_and_nothing_else(md, expected):
    assert feedback.render(md) == expected


def test_plain_text_escaped_for_markdown_renders_as_written():
    for text in ("alice__hw", "<b>x</b> **y** [z](w) `q` #1 | ~ !", "a\\b"):
        assert feedback.render(feedback.md_escape(text)) == f"<p>{__import__('html').escape(text)}</p>"


# -- the export's metadata, without grading ------------------------------------------------------
@pytest.mark.parametrize(
    "text, message",
    [
        (": : [", "not a Gradescope export's metadata"),
        ("- a\n- b\n", "not a mapping of submissions"),
        ("submission_1: {':submitters': 3}\n", "has no list of :submitters:"),
        ("[" * 20000 + "]" * 20000, "not a Gradescope export's metadata"),
        (b"\xff\xfe\x00garbage", "not a Gradescope export's metadata"),
        ("x" * 2000, "larger than"),
    ],
)
def test_a_broken_metadata_file_costs_one_line_and_its_names(tmp_path, text, message):
    path = tmp_path / "submission_metadata.yml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    said = []
    got = export.read(tmp_path, 1000 if message == "larger than" else 1 << 20, said.append)
    assert len(said) == 1 and message in said[0] and "\n" not in said[0], said
    assert not any(got.values())


def test_metadata_entries_read_as_plain_data_whatever_their_tags(tmp_path):
    (tmp_path / "submission_metadata.yml").write_text(
        "submission_1: !ruby/hash:ActiveSupport::HashWithIndifferentAccess\n"
        "  :submitters: [{':name': !!python/object:os.system {x: 1}, ':sid': 12, ':email': null}]\n"
        "submission_2: {':submitters': []}\n"
        "other_key: {anything: 1}\n"
    )
    said = []
    assert export.read(tmp_path, 1 << 20, said.append) == {
        "submission_1": [{"name": "", "email": "", "sid": "12"}],
        "submission_2": [],
    }
    assert said == []


def test_a_broken_metadata_file_does_not_stop_the_batch(tmp_path):
    subs = tmp_path / "export"
    write_nb(subs / "submission_7" / "a.ipynb", nb(SDP / "reference.ipynb"))
    (subs / "submission_metadata.yml").write_text("submission_7:\n  :submitters: [\n")
    proc = run_cli("grade", subs, "--out", tmp_path / "out", "--no-progress", "--jobs", "1")
    lines = [x for x in proc.stderr.splitlines() if "submission_metadata.yml" in x]
    assert len(lines) == 1 and "graded without the submitters' names" in lines[0], proc.stderr
    data = json.loads((tmp_path / "out" / "submission_7__a" / "results.json").read_text())
    assert data["score"] == SDP_FULL and "submitters" not in data["extra_data"]
    assert "Traceback" not in proc.stderr
