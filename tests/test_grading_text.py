"""What the notebooks tell students about grading, generated from grading.yml
(`autograder.build.grading_text`), and the notebooks' other guide posts.

The "How you are graded" cell (`kit-grading`) and the training run's cell
(`kit-grading-run`) say what grading.yml says: a dtype moved between points and
evidence, or a threshold changed, changes the text, through the build's own
sync; both editions carry the text of the committed grading.yml. Also: the
first cell is collapsed, every task says its level and a class its question,
every notebook its time, the course's mask polarity is explained, and no
message a student reads speaks of the kit's insides ("worker", "stand-in")."""

import copy
import json
import re

import pytest
import yaml

from autograder import config, messages
from autograder.build import assign, editions, grading_text, sync, texts
from conftest import ASSIGNMENTS, EDITIONS, ROOT, template

CFG = config.load(ROOT / "grading.yml")
LAB = "seq2seq_attention"
CLASSIC = "classic_attention"


def _cells(nb):
    return [(c["cell_type"], "".join(c["source"]), c) for c in nb["cells"]]


def _cfg_with(tmp_path, run=None, **sections):
    """A course's grading.yml: the kit's, with `sections` replacing its own (key by key), and
    the lab's run with the keys of `run`."""
    data = yaml.safe_load((ROOT / "grading.yml").read_text())
    for name, value in sections.items():
        data[name] = {**data[name], **value} if isinstance(value, dict) else value
    if run:
        data["assignments"][LAB]["run"].update(run)
    path = tmp_path / "grading.yml"
    path.write_text(yaml.safe_dump(data))
    return config.load(path)


def _bullet(text, title):
    """The list item of `text` that starts with `title` (bold), or ''."""
    for item in re.split(r"\n(?=- \*\*)", text):
        if item.startswith(f"- **{title}"):
            return item
    return ""


# -- the text says what grading.yml says ----------------------------------------------------


def test_the_overview_states_the_devices_dtypes_meta_fill_and_limits_of_grading_yml():
    text = grading_text.overview(CLASSIC, "en", CFG)
    scored = _bullet(text, "What earns points")
    assert "on the CPU in float64, float32, float16 and bfloat16" in scored
    for dtype in CFG.devices["cpu"]:
        atol, rtol = CFG.tolerance(dtype)
        assert f"`atol = {atol:g}`, `rtol = {rtol:g}` in {dtype}" in scored
    evidence = _bullet(text, "Reported, never scored")
    assert CFG.evidence_devices() == {"cuda"} and "on a GPU (`cuda`) in float32, float16 and bfloat16" in evidence
    half = _bullet(text, "Half precision counts")
    assert "on the CPU in float16 and bfloat16" in half and "`-1e9`" in half and "65504" in half
    meta = _bullet(text, "The `meta` device")
    assert "`device=`" in meta and "`.item()`" in meta and "float32" in meta
    limits = _bullet(text, "Time and memory")
    for key in ("load_seconds", "cpu_seconds_per_call", "submission_seconds", "memory_mb"):
        assert str(CFG.limits[key]) in limits, key
    assert "GPU, half precision" not in text and "on GPU" not in text
    pt = grading_text.overview(CLASSIC, "pt-BR", CFG)
    assert pt.startswith("## Como você será avaliado") and "na CPU em float64, float32, float16 e bfloat16" in pt
    assert "na GPU, meia precisão" not in pt


def test_a_dtype_moved_to_evidence_changes_the_generated_text(tmp_path):
    before = grading_text.overview(CLASSIC, "en", CFG)
    # float16 and bfloat16 leave the CPU: they run on CUDA only, an evidence device
    moved = _cfg_with(tmp_path, devices={"cpu": ["float64", "float32"]})
    after = grading_text.overview(CLASSIC, "en", moved)
    assert after != before
    assert "on the CPU in float64 and float32." in _bullet(after, "What earns points")
    assert "in float16" not in _bullet(after, "What earns points")
    assert not _bullet(after, "Half precision counts")
    assert "on a GPU (`cuda`) in float16 and bfloat16 only where" in _bullet(after, "Half precision.")
    # and CUDA's flag turned off: its cases earn points, nothing is reported only
    (tmp_path / "b").mkdir()
    scored = _cfg_with(tmp_path / "b", scoring={"evidence_devices": []})
    text = grading_text.overview(CLASSIC, "pt-BR", scored)
    assert "na CPU em float64, float32, float16 e bfloat16 e numa GPU (`cuda`) em float32, float16 e bfloat16" in text
    assert "Só informado, sem nota" not in text


def test_the_build_writes_a_changed_grading_yml_into_both_editions(tmp_path, monkeypatch):
    """Through the build's own steps: sync regenerates the master's cell from the grading.yml
    in force ($KIT_GRADING_YML, as for a course's own file), localize the pt-BR edition's."""
    moved = _cfg_with(tmp_path, devices={"cpu": ["float64", "float32"]})
    nb = sync.read_notebook(sync.master_path(CLASSIC))
    assert sync.sync_notebook(copy.deepcopy(nb), CLASSIC, CFG.questions(CLASSIC)) == []  # committed: in sync
    monkeypatch.setenv("KIT_GRADING_YML", str(moved.path))
    changed = copy.deepcopy(nb)
    lines = sync.sync_notebook(changed, CLASSIC, moved.questions(CLASSIC))
    assert lines == [
        next(
            f"cell {i} (kit-grading): regenerated from grading.yml"
            for i, c in enumerate(nb.cells, 1)
            if grading_text.TAG in c.metadata.get("tags", [])
        )
    ]
    cell = next(c for c in changed.cells if grading_text.TAG in c.metadata.get("tags", []))
    assert (
        cell.source == grading_text.overview(CLASSIC, "en", moved)
        and "in float16" not in cell.source.split("Reported")[0]
    )
    pt = editions.localize(CLASSIC, changed, "pt-BR")
    pt_cell = next(c for c in pt.cells if c.get("id") == cell.id)
    assert pt_cell.source == grading_text.overview(CLASSIC, "pt-BR", moved)


def test_the_training_run_cell_states_every_threshold_and_follows_them(tmp_path):
    run = CFG.run(LAB)
    text = grading_text.training_run(LAB, "en", CFG)
    th = run["thresholds"]
    assert f"at most {th['loss_ratio_at_most']:g} times" in text
    for length, value in th["accuracy"].items():
        assert f"{value:g} at length {length}" in text.split("accuracy:**")[1].split("\n")[0]
    for length, value in th["gap_over_baseline"].items():
        assert f"{value:g} at length {length}" in text.split("gap over the baseline**")[1].split("\n")[0]
    assert f"at length {max(run['eval_lengths'])} falls to at most {th['zeroed_context_at_most']:g}" in text
    for value in (run["steps"], run["batch_size"], run["max_len"], run["cpu_seconds"], run["eval_per_length"]):
        assert f"{value:g}" in text
    assert 'grader.check("training_run")' in text and "grading.yml" not in text
    stricter = _cfg_with(tmp_path, run={"thresholds": {**th, "accuracy": {4: 0.95, 12: 0.6}}})
    changed = grading_text.training_run(LAB, "pt-BR", stricter)
    assert "0,95 no comprimento 4 e 0,6 no comprimento 12" in changed  # a decimal comma in pt-BR prose
    assert changed != grading_text.training_run(LAB, "pt-BR", CFG)


def test_which_suites_run_the_device_matrix():
    assert grading_text.suite_uses(CLASSIC) == (True, True)
    assert grading_text.suite_uses(LAB) == (False, False)
    lab = grading_text.overview(LAB, "en", CFG)
    assert "float16" not in lab and "`meta`" not in lab and "The training run" in lab


# -- the committed notebooks carry it -------------------------------------------------------


@pytest.mark.parametrize("lang", EDITIONS)
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_each_edition_carries_the_generated_text_where_it_belongs(assignment, lang):
    nb = template(assignment, lang)
    cells = _cells(nb)
    overview = [i for i, (_, _, c) in enumerate(cells) if grading_text.TAG in c["metadata"].get("tags", [])]
    assert len(overview) == 1 and cells[overview[0]][1] == grading_text.overview(assignment, lang, CFG)
    assert overview[0] == 2, "right after the opening cell"
    runs = [i for i, (_, _, c) in enumerate(cells) if grading_text.RUN_TAG in c["metadata"].get("tags", [])]
    if "training_run" in CFG.questions(assignment):
        assert len(runs) == 1 and cells[runs[0]][1] == grading_text.training_run(assignment, lang, CFG)
        assert cells[runs[0] + 1][1].strip() == 'grader.check("training_run")', "it stands above its check"
    else:
        assert runs == []
    prose = "\n".join(src for kind, src, _ in cells if kind == "markdown")
    assert "grading.yml" not in prose and "GPU, half precision" not in prose and "na GPU, meia" not in prose
    assert "As duas verificações abaixo" not in prose and "The two checks below" not in prose


@pytest.mark.parametrize("lang", EDITIONS)
def test_the_first_cell_is_collapsed_with_one_line_that_says_what_it_does(lang):
    for assignment in ASSIGNMENTS:
        first = template(assignment, lang)["cells"][0]
        assert first["metadata"]["jupyter"] == {"source_hidden": True} and first["metadata"]["cellView"] == "form"
        lines = "".join(first["source"]).split("\n")
        assert lines[0] == texts.get("init_comment", lang) and lines[0].startswith("#@title ")
        assert lines[1] == "try:", "one comment line, then the code"
    assert assign.INIT_CELL_METADATA["jupyter"]["source_hidden"] is True


LEVELS = {"en": ("Easy", "Medium", "Hard"), "pt-BR": ("Fácil", "Médio", "Difícil")}


@pytest.mark.parametrize("lang", EDITIONS)
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_task_states_its_level_a_class_its_question_and_the_notebook_its_time(assignment, lang):
    nb = template(assignment, lang)
    word = "Task" if lang == "en" else "Exercício"
    levels = "|".join(LEVELS[lang])
    prompts = [src for kind, src, _ in _cells(nb) if kind == "markdown" and src.startswith(f"**{word} `")]
    graded = [q for q in CFG.questions(assignment) if q != "training_run"]
    assert len(prompts) == len(graded), prompts
    for src in prompts:
        name = re.match(rf"\*\*{word} `(\w+)", src).group(1)
        assert re.match(rf"\*\*{word} `[^`]*` \(({levels})[;)]", src), src[:120]
        question = sync.question_name(name)
        assert question in graded
        if question != name:  # a class: the question it is graded as
            assert f"`{question}`" in src.split("\n")[0], src[:160]
    opening = _cells(nb)[1][1]
    assert re.search(r"Expect about .+ of work" if lang == "en" else r"Conte com umas? .+ de trabalho", opening)
    assert re.search(rf"\| `\w+` \| ({levels}) \|", opening), "the table of tasks gives each its level"


@pytest.mark.parametrize("lang", EDITIONS)
def test_the_course_mask_polarity_is_explained_where_masks_are(lang):
    for assignment in ("scaled_dot_product", "multi_head"):
        prose = "\n".join(src for kind, src, _ in _cells(template(assignment, lang)) if kind == "markdown")
        assert 'masked_fill(mask, float("-inf"))' in prose and "masked_fill(mask == 0" in prose
        assert "`~mask`" in prose and "`mask.bool()`" in prose


@pytest.mark.parametrize("lang", EDITIONS)
def test_the_course_experiments_are_there(lang):
    classic = _cells(template(CLASSIC, lang))
    move = [src for kind, src, _ in classic if kind == "code" and "RADIUS" in src and "dot_attention(" in src]
    assert len(move) == 1 and "for step in range(" in move[0]
    lab = _cells(template(LAB, lang))
    heat = [
        i for i, (kind, src, _) in enumerate(lab) if kind == "code" and "greedy_decode(" in src and "imshow(" in src
    ]
    training = next(i for i, (kind, src, _) in enumerate(lab) if kind == "code" and "LONG_RUN = False" in src)
    assert len(heat) == 1 and heat[0] > training, "the alignment heatmap comes after training"
    before = lab[heat[0] - 1][1]
    assert "LONG_RUN" in before and ("not an explanation" in before or "não são uma explicação" in before)


@pytest.mark.parametrize("lang", EDITIONS)
def test_the_by_hand_sentence_is_in_the_editions_language(lang):
    prose = "\n".join(src for kind, src, _ in _cells(template("scaled_dot_product", lang)) if kind == "markdown")
    sentence = '"the cat sleeps"' if lang == "en" else '"o gato dorme"'
    assert sentence in prose and ("the cat sleeps" in prose) == (lang == "en")


def test_no_message_a_student_reads_speaks_of_the_kits_insides():
    inside = re.compile(r"\bworkers?\b|stand-in|stand in|\bsubstitut[ao]s?\b", re.I)
    bad = [
        f"{key} ({lang}): {text}"
        for key, entry in messages.catalog().items()
        for lang, text in entry.items()
        if inside.search(text)
    ]
    assert not bad, "\n".join(bad)
    for assignment in ASSIGNMENTS:
        for lang in EDITIONS:
            text = json.dumps(template(assignment, lang), ensure_ascii=False)
            assert not re.search(r"stand-in that the|uma substituta", text), (assignment, lang)


def test_the_generated_cells_are_not_translation_units():
    nb = sync.read_notebook(sync.master_path(LAB))
    units = editions.english_units(LAB, nb)
    tagged = {c.get("id") for c in nb.cells if grading_text.tag_of(c.metadata.get("tags", []))}
    assert tagged and not tagged & {key for _, key in units}
