"""Similar submissions (autograder/report/similar.py): what a copier changes leaves the
fingerprints as they were, a small class made from the catalog's correct variants lists its
planted copies and no honest pair, and the report's section and page show them side by side
(laid out by Chromium)."""

import json
import random
import subprocess

import pytest

from autograder import report
from autograder.audit import catalog, similar_class
from autograder.report import similar, similar_page
from conftest import template
from test_report import chromium

A = "classic_attention"


def _prints(source):
    return set(similar.fingerprints(similar.tokens(similar.canonical(source))))


def test_names_comments_order_and_layout_leave_the_fingerprints_as_they_were():
    rng = random.Random(1)
    for source in catalog.reference_sources(A).values():
        copy = similar_class.disguise(source, rng)
        assert copy != source
        assert _prints(copy) == _prints(source), copy
    ref = catalog.reference_sources(A)
    assert _prints(ref["dot_attention"]) != _prints(ref["general_attention"])


def _class(rng):
    """20 students of classic_attention: the reference and the catalog's 10 correct variants (each
    with the functions it writes its own way, the rest left as the template's stubs), 4 disguised
    copies of 4 of them, and 5 who handed in the stubs alone."""
    ref = catalog.reference_sources(A)
    honest = {"reference": dict(ref)}
    for e in catalog.entries(A):
        if e.correct and e.sources:
            honest[e.name] = dict(e.sources)
    starter = similar.starter_code(A)
    assert starter and set(starter) == set(ref), "the template's stubs are the graded functions"
    cls = dict(honest)
    planted = set()
    for k, victim in enumerate(sorted(honest)[:4]):
        cls[f"copy{k}"] = {f: similar_class.disguise(src, rng) for f, src in honest[victim].items()}
        planted.add(tuple(sorted((f"copy{k}", victim))))
    for k in range(20 - len(cls)):  # a class of 20: the rest left the template as it was
        cls[f"stub{k}"] = dict(starter)
    assert len(honest) >= 11 and len(cls) == 20
    return cls, planted, starter


def test_a_class_of_twenty_lists_its_planted_copies_and_no_honest_pair():
    cls, planted, starter = _class(random.Random(0))
    pairs = similar.compare(cls, starter)
    assert {(p.a, p.b) for p in pairs} == planted
    for p in pairs:
        assert p.similarity >= similar.THRESHOLD and set(p.functions) == set(cls[p.a])
        for share, lines_a, lines_b in p.functions.values():
            assert share >= similar.THRESHOLD and lines_a and lines_b


@pytest.fixture(scope="module")
def graded_folder(tmp_path_factory):
    """A folder as `grade` writes it (results.json per submission, naming the notebook it came
    from) for four notebooks: three correct variants and a disguised copy of one of them."""
    tmp = tmp_path_factory.mktemp("similar")
    cls, planted, _ = _class(random.Random(0))
    copier, victim = sorted(planted)[0]
    for sid in (victim, copier, "reference", "correct_einsum"):
        nb = catalog.fill(template(A), cls[sid])
        path = tmp / "subs" / f"{sid}.ipynb"
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(nb))
        data = {
            "score": 1.0,
            "assignment": A,
            "tests": [{"name": "dot_attention", "score": 1.0, "max_score": 1.0, "output": "", "visibility": "visible"}],
            "extra_data": {"status": "graded", "submission": {"path": str(path), "sha256": "0" * 64}},
        }
        (tmp / "out" / sid).mkdir(parents=True)
        (tmp / "out" / sid / "results.json").write_text(json.dumps(data))
    return tmp / "out", (copier, victim)


def test_the_report_has_a_section_and_a_page_of_the_pairs_side_by_side(graded_folder, tmp_path):
    out, (copier, victim) = graded_folder
    assert report.main(out_dir=str(out)) == 0
    html = (out / "report.html").read_text()
    section = html[html.index('<section id="similar"') :]
    section = section[: section.index("</section>")]
    assert f"<code>{victim}</code>" in section and f"<code>{copier}</code>" in section
    assert section.count("<tr data-pair=") == 1 and f'href="{similar_page.PAGE_NAME}#p0"' in section
    assert "evidence to look at, not a finding" in section
    page = (out / similar_page.PAGE_NAME).read_text()
    sides = page.count('<div class="side">')
    assert sides >= 1 and 'class="shared"' in page
    # Chromium lays each pair's two codes out side by side, at the same height, both visible
    probe = tmp_path / "probe.html"
    probe.write_text(
        page.replace(
            "</body>",
            "<script>var r=[].map.call(document.querySelectorAll('.side > div'),function(e){"
            "var b=e.getBoundingClientRect();return [b.left,b.top,b.width,b.height]});"
            "var p=document.createElement('pre');p.id='probe';p.textContent=JSON.stringify(r);"
            "document.body.appendChild(p);</script></body>",
        )
    )
    proc = subprocess.run(
        [
            chromium(),
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--window-size=1200,900",
            "--virtual-time-budget=3000",
            "--dump-dom",
            probe.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    dom = proc.stdout
    boxes = json.loads(
        dom[dom.index('<pre id="probe">') + len('<pre id="probe">') : dom.index("</pre>", dom.index('id="probe"'))]
    )
    assert len(boxes) == 2 * sides
    for left, right in zip(boxes[::2], boxes[1::2]):
        assert left[0] + left[2] <= right[0] and abs(left[1] - right[1]) < 1, (left, right)
        assert abs(left[2] - right[2]) < 2, "a long line scrolls in its own column, never widens it"
        assert left[2] > 200 and right[2] > 200 and left[3] > 20


def test_without_the_student_template_the_functions_come_from_the_notebooks_tags(graded_folder, tmp_path):
    out, (copier, victim) = graded_folder
    ((assignment, (per, starter)),) = similar.folder_class(out, root=tmp_path).items()  # no template under tmp_path
    assert assignment == A and starter is None and len(per) == 4
    assert set(per[victim]) == set(similar.starter_code(A))  # every graded function, stubs included
    assert tuple(sorted((copier, victim))) in {(p.a, p.b) for p in similar.compare(per, starter)}
