"""The deployment templates (`python -m autograder deploy NAME`): each renders with sample
values, the YAML ones parse, and every `python -m autograder ...` command line in them,
expanded by bash as the job would run it, is one the CLI's own parser accepts, with the
shard the job's index says."""

import os
import re
import shutil
import subprocess

import pytest
import yaml

from autograder import cli, config, deploy
from autograder.grade import shard as shard_mod
from conftest import ROOT, run_cli

ASSIGNMENT = "multi_head"
SHARDS = 5
# What each scheduler sets when the job runs: every one says "the last shard".
RUNTIME = {
    "SHARD": str(SHARDS),
    "SLURM_ARRAY_TASK_ID": str(SHARDS),
    "SLURM_CPUS_PER_TASK": "4",
    "JOB_COMPLETION_INDEX": str(SHARDS - 1),
}
SAMPLES = {
    "ASSIGNMENT": ASSIGNMENT,
    "SHARDS": str(SHARDS),
    "IMAGE": "registry.example.edu/course/kit:1.0",
    "SUBMISSIONS": "/shared/course/subs",
    "OUT": "/shared/course/out",
    "PYTHON": "/shared/kit/.venv/bin/python",
    "CLASSROOM_ORG": "course-org",
    "CLASSROOM_PREFIX": "hw-attention",
}
_COMMAND = re.compile(r"-m\s+autograder\s+(.*)$")


def _bash():
    found = shutil.which("bash")
    if found is None:  # every CI image has bash; fail loudly rather than skip
        raise AssertionError("bash is needed to expand the templates' command lines")
    return found


def rendered(name):
    declared = deploy.catalog()[name]["variables"]
    return deploy.render(name, {k: v for k, v in SAMPLES.items() if k in declared})


def strings(node):
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for v in node.values():
            yield from strings(v)
    elif isinstance(node, list):
        for v in node:
            yield from strings(v)


def command_lines(name, text):
    """The argument text after every `-m autograder` in the template (continuations joined)."""
    if deploy.catalog()[name]["file"].endswith(".yml"):
        pieces = [s for doc in yaml.safe_load_all(text) for s in strings(doc)]
    else:
        pieces = [text]
    out = []
    for piece in pieces:
        for line in piece.replace("\\\n", " ").splitlines():
            m = _COMMAND.search(line)
            if m and not line.lstrip().startswith("#"):
                out.append(m.group(1))
    return out


def argv(args_text, cwd):
    """The words bash makes of the text, with the runtime variables set (unset ones fail)."""
    # arithmetic ($((...))) is fine; no command substitution, no GitHub expression left for bash
    assert not re.search(r"\$\((?!\()|`|\$\{\{", args_text), args_text
    proc = subprocess.run(
        [_bash(), "-uc", f"printf '%s\\0' {args_text}"],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={"PATH": os.environ.get("PATH", ""), **RUNTIME},
        timeout=30,
    )
    assert proc.returncode == 0, (args_text, proc.stderr)
    return proc.stdout.split("\0")[:-1]


@pytest.mark.parametrize("name", sorted(deploy.catalog()))
def test_every_command_line_in_a_template_is_one_the_cli_accepts(name, tmp_path):
    text = rendered(name)
    assert not re.search(r"@[A-Z][A-Z0-9_]*@", text), "every variable is filled"
    commands = command_lines(name, text)
    verbs = []
    for args_text in commands:
        words = argv(args_text, tmp_path)
        try:
            args = cli.main(words, parse_only=True)
        except SystemExit as exc:
            raise AssertionError(f"{name}: the CLI refuses {words} (exit {exc.code})") from None
        verbs.append(args.verb)
        if args.verb == "grade":
            assert shard_mod.parse(args.shard) == (SHARDS, SHARDS), (name, args.shard)
            assert args.assignment == ASSIGNMENT and args.no_progress
            assert args.out.endswith(f"shard-{SHARDS}"), args.out
        if args.verb == "merge":
            assert (
                args.outs
                and all("shard-" in o for o in args.outs)
                and args.out.endswith("merged")
                or args.out == "class-grades"
            ), args
    assert verbs.count("grade") == 1 and verbs.count("merge") == 1, (name, verbs)


def test_the_yaml_templates_parse_as_what_they_are():
    workflow = yaml.safe_load(rendered("github"))
    jobs = workflow["jobs"]
    assert list(jobs) == ["collect", "grade", "merge"]
    assert jobs["grade"]["needs"] == "collect" and jobs["merge"]["needs"] == "grade"
    assert jobs["grade"]["strategy"]["matrix"]["shard"] == "${{ fromJSON(needs.collect.outputs.shards) }}"
    assert jobs["grade"]["env"]["SHARD"] == "${{ matrix.shard }}"
    uses = [s.get("uses", "") for j in jobs.values() for s in j["steps"]]
    assert any(u.startswith("actions/upload-artifact@") for u in uses)
    assert sum(u.startswith("actions/download-artifact@") for u in uses) == 2
    assert f"seq -s, 1 {SHARDS}" in rendered("github")

    grade_job, merge_job = list(yaml.safe_load_all(rendered("kubernetes")))
    assert grade_job["kind"] == merge_job["kind"] == "Job"
    spec = grade_job["spec"]
    assert spec["completionMode"] == "Indexed" and spec["completions"] == SHARDS
    pod = spec["template"]["spec"]
    (container,) = pod["containers"]
    assert container["image"] == SAMPLES["IMAGE"]
    assert container["securityContext"]["runAsUser"] == 0 and container["securityContext"]["privileged"] is True
    assert "JOB_COMPLETION_INDEX" in container["args"][0]
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    assert mounts["/data/submissions"]["readOnly"] is True and "/data/out" in mounts
    assert pod["volumes"][0]["persistentVolumeClaim"]["claimName"] == "grading-data"
    assert "docker" not in rendered("kubernetes").split("\n# Each grading pod")[0].lower()


def test_the_slurm_templates_are_an_array_and_a_dependent_merge():
    for name, gres in (("slurm", ""), ("slurm-gpu", "--gres=gpu:1")):
        text = rendered(name)
        assert f"--array=1-{SHARDS}" in text and "--dependency=afterany:" in text and "SLURM_ARRAY_TASK_ID" in text
        assert ("--gres=gpu:1" in text) == bool(gres)
        proc = subprocess.run([_bash(), "-n"], input=text, capture_output=True, text=True, timeout=30)
        assert proc.returncode == 0, proc.stderr  # bash reads it


def test_deploy_prints_lists_and_refuses_in_one_line():
    proc = run_cli(
        "deploy",
        "slurm",
        *[f"--set={k}={v}" for k, v in SAMPLES.items() if k in deploy.catalog()["slurm"]["variables"]],
    )
    assert proc.stdout == rendered("slurm")
    listing = run_cli("deploy", "--list").stdout
    assert all(name in listing for name in deploy.catalog())
    for args, message in (
        (["nope"], "no template 'nope'"),
        (["github"], "needs --set ASSIGNMENT=..."),
        (["github", "--set", "ASSIGNMENT=nope"], "unknown assignment 'nope'"),
        (["github", "--set", f"ASSIGNMENT={ASSIGNMENT}", "--set", "NOPE=1"], "has no variable NOPE"),
        (["github", "--set", f"ASSIGNMENT={ASSIGNMENT}", "--set", "SHARDS=4; rm -rf ~"], "SHARDS takes a whole number"),
        (
            ["github", "--set", f"ASSIGNMENT={ASSIGNMENT}", "--set", "SUBMISSIONS=$(id)"],
            "SUBMISSIONS takes letters, digits",
        ),
        (
            ["kubernetes", "--set", f"ASSIGNMENT={ASSIGNMENT}", "--set", "IMAGE=x", "--set", "RUN=A_b"],
            "RUN takes lower-case",
        ),
    ):
        proc = run_cli("deploy", *args, check=False)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and message in proc.stderr, (
            args,
            proc.stderr,
        )


def test_every_template_is_package_data_and_every_variable_is_used():
    known = set(config.load(ROOT / "grading.yml").assignments)
    assert ASSIGNMENT in known
    for name, spec in deploy.catalog().items():
        text = deploy.source(name)
        used = set(re.findall(r"@([A-Z][A-Z0-9_]*)@", text))
        assert used == set(spec["variables"]), (name, used ^ set(spec["variables"]))
        assert spec["what"] and spec["save_as"]
