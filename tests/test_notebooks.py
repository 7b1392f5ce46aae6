"""Student notebooks run as a student runs them: in a Jupyter kernel, top to bottom."""
import json

import nbformat
import pytest
from nbclient import NotebookClient

from autograder.audit import examples as examples_mod
from conftest import ASSIGNMENTS, ROOT, run_cli


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
    return "".join(o.get("text", "") + json.dumps(o.get("data", {})) for o in cell.outputs)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_untouched_template_runs_to_the_end_and_checks_report_the_stubs(assignment, tmp_path):
    nb = execute(examples_mod.EXAMPLES / assignment / "template.ipynb", tmp_path)
    report = outputs(nb, "grader.check_all()")
    assert "NotImplementedError" in report and "Task " in report


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_reference_passes_every_public_check_and_draws_its_heatmap(assignment, tmp_path):
    nb = execute(examples_mod.EXAMPLES / assignment / "reference.ipynb", tmp_path)
    report = outputs(nb, "grader.check_all()")
    assert "NotImplementedError" not in report and "failed" not in report.lower(), report[:2000]
    images = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if "image/png" in o.get("data", {})]
    assert images, "the heatmap cell draws the student's weights"


def test_check_command_for_student_ci():
    ok = run_cli("check", examples_mod.EXAMPLES / "scaled_dot_product" / "reference.ipynb", check=False)
    assert ok.returncode == 0 and "3 of 3 questions pass" in ok.stdout, ok.stdout + ok.stderr
    bad = run_cli("check", examples_mod.EXAMPLES / "scaled_dot_product" / "template.ipynb", check=False)
    assert bad.returncode == 1 and "NotImplementedError: Task causal_mask" in bad.stdout
