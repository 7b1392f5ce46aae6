"""The script the GitHub Actions workflow calls: `python -m autograder ci NOTEBOOK`."""

import json

import yaml

from autograder import config
from autograder.audit import examples as examples_mod
from conftest import ROOT, run_cli

# the scaled_dot_product total, from grading.yml
SDP_FULL = sum(config.load(ROOT / "grading.yml").questions("scaled_dot_product").values())
PASS_MARK = config.load(ROOT / "grading.yml").ci["pass_fraction"] * SDP_FULL


def test_ci_passes_a_correct_notebook_and_writes_a_markdown_summary(tmp_path):
    summary = tmp_path / "summary.md"
    proc = run_cli(
        "ci",
        examples_mod.EXAMPLES / "scaled_dot_product" / "reference.ipynb",
        "--out",
        tmp_path / "grading",
        "--summary",
        summary,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = summary.read_text()
    assert "| `scaled_dot_product_attention` | 6 | 6 |" in text and f"passes the pass mark of {PASS_MARK:g}" in text
    assert json.loads((tmp_path / "grading" / "results.json").read_text())["score"] == SDP_FULL


def test_ci_fails_the_job_below_the_pass_mark_and_names_the_failed_check(tmp_path):
    summary = tmp_path / "summary.md"
    strict = tmp_path / "grading.yml"  # a course's own pass mark, above what this bug leaves
    strict.write_text("ci:\n  pass_fraction: 0.9\n")
    proc = run_cli(
        "ci",
        examples_mod.EXAMPLES / "scaled_dot_product" / "sdpa_scaled_by_dk.ipynb",
        "--out",
        tmp_path / "grading",
        "--summary",
        summary,
        check=False,
        env={"KIT_GRADING_YML": str(strict)},
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    row = next(line for line in summary.read_text().splitlines() if "`scaled_dot_product_attention`" in line)
    assert "test_shapes_and_values" in row and "is below the pass mark" in summary.read_text()


def test_student_workflow_installs_only_the_public_part_and_runs_the_public_checks():
    proc = run_cli("ci", "--workflow")
    workflow = yaml.safe_load(proc.stdout)
    runs = "\n".join(step.get("run", "") for step in workflow["jobs"]["check"]["steps"])
    assert "-m autograder check" in runs and "pip install .kit/" in runs
    assert "secrets" not in proc.stdout and "-m autograder ci" not in runs and "sudo" not in runs
