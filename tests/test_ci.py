"""The script the GitHub Actions workflow calls: `python -m autograder ci NOTEBOOK`."""
import json

import yaml

from autograder.audit import examples as examples_mod
from conftest import run_cli


def test_ci_passes_a_correct_notebook_and_writes_a_markdown_summary(tmp_path):
    summary = tmp_path / "summary.md"
    proc = run_cli("ci", examples_mod.EXAMPLES / "scaled_dot_product" / "reference.ipynb",
                   "--out", tmp_path / "grading", "--summary", summary, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = summary.read_text()
    assert "| `scaled_dot_product_attention` | 6 | 6 |" in text and "passes the pass mark of 6" in text
    assert json.loads((tmp_path / "grading" / "results.json").read_text())["score"] == 10


def test_ci_fails_the_job_below_the_pass_mark_and_names_the_failed_check(tmp_path):
    summary = tmp_path / "summary.md"
    proc = run_cli("ci", examples_mod.EXAMPLES / "scaled_dot_product" / "sdpa_scaled_by_dk.ipynb",
                   "--out", tmp_path / "grading", "--summary", summary, check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    row = next(line for line in summary.read_text().splitlines() if "`scaled_dot_product_attention`" in line)
    assert "test_shapes_and_values" in row and "is below the pass mark" in summary.read_text()


def test_workflow_template_calls_the_ci_script():
    proc = run_cli("ci", "--workflow")
    workflow = yaml.safe_load(proc.stdout)
    steps = workflow["jobs"]["grade"]["steps"]
    assert any("-m autograder ci" in step.get("run", "") for step in steps)
