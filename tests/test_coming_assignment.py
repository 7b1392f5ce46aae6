"""The coming fifth assignment, `transformer_block`, before grading.yml lists it.

Its master notebook, hidden suites and catalog are in the tree but inert (`build`,
`grade` and the audit read only the assignments grading.yml lists). So that they
do not rot until it is listed, it is listed here in a copy of grading.yml (the
entry it will get, `COMING`), built into a temporary folder (both editions, otter
assign) and graded by the judge: its reference full marks in either edition, its
untouched template 0, and a bug in each part another part uses losing points on
its own question only (each bug charged once: the judge stands in for the parts
the graded one builds or calls).
"""

import json

import pytest
import yaml

from autograder import config
from conftest import ROOT, grade

pytestmark = pytest.mark.slow  # builds the notebooks and grades them

NAME = "transformer_block"
COMING = {
    "title": "Transformer lab: positions, a decoder block and a small language model",
    "questions": {
        "positional_encoding": 2,
        "feed_forward": 2,
        "decoder_block": 5,
        "transformer_lm": 4,
        "next_token_loss": 2,
    },
}
# a bug in each part another graded part uses: the positions (a function TransformerLM calls),
# the feed-forward (a module DecoderBlock builds), the block (a module TransformerLM builds)
ENTRIES = ("pe_sin_cos_concatenated", "ffn_gelu", "block_post_norm")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(cfg with the assignment listed, {edition: student notebook dict}), built once."""
    from autograder.build import build_assignment

    tmp = tmp_path_factory.mktemp("coming")
    data = yaml.safe_load((ROOT / "grading.yml").read_text())
    assert NAME not in data["assignments"], "listed already: this test's work is the kit's own tests' now"
    data["assignments"][NAME] = COMING
    yml = tmp / "grading.yml"
    yml.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KIT_GRADING_YML", str(yml))
        notebooks, _, _ = build_assignment(NAME, tmp / "work", write_template=False, template_dir=tmp / "tpl")
    return config.load(yml), {lang: json.loads(nb) for lang, nb in notebooks.items()}


def _grade(nb, tmp_path, name, cfg, lang):
    path = tmp_path / f"{name}.ipynb"
    path.write_text(json.dumps(nb))
    result = grade(path, assignment=NAME, cfg=cfg, lang=lang)
    assert result.status == "graded", result.internal_errors
    return {q: r.score for q, r in result.questions.items()}


@pytest.mark.parametrize("lang", ["en", "pt-BR"])
def test_its_reference_gets_full_marks_and_its_template_zero(built, tmp_path, lang):
    from autograder.audit.catalog import fill_reference

    cfg, notebooks = built
    assert _grade(fill_reference(notebooks[lang], NAME), tmp_path, "reference", cfg, lang) == COMING["questions"]
    assert set(_grade(notebooks[lang], tmp_path, "template", cfg, lang).values()) == {0}


def test_a_bug_of_each_part_loses_points_on_its_own_question_only(built, tmp_path):
    from autograder.audit import catalog

    cfg, notebooks = built
    for entry in (catalog.load_entry(catalog.CATALOG / NAME / f"{e}.py") for e in ENTRIES):
        scores = _grade(catalog.fill_entry(notebooks["en"], entry), tmp_path, entry.name, cfg, "en")
        lost = {q for q, s in scores.items() if s < COMING["questions"][q]}
        assert lost == set(entry.questions), (entry.name, scores)
