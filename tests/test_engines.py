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
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from autograder import deploy
from autograder.grade import shard as shard_mod
from conftest import ROOT, run_cli

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
    """What `python -m autograder ci --workflow` prints: the package's file, read without importing
    autograder.ci (which imports the judge and torch; test_the_checkers_are_installed checks that
    the CLI prints this file)."""
    return (Path(deploy.__file__).parent.parent / "ci" / "github-workflow.yml").read_text(encoding="utf-8")


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
    assert run_cli("ci", "--workflow").stdout == student_workflow()


def test_actionlint_accepts_every_workflow(tmp_path):
    # actionlint also runs shellcheck on each run: step when shellcheck is on PATH
    check([tool("actionlint"), "-no-color", *write(tmp_path, workflows())])


def test_the_workflow_schema_accepts_every_workflow(tmp_path):
    check([tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", *write(tmp_path, workflows())])


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


# --- a real Slurm cluster -----------------------------------------------------------------------

ASSIGNMENT = "scaled_dot_product"
EXAMPLES = ROOT / "examples" / "submissions" / ASSIGNMENT
CLASS = {  # student -> the example notebook they hand in
    "alice": "reference.ipynb",
    "bob": "causal_mask_triu.ipynb",
    "carol": "padding_mask_off_by_one.ipynb",
    "dave": "sdpa_scaled_by_dk.ipynb",
    "heidi": "correct_builtin_free_where.ipynb",
}
WAIT_S = 300  # the longest any case waits for the queue to empty


def _free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def _tail(path, n=15):
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return "(no log)"


class Cluster:
    """A single-node Slurm of this host in `base`: munged, slurmctld and slurmd, started as
    children of the test (their pids kept, stopped by pid), their state, spool and logs in `base`."""

    def __init__(self, base):
        self.base = base
        self.host = subprocess.run(["hostname", "-s"], capture_output=True, text=True, check=True).stdout.strip()
        self.procs = []
        for d in ("munge", "state", "spool", "log"):
            (base / d).mkdir(mode=0o755)
        self.socket = base / "munge" / "munge.socket"
        self.jobcomp = base / "jobcomp.txt"
        self.conf = base / "slurm.conf"
        ctld_port, slurmd_port = _free_ports(2)
        mem_mb = int(re.search(r"MemTotal:\s+(\d+)", Path("/proc/meminfo").read_text()).group(1)) // 1024
        self.conf.write_text(
            "\n".join(
                [
                    "ClusterName=kit-test",
                    f"SlurmctldHost={self.host}(127.0.0.1)",  # the loopback: no name resolution needed
                    "SlurmUser=root",
                    "SlurmdUser=root",
                    f"SlurmctldPort={ctld_port}",
                    f"SlurmdPort={slurmd_port}",
                    "AuthType=auth/munge",
                    f"AuthInfo=socket={self.socket}",
                    f"StateSaveLocation={base / 'state'}",
                    f"SlurmdSpoolDir={base / 'spool'}",
                    f"SlurmctldPidFile={base / 'slurmctld.pid'}",
                    f"SlurmdPidFile={base / 'slurmd.pid'}",
                    f"SlurmctldLogFile={base / 'log' / 'slurmctld.log'}",
                    f"SlurmdLogFile={base / 'log' / 'slurmd.log'}",
                    # no cgroup delegation in a VM without systemd: processes tracked by parent pid
                    "ProctrackType=proctrack/linuxproc",
                    "TaskPlugin=task/none",
                    "JobAcctGatherType=jobacct_gather/none",
                    # no slurmdbd: each job's end state in a text file instead of sacct
                    "AccountingStorageType=accounting_storage/none",
                    "JobCompType=jobcomp/filetxt",
                    f"JobCompLoc={self.jobcomp}",
                    "SchedulerType=sched/backfill",
                    "SelectType=select/cons_tres",
                    "SelectTypeParameters=CR_CPU_Memory",
                    "MpiDefault=none",
                    "ReturnToService=2",
                    f"NodeName={self.host} NodeAddr=127.0.0.1 CPUs={len(os.sched_getaffinity(0))} RealMemory={int(mem_mb * 0.9)} State=UNKNOWN",
                    f"PartitionName=debug Nodes={self.host} Default=YES MaxTime=INFINITE State=UP",
                    "",
                ]
            )
        )
        self.env = {**os.environ, "SLURM_CONF": str(self.conf)}

    def start(self):
        key = self.base / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        munge = self.base / "munge"
        self._spawn(
            "munged",
            ["munged", "-F", "-f", f"--socket={self.socket}", f"--key-file={key}", f"--pid-file={munge / 'pid'}"]
            + [f"--seed-file={munge / 'seed'}", f"--log-file={self.base / 'log' / 'munged.log'}"],
        )
        self._wait(lambda: self.socket.exists(), 10, "munged's socket")
        self._spawn("slurmctld", ["slurmctld", "-D", "-i"])
        self._spawn("slurmd", ["slurmd", "-D"])
        self._wait(lambda: self.run("sinfo", "-h", "-o", "%t").stdout.strip() == "idle", 30, "the node idle")

    def _spawn(self, name, argv):
        out = open(self.base / "log" / f"{name}.out", "w")
        self.procs.append((name, subprocess.Popen(argv, env=self.env, stdout=out, stderr=subprocess.STDOUT)))
        out.close()

    def _wait(self, ready, seconds, what):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            dead = [name for name, p in self.procs if p.poll() is not None]
            if dead:
                break
            if ready():
                return
            time.sleep(0.2)
        logs = "\n".join(
            f"--- {f.name}\n{_tail(f)}" for f in sorted((self.base / "log").iterdir()) if f.suffix in (".out", ".log")
        )
        raise RuntimeError(f"Slurm did not start (waiting for {what}; exited: {dead or 'none'}):\n{logs}")

    def run(self, *argv, timeout=60, check=False, cwd=None):
        return subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=timeout, check=check, cwd=cwd)

    def stop(self):
        """Cancel what is queued, then stop the daemons by pid (slurmd, slurmctld, munged)."""
        if self.procs:
            try:
                self.run("scancel", "--full", "--user=root", timeout=20)
            except (OSError, subprocess.SubprocessError):
                pass
        for _, proc in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=15)
        self.procs = []

    def wait_until_gone(self, *jobs):
        """Poll squeue until none of `jobs` is queued or running (bounded: WAIT_S)."""
        ids = ",".join(jobs)
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            proc = self.run("squeue", "-h", "-j", ids, "-o", "%i %T %r")
            if proc.returncode == 0 and not proc.stdout.strip():
                return
            time.sleep(0.5)
        queued = self.run("squeue", "-j", ids).stdout
        self.run("scancel", *jobs)
        raise AssertionError(f"jobs {ids} still queued after {WAIT_S} s (cancelled):\n{queued}")

    def states(self, array, merge):
        """({array task: (state, exit code)}, (merge job's state, exit code)) from the job-completion
        log, waiting (bounded) until it holds every task and the merge job."""
        deadline = time.monotonic() + 30
        while True:
            tasks, merged = {}, None
            lines = self.jobcomp.read_text().splitlines() if self.jobcomp.exists() else []
            for line in lines:
                f = dict(part.split("=", 1) for part in line.split() if "=" in part)
                if f.get("ArrayJobId") == array:
                    tasks[int(f["ArrayTaskId"])] = (f["JobState"], f["ExitCode"])
                elif f.get("JobId") == merge:
                    merged = (f["JobState"], f["ExitCode"])
            if merged is not None and len(tasks) == 3 or time.monotonic() > deadline:
                return tasks, merged
            time.sleep(0.2)


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    """A running single-node Slurm of this host (stopped, and nothing left running, after)."""
    if os.geteuid() != 0:
        _unavailable("the Slurm cluster of the tests is started as root (munged, slurmctld, slurmd)")
    apt_install("slurmctld", "slurm-wlm", "munge")
    apt_install("munged", "munge")
    cluster = Cluster(tmp_path_factory.mktemp("slurm"))
    try:
        cluster.start()
    except RuntimeError as exc:
        cluster.stop()
        _unavailable(str(exc))
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def a_class(tmp_path_factory):
    """Five students' folders, one notebook each, and one run of `grade` over them."""
    base = tmp_path_factory.mktemp("class")
    subs = base / "submissions"
    for student, example in CLASS.items():
        (subs / student).mkdir(parents=True)
        shutil.copy(EXAMPLES / example, subs / student / f"{ASSIGNMENT}.ipynb")
    shards = {shard_mod.number((student, f"{ASSIGNMENT}.ipynb"), 3) for student in CLASS}
    assert shards == {1, 2, 3}, "every shard has a submission (the split hashes the path)"
    run_cli("grade", subs, "--out", base / "single", "--assignment", ASSIGNMENT, "--no-progress")
    return subs, base / "single"


def grade_class(slurm, folder, template="slurm", *, subs, edit=None):
    """Render the template as an instructor does and run `bash grade-class.sh`; the CompletedProcess
    and the (array, merge) job ids it submitted (None when it submitted nothing)."""
    script = folder / "grade-class.sh"
    folder.mkdir(parents=True, exist_ok=True)
    proc = run_cli(
        "deploy",
        template,
        *("--set", f"ASSIGNMENT={ASSIGNMENT}", "--set", f"SUBMISSIONS={subs}", "--set", f"OUT={folder / 'out'}"),
        *("--set", f"PYTHON={sys.executable}", "--set", "SHARDS=3", "--set", "CPUS=1", "--set", "MEM=1G"),
        *("--set", "TIME=00:10:00", "--set", "AS_ROOT="),
    )
    text = proc.stdout if edit is None else edit(proc.stdout)
    script.write_text(text)
    proc = slurm.run("bash", str(script), cwd=folder, timeout=60)
    m = re.search(r"submitted the grading array (\d+) \(3 shards\) and the merge job (\d+)", proc.stdout)
    return proc, (m.groups() if m else None)


def _rows(csv_path):
    return Path(csv_path).read_bytes().splitlines(keepends=True)


def _score(results):
    return json.loads(Path(results).read_text())["score"]


@pytest.mark.slow
def test_slurm_grades_a_class_as_one_run_does(slurm, a_class, tmp_path):
    subs, single = a_class
    started = time.monotonic()
    proc, jobs = grade_class(slurm, tmp_path, subs=subs)
    assert proc.returncode == 0 and jobs, proc.stdout + proc.stderr
    slurm.wait_until_gone(*jobs)
    tasks, merge = slurm.states(*jobs)
    logs = "\n".join(f"--- {f.name}\n{_tail(f)}" for f in sorted((tmp_path / "out" / "logs").glob("*.log")))
    assert tasks == {i: ("COMPLETED", "0:0") for i in (1, 2, 3)} and merge == ("COMPLETED", "0:0"), (tasks, merge, logs)
    merged = tmp_path / "out" / "merged"
    assert (merged / "grades.csv").read_bytes() == (single / "grades.csv").read_bytes()
    ids = sorted(p.parent.name for p in single.glob("*/results.json"))
    assert ids and sorted(p.parent.name for p in merged.glob("*/results.json")) == ids
    for sid in ids:
        assert _score(merged / sid / "results.json") == _score(single / sid / "results.json"), sid
    print(f"slurm: {len(ids)} submissions in 3 shards, submitted to merged in {time.monotonic() - started:.1f} s")


@pytest.mark.slow
def test_slurm_a_failed_shard_makes_the_merge_warn(slurm, a_class, tmp_path):
    subs, single = a_class
    shard2 = tmp_path / "out" / "shard-2"
    shard2.mkdir(parents=True)
    # shard 2's output folder read-only (root writes through file modes, not through a read-only mount)
    mounted = subprocess.run(["mount", "--bind", shard2, shard2], capture_output=True, text=True)
    if mounted.returncode != 0:
        _unavailable(f"cannot bind-mount a folder read-only here: {mounted.stderr.strip()}")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", shard2, shard2], check=True, capture_output=True)
        proc, jobs = grade_class(slurm, tmp_path, subs=subs)
        assert proc.returncode == 0 and jobs, proc.stdout + proc.stderr
        slurm.wait_until_gone(*jobs)
    finally:
        subprocess.run(["umount", shard2], capture_output=True)
    tasks, merge = slurm.states(*jobs)
    assert tasks[1] == tasks[3] == ("COMPLETED", "0:0") and tasks[2][0] == "FAILED", tasks
    assert merge == ("FAILED", "1:0"), merge  # merge exits 1 when it warns
    (log,) = (tmp_path / "out" / "logs").glob("kit-merge-*.log")
    assert "merge: shard 2/3 missing (no OUT given has its shard.json): grades.csv lacks their submissions" in (
        log.read_text()
    ), log.read_text()
    # what the other shards graded is merged: the single run's rows but shard 2's
    merged = tmp_path / "out" / "merged"
    present = {p.parent.name for p in merged.glob("*/results.json")}
    others = {s for s in CLASS if shard_mod.number((s, f"{ASSIGNMENT}.ipynb"), 3) != 2}
    assert present == {f"{s}__{ASSIGNMENT}" for s in others}, present
    header, *rows = _rows(single / "grades.csv")
    assert _rows(merged / "grades.csv") == [header] + [r for r in rows if any(sid in r.decode() for sid in present)]


@pytest.mark.slow
def test_slurm_gpu_on_a_node_without_gpus_is_refused_at_once(slurm, a_class, tmp_path):
    subs, _ = a_class
    started = time.monotonic()
    proc, jobs = grade_class(slurm, tmp_path, "slurm-gpu", subs=subs)
    assert time.monotonic() - started < 30 and proc.returncode == 1 and jobs is None, proc
    assert "Invalid generic resource (gres) specification" in proc.stderr, proc.stderr  # Slurm's reason
    assert "grade-class: Slurm refused the grading array (its reason above); nothing was submitted" in proc.stderr
    assert not slurm.run("squeue", "-h").stdout.strip(), "nothing queued"


@pytest.mark.slow
def test_slurm_refuses_a_broken_template(slurm, tmp_path):
    """An #SBATCH typo, or a wrong --dependency, is refused at submission, and the script says so."""
    empty = tmp_path / "none"
    empty.mkdir()
    typo = grade_class(
        slurm, tmp_path / "typo", subs=empty, edit=lambda t: t.replace("#SBATCH --time=", "#SBATCH --tme=")
    )
    proc, jobs = typo
    assert proc.returncode == 1 and jobs is None and "--tme" in proc.stderr, proc
    assert "Slurm refused the grading array" in proc.stderr
    dependency = grade_class(
        slurm, tmp_path / "dependency", subs=empty, edit=lambda t: t.replace("afterany:", "afterevery:")
    )
    proc, jobs = dependency
    assert proc.returncode == 1 and jobs is None and "Slurm refused the merge job" in proc.stderr, proc
    array = re.search(r"the array (\d+) is queued", proc.stderr).group(1)
    slurm.run("scancel", array)
    slurm.wait_until_gone(array)


# --- the GPU in one command ---------------------------------------------------------------------

GPU_SCRIPT = ROOT / "bench" / "cuda_matrix.py"


def _gpu_script(*args, timeout=120):
    return subprocess.run(
        [sys.executable, str(GPU_SCRIPT), *args], capture_output=True, text=True, timeout=timeout, cwd="/"
    )


def test_the_gpu_script_parses_its_arguments():
    proc = _gpu_script("--help")
    assert proc.returncode == 0 and "--allow-cpu" in proc.stdout and "--budget-s" in proc.stdout, proc
    proc = _gpu_script("--budget-s", "soon")
    assert proc.returncode == 2 and "--budget-s: invalid float value" in proc.stderr, proc


@pytest.mark.slow  # the script imports torch: 4 s alone here, more beside other tests
def test_the_gpu_script_says_in_one_line_when_there_is_no_cuda_device():
    proc = _gpu_script("--examples", "nope", "--no-audit")
    if proc.returncode == 0 and proc.stdout.startswith("torch ") and ", CUDA " in proc.stdout.splitlines()[0]:
        pytest.skip("a CUDA device is here: the script graded (nothing, with --examples nope)")
    assert proc.returncode == 3 and proc.stdout == "", proc
    (line,) = proc.stderr.splitlines()
    assert line.startswith("cuda_matrix: no CUDA device (torch "), line


@pytest.mark.slow
def test_the_gpu_script_grades_on_the_cpu_when_allowed():
    """What a lent GPU machine runs, tried here on the CPU (one assignment's reference)."""
    proc = _gpu_script("--allow-cpu", "--assignment", "scaled_dot_product", "--examples", "reference", "--no-audit")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (row,) = [line for line in proc.stdout.splitlines() if line.startswith("scaled_dot_product/reference")]
    assert "12.00/12" in row and "full marks" in row and "cpu-float32 1/1" in row, row
    assert proc.stdout.splitlines()[-1].endswith("every example as expected"), proc.stdout
