"""Two editions of every student notebook, pt-BR and English, from one source (the
English master and `assignments/<name>/<name>.pt-BR.yml`): both are built and
aligned, a change to one language that is not made in the other fails `build
--check`, the same code scores the same in either, and the pt-BR text is Portuguese."""

import copy
import json
import re
import shutil
import subprocess
import sys

import nbformat
import pytest
import yaml

from autograder import config, layout
from autograder.audit import examples as examples_mod
from autograder.audit.catalog import fill_reference
from autograder.build import check_aligned, editions, sync, texts, time_text
from conftest import ASSIGNMENTS, EDITIONS, ROOT, grade, template

CFG = config.load(ROOT / "grading.yml")


def masters():
    """The synced English masters, in memory."""
    return {d.assignment: d.nb for d in sync.sync({a: CFG.questions(a) for a in ASSIGNMENTS}, check=True)}


def as_node(nb):
    return nbformat.reads(json.dumps(nb), as_version=4)


# -- both editions, aligned ------------------------------------------------------------------


def test_grading_yml_names_the_course_language():
    assert CFG.data.get("language") == "pt-BR"
    assert set(editions.EDITIONS) == set(EDITIONS) == {"pt-BR", "en"}


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_both_editions_are_committed_and_differ_only_in_their_text(assignment):
    nbs = {lang: as_node(template(assignment, lang)) for lang in EDITIONS}
    check_aligned(nbs, assignment)  # raises when cells, ids, tags, questions or otter config differ
    for lang, nb in nbs.items():
        assert nb.metadata["kit_language"] == lang and nb.metadata["kit_assignment"] == assignment
        assert set(nb.metadata["otter"]["tests"]) == set(CFG.questions(assignment))
    en, pt = nbs["en"], nbs["pt-BR"]
    changed = [i for i, (a, b) in enumerate(zip(en.cells, pt.cells)) if a.source != b.source]
    assert len(changed) > len(en.cells) // 2, "most cells read differently in pt-BR"
    for a, b in zip(en.cells, pt.cells):
        if "kit-solution" in a.metadata.get("tags", []):
            assert "Exercício " in b.source and "Task " not in b.source
            assert editions.skeleton(a.source) == editions.skeleton(b.source), "the stubs' code is the same"
    for question, test in pt.metadata["otter"]["tests"].items():
        assert editions.skeleton(test) == editions.skeleton(en.metadata["otter"]["tests"][question]), (
            f"{question}: the public tests differ only in their messages"
        )
        assert test != en.metadata["otter"]["tests"][question], f"{question}: its messages are translated"


def test_translations_and_the_builds_own_texts_are_in_sync():
    assert editions.check(ASSIGNMENTS, masters()) == []
    for key, entry in texts.load().items():
        assert entry["en"] != entry["pt-BR"] or key == "provided_header", key


# -- drift: a change to one language that is not made in the other -----------------------------


def _first(nb, kind):
    return next(
        c
        for c in nb.cells
        if c.cell_type == kind
        and c.source.strip()
        and not set(c.metadata.get("tags", [])) & set(editions.GENERATED_TAGS)
    )


def test_an_english_cell_or_message_changed_alone_is_drift_named_in_one_line():
    nb = masters()["scaled_dot_product"]
    edited = copy.deepcopy(nb)
    cell = next(c for c in edited.cells if c.cell_type == "markdown" and "## 3." in c.source)
    cell.source += "\nOne more English sentence."
    test_cell = next(c for c in edited.cells if "def test_sdpa_masks" in c.source)
    test_cell.source = test_cell.source.replace("should get exactly 0", "must get exactly 0")
    lines = editions.check_assignment("scaled_dot_product", edited, "pt-BR")
    assert len(lines) == 2 and all("\n" not in line for line in lines), lines
    assert f"cells.{cell.id}" in lines[0] and "the English changed" in lines[0]
    assert "messages.test_sdpa_masks" in lines[1] and "the English changed" in lines[1]
    assert editions.check_assignment("scaled_dot_product", nb, "pt-BR") == []


def test_a_translation_changed_alone_or_wrongly_is_drift(tmp_path):
    nb = masters()["multi_head"]
    folder = tmp_path / "multi_head"
    folder.mkdir()
    path = editions.translation_path("multi_head", "pt-BR")
    data = yaml.safe_load(path.read_text())
    data["cells"]["cell-002"]["text"] += " Agora."  # pt-BR alone
    data["messages"]["test_split_heads_small"]["text"]["head"] = "cabeça errada"  # loses {i}, {a}, {b}
    data["messages"]["test_split_heads_small"]["pt-BR"] = editions.digest(
        data["messages"]["test_split_heads_small"]["text"]
    )
    cell = data["cells"]["cell-042"]
    cell["text"] = cell["text"].replace("demo_x, demo_x, demo_x", "demo_x, demo_x, demo_x * 2")  # changes the code
    cell["pt-BR"] = editions.digest(cell["text"])
    del data["docstrings"]["merge_heads"]
    data["cells"]["cell-999"] = {"en": "0", "pt-BR": "0", "text": "sobrou"}
    (folder / path.name).write_text(yaml.safe_dump(data, allow_unicode=True))
    lines = editions.check_assignment("multi_head", nb, "pt-BR", root=tmp_path)
    joined = "\n".join(lines)
    assert len(lines) == 5, joined
    assert re.search(r"cells\.cell-002 .*the pt-BR text changed and its English did not", joined)
    assert re.search(r"messages\.test_split_heads_small .*message head must take the same \{fields\}", joined)
    assert re.search(r"cells\.cell-042 .*changes the code", joined)
    assert re.search(r"docstrings\.merge_heads .*no pt-BR translation", joined)
    assert re.search(r"cells\.cell-999: translates English that is no longer there", joined)


def _course_copy(tmp_path):
    """A copy of the course (package, masters, translations, solutions, templates, examples,
    the measured times the build says) where a test may change sources; commands run there
    use the copy's package."""
    dest = tmp_path / "course"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")
    for name in ("autograder", "assignments", "solutions", "student_template", "examples"):
        shutil.copytree(ROOT / name, dest / name, symlinks=True, ignore=ignore)
    figures = time_text.FIGURES.relative_to(layout.KIT_ROOT)  # the kit-time cells' figures
    (dest / figures).parent.mkdir(parents=True)
    shutil.copy(ROOT / figures, dest / figures)
    shutil.copy(ROOT / "grading.yml", dest / "grading.yml")
    return dest


def _build_check(course, *args):
    env = {k: v for k, v in __import__("os").environ.items() if k != "KIT_GRADING_YML"}
    return subprocess.run(
        [sys.executable, "-m", "autograder", "build", *(args or ["--check"])],
        cwd=course,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )


@pytest.mark.slow
@pytest.mark.parametrize("change", ["english cell", "docstring", "pt-BR alone"])
def test_build_check_exits_1_naming_what_drifted(tmp_path, change):
    course = _course_copy(tmp_path)
    if change == "english cell":
        master = course / "assignments" / "scaled_dot_product" / "scaled_dot_product.ipynb"
        nb = nbformat.read(master, as_version=4)
        cell = next(c for c in nb.cells if c.cell_type == "markdown" and "## 2." in c.source)
        cell.source = cell.source.replace("stalls learning", "slows learning down")
        nbformat.write(nb, master)
        want = f"scaled_dot_product.pt-BR.yml: cells.{cell.id} "
    elif change == "docstring":
        module = course / "solutions" / "scaled_dot_product.py"
        module.write_text(module.read_text().replace("Causal (look-ahead) mask.", "The causal (look-ahead) mask."))
        want = "scaled_dot_product.pt-BR.yml: docstrings.causal_mask "
    else:
        path = course / "assignments" / "classic_attention" / "classic_attention.pt-BR.yml"
        path.write_text(path.read_text().replace("Rode as células em ordem.", "Rode as células na ordem."))
        want = "classic_attention.pt-BR.yml: cells.cell-001 "
    proc = _build_check(course)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    named = [line for line in proc.stdout.splitlines() if want in line]
    assert len(named) == 1, proc.stdout
    side = "the pt-BR text changed" if change == "pt-BR alone" else "the English changed"
    assert side in named[0] and "python -m autograder.build.stamp" in named[0], named[0]
    if change == "pt-BR alone":  # --dist-only compares the same way and then builds nothing
        out = tmp_path / "dist"
        proc = _build_check(course, "--dist-only", "--out", str(out))
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert [line for line in proc.stderr.splitlines() if want in line], proc.stderr
        assert not out.exists() or not any(out.iterdir()), sorted(out.rglob("*"))


# -- the same code scores the same in either edition ------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_reference_scores_full_marks_in_either_edition(assignment, tmp_path):
    got = {}
    for lang in EDITIONS:
        path = tmp_path / lang / f"{assignment}.ipynb"
        path.parent.mkdir()
        path.write_text(json.dumps(fill_reference(template(assignment, lang), assignment)))
        result = grade(path, cfg=CFG)
        got[lang] = {q: (r.score, r.max_score) for q, r in result.questions.items()}
        assert all(s == m for s, m in got[lang].values()), (lang, got[lang])
    assert got["pt-BR"] == got["en"]


def test_each_assignment_has_a_pt_BR_example_with_the_english_expectation():
    expected = examples_mod.expected()
    for a in ASSIGNMENTS:
        pt = [rel for rel, e in expected.items() if e["assignment"] == a and e.get("language") == "pt-BR"]
        assert len(pt) == 1, (a, pt)
        nb = json.loads((examples_mod.EXAMPLES / pt[0]).read_text())
        assert nb["metadata"]["kit_language"] == "pt-BR"
        english = pt[0].replace("_pt-BR.ipynb", ".ipynb")
        assert expected[pt[0]]["loses"] == expected[english]["loses"], "grading does not depend on the language"
        assert any(e.get("language") is None and e["assignment"] == a for e in expected.values())


# -- the pt-BR text is Portuguese ------------------------------------------------------------

# Frequent English words that are not Portuguese words too.
ENGLISH = frozenset(
    """the and of to is with you your that this are be not it its by from each every which
when must should will can has have an or at into than then only if all what where how why does their
there these those been being was were would could get gets got give gives here one""".split()
)


def english_sentences(text):
    """The sentences of `text` (markdown or a message) with two or more distinct common English
    words, outside code spans, math, links and italic titles."""
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = re.sub(r"\$\$.*?\$\$", " ", text, flags=re.S)
    text = re.sub(r"\$[^$]*\$", " ", text)
    text = re.sub(r"`[^`]*`", " ", text)
    text = re.sub(r"https?://\S+", " ", text)
    text = re.sub(r"(?<!\*)\*(?!\*)[^*]+\*(?!\*)", " ", text)  # *a title*, not **bold**
    found = []
    for sentence in re.split(r"(?<=[.!?:;])\s+|\n\s*\n|\n[-|#]", text):
        words = {w.lower() for w in re.findall(r"[A-Za-zÀ-ÿ]+", sentence)}
        if len(words & ENGLISH) >= 2:
            found.append(sentence.strip())
    return found


def student_texts(nb):
    """(where, text) of what a student reads as prose: markdown cells and the public checks' messages."""
    out = [(f"cell {c.get('id')}", c.source) for c in nb.cells if c.cell_type == "markdown"]
    for question, test in nb.metadata["otter"]["tests"].items():
        for fn, msgs, _ in editions.test_messages(test):
            out += [(f"{fn} MESSAGES[{k!r}]", v) for k, v in msgs.items()]
    return out


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_pt_BR_edition_has_no_english_sentences_left(assignment):
    pt = as_node(template(assignment, "pt-BR"))
    left = [(where, s) for where, text in student_texts(pt) for s in english_sentences(text)]
    assert not left, "\n".join(f"{w}: {s[:120]}" for w, s in left)
    docs = editions.load(assignment, "pt-BR")["docstrings"]
    left = [(k, s) for k, e in docs.items() for s in english_sentences(e["text"])]
    assert not left, left
    # the heuristic does see English: the English edition trips it nearly everywhere
    en = as_node(template(assignment, "en"))
    flagged = [w for w, text in student_texts(en) if english_sentences(text)]
    assert len(flagged) > len(student_texts(en)) // 2
