"""The deployment engines' own checkers on what the kit renders, and a real Slurm cluster.

Checkers (quick tier): actionlint and GitHub's workflow schema (check-jsonschema's vendored
copy) on every rendered workflow (`deploy github` and the students' `ci --workflow`),
`kubernetes-validate --strict` on the Kubernetes manifests (as rendered, and with the lesser
security context their comment offers), shellcheck on the Slurm scripts and on every shell
script the workflows and manifests run. Each checker is shown failing on a broken copy.

Slurm (slow): a single-node cluster from Debian's packages on this host, in a tmp folder
(munged, slurmctld and slurmd on free ports, stopped after), and `bash grade-class.sh` as an
instructor runs it: the merged class equals one run; a shard that fails makes the merge warn;
`slurm-gpu` on a node without GPUs is refused at once. Needs root (it runs as root, as CI
does); without root or Slurm it skips, and under CI=true it fails instead.
docs/pages/deployment/templates.md says what this covers."""

import functools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from autograder import deploy
from conftest import run_cli

CI = os.environ.get("CI") == "true"
BIN = Path(sys.executable).parent  # the venv's bin: the [dev] tools' executables
GH_EXPRESSION = re.compile(r"\$\{\{.*?\}\}", re.S)

SAMPLES = {
    "ASSIGNMENT": "multi_head",
    "SHARDS": "5",
    "IMAGE": "registry.example.edu/course/kit:1.0",
    "SUBMISSIONS": "/shared/course/subs",
    "OUT": "/shared/course/out",
    "PYTHON": "/shared/kit/.venv/bin/python",
}


def _unavailable(message):
    """A missing engine: a skip on a developer's machine, a failure under CI=true (never a silent skip)."""
    if CI:
        pytest.fail(message)
    pytest.skip(message)


def tool(name):
    """A [dev] tool's executable (pyproject's dev extras install them into the venv)."""
    found = str(BIN / name) if (BIN / name).exists() else shutil.which(name)
    if found is None:
        raise AssertionError(f"{name} is missing: pip install -e '.[dev]' installs it (pyproject's dev extras)")
    return found


def apt_install(command, *packages):
    """`command`'s path, installing Debian's `packages` first (as root) when it is missing."""
    if shutil.which(command) is None and os.geteuid() == 0 and shutil.which("apt-get"):
        subprocess.run(
            "apt-get update -qq && apt-get install -y -qq -o DPkg::Lock::Timeout=300 " + " ".join(packages),
            shell=True,
            env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
            capture_output=True,
            timeout=900,
        )
    found = shutil.which(command)
    if found is None:
        _unavailable(f"{command} is missing and could not be installed (apt-get install {' '.join(packages)}, as root)")
    return found


def check(argv, expect_ok=True):
    """Run a checker; assert it passes (or, `expect_ok=False`, that it fails); return its output."""
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    out = proc.stdout + proc.stderr
    if expect_ok:
        assert proc.returncode == 0, f"{Path(argv[0]).name} refuses:\n{out}"
    else:
        assert proc.returncode != 0, f"{Path(argv[0]).name} passes what it should refuse:\n{out}"
    return out


def kubernetes_validate(paths, expect_ok=True):
    """`kubernetes-validate --strict`; a resource it has no schema for (a wrong apiVersion) it
    only warns about, exit status 0: that is a failure here too."""
    proc = subprocess.run(
        [tool("kubernetes-validate"), "--strict", *paths], capture_output=True, text=True, timeout=120
    )
    out = proc.stdout + proc.stderr
    ok = proc.returncode == 0 and "WARN" not in out and out.count(" passed ") == 2 * len(paths)  # two Jobs each
    assert ok == expect_ok, f"kubernetes-validate {'refuses' if expect_ok else 'passes'}:\n{out}"
    return out


def rendered(name, **values):
    declared = deploy.catalog()[name]["variables"]
    return deploy.render(name, {**{k: v for k, v in SAMPLES.items() if k in declared}, **values})


@functools.cache
def student_workflow():
    return run_cli("ci", "--workflow").stdout


def workflows():
    """{file name: text} of every workflow the kit renders."""
    return {
        "grade-class.yml": rendered("github"),
        "grade-class-classroom.yml": rendered("github", CLASSROOM_ORG="course-org", CLASSROOM_PREFIX="hw-attention"),
        "check.yml": student_workflow(),
    }


def write(folder, files):
    paths = []
    for name, text in files.items():
        (folder / name).write_text(text)
        paths.append(str(folder / name))
    return paths


def scripts(name, text):
    """{label: shell script} of every `run:` step of a workflow, or every container's
    `sh -c` script of a manifest, with a shebang; GitHub's ${{ ... }} become a word."""
    out = {}
    for d, doc in enumerate(yaml.safe_load_all(text)):
        if "jobs" in doc:
            for job, spec in doc["jobs"].items():
                for i, step in enumerate(spec.get("steps", [])):
                    if "run" in step:
                        body = GH_EXPRESSION.sub("GITHUB_EXPRESSION", step["run"])
                        out[f"{name}-{job}-{i}.sh"] = "#!/bin/bash\n" + body
        else:
            for c in doc["spec"]["template"]["spec"]["containers"]:
                assert c["command"][:2] == ["/bin/sh", "-c"], c["command"]
                out[f"{name}-{d}-{c['name']}.sh"] = "#!/bin/sh\n" + c["args"][0]
    assert out, f"{name}: no script found"
    return out


def lesser_context(text):
    """The manifest with the grading container's lesser security context (the one its comment
    offers instead of `privileged: true`), as YAML."""
    comment = text.split("A lesser context,\n", 1)[1].split("# gives the namespaces", 1)[0]
    offered = " ".join(line.lstrip("#").strip() for line in comment.splitlines())
    offered = yaml.safe_load("{" + re.sub(r"\(Kubernetes [^)]*\)", "", offered) + "}")
    assert set(offered) == {"capabilities", "seccompProfile", "appArmorProfile"}, offered
    docs = list(yaml.safe_load_all(text))
    context = docs[0]["spec"]["template"]["spec"]["containers"][0]["securityContext"]
    assert context.pop("privileged") is True
    context.update(offered)
    return yaml.safe_dump_all(docs, sort_keys=False)


# --- the checkers -------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_checkers_are_installed():
    """First in the module (which runs on one worker, in this order): installs shellcheck from
    Debian if it is missing, which may take longer than the quick tier allows."""
    apt_install("shellcheck", "shellcheck")
    for name in ("actionlint", "check-jsonschema", "kubernetes-validate"):
        check([tool(name), "--version"])


def test_actionlint_and_the_workflow_schema_accept_every_workflow(tmp_path):
    paths = write(tmp_path, workflows())
    # actionlint also runs shellcheck on each run: step when shellcheck is on PATH
    check([tool("actionlint"), "-no-color", *paths])
    check([tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", *paths])


def test_actionlint_and_the_workflow_schema_can_fail(tmp_path):
    good = rendered("github")
    runs_on = good.replace("runs-on: ubuntu-latest", "runs-on: ubuntu-latst", 1)
    (path,) = write(tmp_path, {"runs-on.yml": runs_on})
    assert "ubuntu-latst" in check([tool("actionlint"), "-no-color", path], expect_ok=False)
    needs = good.replace("needs: grade", "needs: grading", 1)
    (path,) = write(tmp_path, {"needs.yml": needs})
    assert "grading" in check([tool("actionlint"), "-no-color", path], expect_ok=False)
    no_runner = good.replace("    runs-on: ubuntu-latest", "    run-on: ubuntu-latest", 1)
    (path,) = write(tmp_path, {"schema.yml": no_runner})
    check([tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", path], expect_ok=False)


def test_kubernetes_validate_accepts_the_manifests_privileged_and_lesser(tmp_path):
    text = rendered("kubernetes")
    paths = write(tmp_path, {"privileged.yml": text, "lesser.yml": lesser_context(text)})
    kubernetes_validate(paths)


def test_kubernetes_validate_can_fail(tmp_path):
    text = rendered("kubernetes")
    for name, broken in (
        ("api.yml", text.replace("apiVersion: batch/v1", "apiVersion: batch/v2", 1)),
        ("field.yml", text.replace("completionMode: Indexed", "completionMod: Indexed", 1)),
        ("context.yml", text.replace("privileged: true\n", "privilegd: true\n", 1)),
    ):
        assert broken != text
        (path,) = write(tmp_path, {name: broken})
        kubernetes_validate([path], expect_ok=False)


def _shellcheck():
    found = shutil.which("shellcheck")
    return found if found else apt_install("shellcheck", "shellcheck")


def test_shellcheck_accepts_the_slurm_scripts_and_every_run_step(tmp_path):
    files = {
        "slurm.sh": rendered("slurm"),
        "slurm-gpu.sh": rendered("slurm-gpu"),
        "slurm-as-you.sh": rendered("slurm", AS_ROOT=""),
    }
    for name, text in workflows().items():
        files.update(scripts(name, text))
    files.update(scripts("k8s", rendered("kubernetes")))
    assert sum(n.startswith("grade-class.yml-") for n in files) == 6, sorted(files)  # the staff workflow's 6 run: steps
    check([_shellcheck(), *write(tmp_path, files)])


def test_shellcheck_can_fail(tmp_path):
    text = rendered("slurm")
    wrong_dependency = text.replace('afterany:"${array%%;*}"', 'afterany:"${arry%%;*}"')
    unquoted = text.replace('--out "@OUT@/merged"'.replace("@OUT@", SAMPLES["OUT"]), "--out $OUT/merged")
    step = scripts("w", rendered("github"))["w-grade-4.sh"].replace('"out/shard-$SHARD"', "out/shard-$SHARD")
    for name, broken in (("dependency.sh", wrong_dependency), ("unquoted.sh", unquoted), ("step.sh", step)):
        assert broken not in (text, scripts("w", rendered("github"))["w-grade-4.sh"]), name
        (path,) = write(tmp_path, {name: broken})
        check([_shellcheck(), path], expect_ok=False)
