"""Student notebooks run as a student runs them: in a Jupyter kernel, top to bottom."""

import json
import re

import nbformat
import pytest
from nbclient import NotebookClient

from autograder.audit import examples as examples_mod
from autograder.audit.catalog import entries, fill_entry, fill_reference
from autograder.build import texts
from conftest import ASSIGNMENTS, EDITIONS, ROOT, run_cli, template

pytestmark = pytest.mark.slow  # every test here runs a kernel or the CLI

# The labs' demonstrations train models for 400 steps when a person runs the notebook
# (the training lab two, about half a minute here; the transformer lab three, and its "try a
# similar problem" one more). The references' kernel runs train them for 40 steps: the checks
# train models of their own and read nothing of the demonstrations'. The training lab's
# English reference keeps the 400, as a person runs it. The
# transformer lab's 400-step models are the grader's own run, trained at full length in
# tests/test_transformer_run.py (and on 10 seeds by bench/run_seeds.py).
FULL_DEMO = ("seq2seq_attention",)
DEMOS = {  # assignment: (the line that sets the demonstration's steps, the same at 40 steps)
    "seq2seq_attention": (
        "MAX_LEN, STEPS = (80, 3000) if LONG_RUN else (20, 400)",
        "MAX_LEN, STEPS = (80, 3000) if LONG_RUN else (20, 40)",
    ),
    "transformer_block": (
        "STEPS, BATCH, LENGTH, N_SYMBOLS, LR = 400, 32, 8, 8, 0.003",
        "STEPS, BATCH, LENGTH, N_SYMBOLS, LR = 40, 32, 8, 8, 0.003",
    ),
}


def short_demo(nb, assignment):
    """`nb` (a dict) with a lab's demonstration shortened; other assignments' notebooks as they are."""
    if assignment not in DEMOS:
        return nb
    line, short = DEMOS[assignment]
    hits = 0
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and line in source:
            cell["source"], hits = source.replace(line, short), hits + 1
    assert hits == 1, f"{assignment}'s demonstration line changed: update DEMOS ({hits} cells hold it)"
    return nb


def execute(path, tmp_path):
    nb = nbformat.read(path, as_version=4)
    work = tmp_path / path.parent.name
    work.mkdir()
    # otter.Notebook("<assignment>.ipynb") looks for the notebook beside it
    nbformat.write(nb, work / f"{path.parent.name}.ipynb")
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(work)}}).execute()
    return nb


def outputs(nb, needle):
    cell = next(c for c in nb.cells if c.cell_type == "code" and needle in c.source)
    return "".join(o.get("text", "") + json.dumps(o.get("data", {}), ensure_ascii=False) for o in cell.outputs)


def template_notebook(assignment, lang, tmp_path):
    """The untouched student template of an edition, as a file: English from examples/submissions/,
    pt-BR written here from its student template."""
    if lang == "en":
        return examples_mod.EXAMPLES / assignment / "template.ipynb"
    path = tmp_path / f"src-{lang}" / assignment / "template.ipynb"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(template(assignment, lang)))
    return path


def stub_word(lang):
    """How the stub's NotImplementedError starts in an edition ("Task ", "Exercício ")."""
    return texts.get("stub", lang).split("{")[0]


def passed_text(question, lang):
    """What a passing grader.check prints, otter-grader installed or not: the init cell's display."""
    return texts.get("init_passed", lang).split("(")[0].format(question=question).strip()


def failed_text(lang):
    """How a failing grader.check's line goes on after the question (" failed ", " falhou em ")."""
    return texts.get("init_failed", lang).split("{question}")[1].split("{k}")[0]


@pytest.mark.parametrize("lang", EDITIONS)
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_untouched_template_runs_to_the_end_and_checks_report_the_stubs(assignment, lang, tmp_path):
    nb = execute(template_notebook(assignment, lang, tmp_path), tmp_path)
    report = outputs(nb, "grader.check_all()")
    assert "NotImplementedError" in report and stub_word(lang) in report


def test_check_command_for_student_ci():
    from autograder import config

    n = len(config.load(ROOT / "grading.yml").questions("scaled_dot_product"))
    ok = run_cli("check", examples_mod.EXAMPLES / "scaled_dot_product" / "reference.ipynb", check=False)
    assert ok.returncode == 0 and f"{n} of {n} questions pass" in ok.stdout, ok.stdout + ok.stderr
    bad = run_cli("check", examples_mod.EXAMPLES / "scaled_dot_product" / "template.ipynb", check=False)
    assert bad.returncode == 1 and "NotImplementedError: Task causal_mask" in bad.stdout


def test_check_json_prints_the_verdicts_for_scripts_with_the_same_exit_status():
    """`check --json`: stdout is one JSON object, the same verdicts the text gives (per question
    passed or not, cases passed of cases, each failure), in the language asked, same exit status."""
    import json

    from autograder import config

    questions = list(config.load(ROOT / "grading.yml").questions("scaled_dot_product"))
    folder = examples_mod.EXAMPLES / "scaled_dot_product"
    ok = run_cli("check", folder / "reference.ipynb", "--json", check=False)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    found = json.loads(ok.stdout)
    assert found["assignment"] == "scaled_dot_product" and found["language"] == "en"
    assert [q["question"] for q in found["questions"]] == questions and found["passed"] == found["total"] == len(
        questions
    )
    assert all(q["passed"] and q["cases_passed"] == q["cases"] > 0 and not q["failures"] for q in found["questions"])
    bad = run_cli("check", folder / "template.ipynb", "--json", "--lang", "pt-BR", check=False)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    found = json.loads(bad.stdout)
    assert found["language"] == "pt-BR" and found["passed"] < found["total"]
    causal = next(q for q in found["questions"] if q["question"] == "causal_mask")
    assert not causal["passed"] and causal["cases_passed"] < causal["cases"]
    assert any("NotImplementedError" in f["error"] and f["case"] for f in causal["failures"]), causal


# -- wherever a student opens it: a renamed copy, Colab, no otter --------------------------
def run_where(nb, folder, name, cwd=None, env=None, monkeypatch=None):
    """Write `nb` as folder/name and execute it with the kernel's working directory `cwd`
    (default: the notebook's folder, as Jupyter does) and extra environment `env`."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    nbformat.write(nbformat.from_dict(nb), path)
    run = nbformat.read(path, as_version=4)
    for key, value in (env or {}).items():
        monkeypatch.setenv(key, value)
    NotebookClient(
        run, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(cwd or folder)}}
    ).execute()
    return run


def check_outputs(nb):
    """{question: text of its grader.check cell's output}."""
    found = {}
    for cell in nb.cells:
        m = re.fullmatch(r'grader\.check\("(\w+)"\)\s*', cell.source) if cell.cell_type == "code" else None
        if m:
            found[m.group(1)] = "".join(
                o.get("text", "") + json.dumps(o.get("data", {}), ensure_ascii=False) for o in cell.outputs
            )
    return found


def colab_shim(tmp_path, notebook):
    """A PYTHONPATH folder where `import otter` fails and google.colab hands over `notebook`'s JSON."""
    shim = tmp_path / "shim"
    (shim / "otter").mkdir(parents=True)
    (shim / "otter" / "__init__.py").write_text("raise ImportError(\"No module named 'otter'\")\n")
    (shim / "google" / "colab").mkdir(parents=True)
    (shim / "google" / "__init__.py").write_text("")
    (shim / "google" / "colab" / "__init__.py").write_text("")
    (shim / "google" / "colab" / "_message.py").write_text(
        "import json\n\ndef blocking_request(kind, request='', timeout_sec=5):\n"
        "    assert kind == 'get_ipynb'\n"
        f"    return {{'ipynb': json.load(open({str(notebook)!r}, encoding='utf-8'))}}\n"
    )
    return {"PYTHONPATH": str(shim)}


# Every reference runs once per edition, each time where a student opens a copy: a renamed copy
# in another folder (otter present) in one edition and Colab (no otter, an unknown file name,
# the notebook not in the working directory) in the other, alternating, so each place sees every
# assignment and both languages. Both editions run the same code (tests/test_editions.py: they
# differ only in their text).
PLACES = [(a, EDITIONS[i % 2], "renamed copy") for i, a in enumerate(ASSIGNMENTS)] + [
    (a, EDITIONS[(i + 1) % 2], "colab") for i, a in enumerate(ASSIGNMENTS)
]


@pytest.mark.parametrize("assignment, lang, place", PLACES)
def test_reference_passes_every_check_and_draws_its_heatmap_wherever_it_is_opened(
    assignment, lang, place, tmp_path, monkeypatch
):
    nb = fill_reference(template(assignment, lang), assignment)
    if not (lang == "en" and assignment in FULL_DEMO):
        nb = short_demo(nb, assignment)
    if place == "renamed copy":
        run = run_where(nb, tmp_path / "my homework", f"Copy of {assignment}.ipynb", monkeypatch=monkeypatch)
    else:  # Colab: the init cell's stand-in gets the notebook from Colab and runs every check
        drive = tmp_path / "drive"
        drive.mkdir()
        (drive / "Untitled3.ipynb").write_text(json.dumps(nb))
        content = tmp_path / "content"
        content.mkdir()
        env = colab_shim(tmp_path, drive / "Untitled3.ipynb")
        run = run_where(nb, tmp_path / "kernel", "Untitled3.ipynb", cwd=content, env=env, monkeypatch=monkeypatch)
        first = "".join(o.get("text", "") + o.get("evalue", "") for o in run.cells[0].outputs)
        assert "Error" not in first, first
        assert texts.get("init_export", lang) in outputs(run, "grader.export(")
    assert run.metadata["kit_language"] == lang
    report = outputs(run, "grader.check_all()")
    assert "NotImplementedError" not in report and failed_text(lang) not in report, report[:2000]
    found = check_outputs(run)
    assert set(found) == set(nb["metadata"]["otter"]["tests"]), "every question has its grader.check cell"
    for question, text in found.items():
        assert passed_text(question, lang) in text and failed_text(lang) not in text and "Error" not in text, (
            question,
            text[:2000],
        )
    images = [o for c in run.cells if c.cell_type == "code" for o in c.outputs if "image/png" in o.get("data", {})]
    assert images, "the heatmap cell draws the student's weights"
    # the course's experiments draw in Jupyter too (this run is their test: no kernel of their own)
    drawn = {
        "classic_attention": ("RADIUS", "dot_attention("),  # move the decoder state, watch the weights
        "seq2seq_attention": ("greedy_decode(", "imshow("),  # the trained model's alignment heatmap
    }.get(assignment)
    if drawn:
        cell = next(c for c in run.cells if c.cell_type == "code" and all(n in c.source for n in drawn))
        assert any("image/png" in o.get("data", {}) for o in cell.outputs), [o.get("text") for o in cell.outputs]
    # a heatmap that draws NaN weights in their own colour says nothing of NaN for the reference's
    # (the NaN case: test_heatmap_draws_nan_weights_in_their_own_colour_with_a_note)
    for cell in (c for c in run.cells if c.cell_type == "code" and "cmap.set_bad(" in c.source):
        assert "NaN" not in "".join(o.get("text", "") for o in cell.outputs), assignment


def test_without_otter_the_stub_fails_its_checks_with_their_messages(tmp_path, monkeypatch):
    nb = template("scaled_dot_product")
    (tmp_path / "hw").mkdir()
    env = colab_shim(tmp_path, tmp_path / "nowhere.ipynb")  # Colab's request fails: the copy on disk is read
    run = run_where(nb, tmp_path / "hw", "hw (1).ipynb", env=env, monkeypatch=monkeypatch)
    found = check_outputs(run)
    assert set(found) == {"by_hand", "causal_mask", "padding_mask", "scaled_dot_product_attention"}
    for question, text in found.items():
        # a stub raises its task's NotImplementedError; the by-hand cell still holds its ...
        why = "replace each ... with a number" if question == "by_hand" else "NotImplementedError: Task"
        assert f"{question} failed" in text and why in text, text[:2000]
    report = outputs(run, "grader.check_all()")
    assert report.count(" failed ") == 4


def test_heatmap_draws_nan_weights_in_their_own_colour_with_a_note(tmp_path, monkeypatch):
    entry = next(e for e in entries("classic_attention") if e.name == "softmax_nan_fully_masked")
    nb = fill_entry(template("classic_attention"), entry)
    run = run_where(nb, tmp_path / "hw", "classic_attention.ipynb", monkeypatch=monkeypatch)
    cell = next(c for c in run.cells if c.cell_type == "code" and "cmap.set_bad(" in c.source)
    text = "".join(o.get("text", "") for o in cell.outputs)
    assert "Red cells are NaN weights" in text and any("image/png" in o.get("data", {}) for o in cell.outputs)
    # and the reference's heatmap has no note: test_reference_passes_every_check_and_draws_its_heatmap_wherever_it_is_opened
    assert any("cmap.set_bad(" in "".join(c["source"]) for c in template("classic_attention")["cells"])
