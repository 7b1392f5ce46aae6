"""A batch as instructors run it (`python -m autograder grade ... --out DIR`): no student
ever gets another's result, odd file names and bad arguments never crash it, and
neither Ctrl-C nor kill -9 leaves a process of it behind."""

import csv
import glob
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder import config, release
from autograder.audit import examples as examples_mod
from autograder.grade import Found, assign_ids
from conftest import ROOT, run_cli, scores

SDP = examples_mod.EXAMPLES / "scaled_dot_product"
CLASSIC = examples_mod.EXAMPLES / "classic_attention"
# the scaled_dot_product total, from grading.yml
SDP_FULL = sum(config.load(ROOT / "grading.yml").questions("scaled_dot_product").values())
SAFE_ID = re.compile(r"[A-Za-z0-9_-]+")


def nb(path):
    return json.loads(Path(path).read_text())


def write_nb(path, data):
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(data))


def results(out):
    """{id: results.json dict} for every submission folder under out."""
    return {p.parent.name: json.loads(p.read_text()) for p in Path(out).glob("*/results.json")}


def csv_rows(out):
    with open(Path(out) / "grades.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def sha(path):
    """sha256 of a file named as results.json shows it (undecodable bytes shown as U+FFFD)."""
    if "\ufffd" in str(path):
        parent = os.fsencode(Path(path).parent)
        named = [n for n in os.listdir(parent) if n.decode("utf-8", "replace") == Path(path).name]
        assert len(named) == 1, named
        path = os.path.join(parent, named[0])
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def assert_each_result_is_its_own(out):
    """Every results.json names the file it is for, and that file has those bytes today."""
    for sid, data in results(out).items():
        sub = data["extra_data"]["submission"]
        assert sub["id"] == sid
        assert sha(sub["path"]) == sub["sha256"], f"{sid}: results.json is for other bytes than {sub['path']}"


def names_assignment(data, name):
    """A notebook whose metadata and otter init cell name `name` (what a student can edit)."""
    data["metadata"]["kit_assignment"] = name
    data["metadata"].setdefault("otter", {})["assignment_name"] = name
    for cell in data["cells"]:
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if "otter.Notebook(" in src:
            cell["source"] = f'import otter\ngrader = otter.Notebook("{name}.ipynb")\n'
    return data


# -- ids, without grading ---------------------------------------------------------
def found(*rels, base="/course/subs"):
    out = []
    for rel in rels:
        parts = tuple(Path(base, rel).parts[1:])
        out.append(Found(Path(base, rel), tuple(Path(rel).parts), parts, str(Path(base, rel))))
    return out


def test_ids_are_safe_names_and_do_not_move_when_other_files_come_and_go():
    before = found(
        "A/hw.ipynb",
        "A-hw.ipynb",
        "alice.ipynb",
        "...ipynb",
        "grades.csv.ipynb",
        "hw 1.ipynb",
        "A__hw.ipynb",
        ".ipynb",
        "x" * 300 + ".ipynb",
    )
    ids = assign_ids(before)
    assert len(set(v.lower() for v in ids.values())) == len(before)
    for v in ids.values():
        assert SAFE_ID.fullmatch(v) and v not in (".", "..", "grades.csv") and len(v) <= 100, v
    assert ids[before[0]] == "A__hw" and ids[before[1]] == "A-hw" and ids[before[2]] == "alice"
    after = found("B/hw.ipynb", "Z/A/hw.ipynb", "a/b/c.zip") + before[::-1]
    again = assign_ids(after)
    assert {f: again[f] for f in before} == ids, "an id changed when other files arrived"


def test_the_same_path_under_two_folders_takes_the_folder_in_front():
    a = found("submission.ipynb", base="/x/alice")
    b = found("submission.ipynb", base="/x/bob")
    ids = assign_ids(a + b)
    assert sorted(ids.values()) == ["alice__submission", "bob__submission"]


def test_detection_reads_the_same_graded_names_as_the_build():
    import importlib

    from autograder.build import sync
    from autograder.judge import detect

    cfg = config.load(ROOT / "grading.yml")
    for a in cfg.assignments:
        module = importlib.import_module(f"autograder.private.solutions.{a}")
        # a question that runs other parts (the lab's training_run) is defined by no name of its own
        built = set(sync.graded_names(module, list(cfg.questions(a)))) - set(detect.runs(a))
        assert sorted(detect.graded_names(a, cfg)) == sorted(built)


# -- through the CLI --------------------------------------------------------------
@pytest.mark.slow
def test_resume_keeps_each_result_with_its_own_file_and_regrades_a_changed_one(tmp_path):
    subs, out = tmp_path / "subs", tmp_path / "out"
    write_nb(subs / "A" / "hw.ipynb", nb(SDP / "reference.ipynb"))
    write_nb(subs / "A-hw.ipynb", nb(SDP / "template.ipynb"))
    run_cli("grade", subs, "--out", out, "--no-progress", "--jobs", "2")
    first = results(out)
    assert set(first) == {"A__hw", "A-hw"}
    assert first["A__hw"]["score"] == SDP_FULL and first["A-hw"]["score"] == 0
    # B/hw.ipynb arrives (an honest template), A-hw.ipynb is resubmitted as a full solution, and
    # a stale results.json claiming 10 points sits where B's goes (an old run, another file's).
    write_nb(subs / "B" / "hw.ipynb", nb(SDP / "template.ipynb"))
    shutil.copy(SDP / "reference.ipynb", subs / "A-hw.ipynb")
    (out / "B__hw").mkdir()
    stale = dict(first["A__hw"])
    (out / "B__hw" / "results.json").write_text(json.dumps(stale))
    run_cli("grade", subs, "--out", out, "--no-progress", "--jobs", "2", "--resume")
    second = results(out)
    assert second["A__hw"] == first["A__hw"], "an unchanged file keeps its result"
    assert second["A-hw"]["score"] == SDP_FULL, "a changed file is graded again"
    assert second["B__hw"]["score"] == 0, "a result of another file is never taken over"
    assert second["B__hw"]["extra_data"]["submission"]["path"] == str((subs / "B" / "hw.ipynb").resolve())
    assert_each_result_is_its_own(out)
    rows = {r["id"]: r for r in csv_rows(out)}
    assert set(rows) == {"A__hw", "A-hw", "B__hw"}
    full = str(float(SDP_FULL))
    assert [rows[i]["total"] for i in ("A__hw", "A-hw", "B__hw")] == [full, full, "0.0"]


@pytest.mark.slow
def test_odd_and_colliding_names_stay_inside_out_and_each_file_is_one_row(tmp_path):
    subs, out = tmp_path / "subs", tmp_path / "out"
    ref = (SDP / "reference.ipynb").read_bytes()
    subs.mkdir()
    for name in (b"...ipynb", b"grades.csv.ipynb", b"bad\xffname.ipynb", b"A-hw.ipynb"):
        with open(os.path.join(os.fsencode(subs), name), "wb") as f:
            f.write(ref)
    write_nb(subs / "A" / "hw.ipynb", nb(SDP / "template.ipynb"))
    before = sorted(os.listdir(os.fsencode(tmp_path)))
    # the folder, and a file in it again: one row for it
    proc = run_cli(
        "grade",
        subs,
        subs / "A" / "hw.ipynb",
        subs / "A" / ".." / "A-hw.ipynb",
        "--out",
        out,
        "--no-progress",
        "--jobs",
        "2",
    )
    assert sorted(os.listdir(os.fsencode(tmp_path))) == sorted(before + [b"out"]), "nothing is written beside --out"
    assert sorted(os.listdir(os.fsencode(subs))) == sorted(
        [b"...ipynb", b"grades.csv.ipynb", b"bad\xffname.ipynb", b"A-hw.ipynb", b"A"]
    )
    got = results(out)
    assert len(got) == 5 and all(SAFE_ID.fullmatch(i) for i in got), sorted(got)
    assert (out / "grades.csv").is_file()
    rows = csv_rows(out)
    assert len(rows) == 5 and len({r["id"] for r in rows}) == 5
    assert sorted(r["total"] for r in rows) == ["0.0"] + [str(float(SDP_FULL))] * 4
    assert any("bad\ufffdname.ipynb" in r["path"] for r in rows), [r["path"] for r in rows]
    assert "A__hw" in got and "A-hw" in got and got["A__hw"]["score"] == 0
    for p in out.rglob("*"):
        assert p.resolve().is_relative_to(out.resolve())
    assert "Traceback" not in proc.stderr
    assert_each_result_is_its_own(out)


@pytest.mark.slow
def test_missing_paths_python_files_and_truncated_notebooks(tmp_path):
    py = tmp_path / "solution.py"
    py.write_text("def causal_mask(n):\n    return None\n")
    truncated = tmp_path / "truncated.ipynb"
    truncated.write_bytes((SDP / "reference.ipynb").read_bytes()[:700])
    missing = tmp_path / "nope.ipynb"

    proc = run_cli("grade", missing, "--out", tmp_path / "o1", "--no-progress", check=False)
    assert proc.returncode == 2
    assert [line for line in proc.stderr.splitlines() if "nope.ipynb" in line] == [
        f"grade: {missing}: no such file or folder; skipped"
    ]

    proc = run_cli("grade", py, truncated, "--out", tmp_path / "o2", "--no-progress", "--jobs", "1", check=False)
    assert proc.returncode == 1, "nothing could be graded"
    assert "not a notebook" in proc.stderr and "no submission could be graded" in proc.stderr
    rows = csv_rows(tmp_path / "o2")
    assert len(rows) == 2
    for data in results(tmp_path / "o2").values():
        assert data["score"] == 0 and "Not graded" in data["output"] and "not a notebook" in data["output"]

    proc = run_cli(
        "grade",
        missing,
        truncated,
        SDP / "reference.ipynb",
        "--out",
        tmp_path / "o3",
        "--no-progress",
        "--jobs",
        "2",
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert f"grade: {missing}: no such file or folder; skipped" in proc.stderr
    got = results(tmp_path / "o3")
    assert sorted(got) == ["reference", "truncated"]
    assert got["reference"]["score"] == SDP_FULL
    # graded against the batch's assignment: the broken file gets that assignment's questions at 0
    assert {t["name"] for t in release.scored(got["truncated"]["tests"])} == set(
        scores(tmp_path / "o3" / "reference" / "results.json")
    )
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["--out", "{file}"], "exists and is not a folder"),
        (["--out", "{tmp}/o", "--jobs", "0"], "--jobs must be 1 or more"),
        (["--out", "{tmp}/o", "--jobs", "-2"], "--jobs must be 1 or more"),
        (["--out", "{tmp}/o", "--assignment", "nope"], "unknown assignment 'nope'"),
    ],
)
def test_bad_options_are_one_line_errors(tmp_path, args, message):
    file = tmp_path / "afile"
    file.write_text("x")
    args = [a.format(file=file, tmp=tmp_path) for a in args]
    proc = run_cli("grade", SDP / "reference.ipynb", *args, "--no-progress", check=False)
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and message in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert file.read_text() == "x"


@pytest.mark.parametrize("said", ["two", "0", "-1", "1.5"])
def test_a_bad_kit_jobs_is_a_one_line_error_before_grading(tmp_path, said):
    proc = run_cli(
        "grade", SDP / "reference.ipynb", "--out", tmp_path / "o", "--no-progress", check=False, env={"KIT_JOBS": said}
    )
    assert proc.returncode == 2 and not (tmp_path / "o").exists(), proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"grade: $KIT_JOBS must be a whole number of judges, 1 or more (got '{said}')"
    ]


def test_kit_jobs_sets_the_judges_a_batch_runs_unless_jobs_says(monkeypatch):
    """$KIT_JOBS is the default (a scheduler's share of the machine); --jobs wins; without
    either, one judge per CPU this process may run on."""
    from autograder.grade import batch

    monkeypatch.setenv("KIT_JOBS", "3")
    assert batch.default_jobs() == 3
    monkeypatch.delenv("KIT_JOBS")
    assert batch.default_jobs() == len(os.sched_getaffinity(0))
    monkeypatch.setenv("KIT_JOBS", "many")
    with pytest.raises(ValueError):
        batch.default_jobs()


@pytest.fixture
def read_only_folder(tmp_path):
    """An existing folder nobody may write into: a read-only bind mount as root (root ignores
    modes), mode 0o555 otherwise."""
    folder = tmp_path / "ro"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    subprocess.run(["mount", "--bind", folder, folder], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", folder], check=True)
        yield folder
    finally:
        subprocess.run(["umount", folder], check=True)


@pytest.mark.parametrize("shard", [[], ["--shard", "1/2"]])
def test_an_out_folder_that_cannot_be_written_is_one_line(read_only_folder, shard):
    proc = run_cli("grade", SDP / "reference.ipynb", "--out", read_only_folder, *shard, "--no-progress", check=False)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.strip() == f"grade: cannot write into --out {read_only_folder}: Read-only file system" or (
        os.geteuid() != 0 and "cannot write into --out" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    ), proc.stderr


@pytest.mark.slow
def test_the_batch_has_one_assignment_whatever_a_notebook_claims(tmp_path):
    subs, out = tmp_path / "subs", tmp_path / "out"
    write_nb(subs / "honest.ipynb", nb(SDP / "reference.ipynb"))
    write_nb(subs / "template.ipynb", nb(SDP / "template.ipynb"))
    # metadata naming classic_attention
    write_nb(subs / "claims_classic.ipynb", names_assignment(nb(SDP / "reference.ipynb"), "classic_attention"))
    # and one that also answers every classic question, the drill's typed cell included (its code fits both equally)
    both = names_assignment(nb(SDP / "reference.ipynb"), "classic_attention")
    both["cells"] += [
        c
        for c in nb(CLASSIC / "reference.ipynb")["cells"]
        if c["cell_type"] == "code"
        and "PROVIDED" not in "".join(c["source"])
        and ("def " in "".join(c["source"]) or "kit-shapes-drill" in c["metadata"].get("tags", []))
    ]
    write_nb(subs / "defines_both.ipynb", both)
    proc = run_cli("grade", subs, "--out", out, "--no-progress", "--jobs", "2")
    got = results(out)
    assert set(got) == {"honest", "template", "claims_classic", "defines_both"}
    qs = set(config.load(ROOT / "grading.yml").questions("scaled_dot_product"))
    for sid, data in got.items():
        assert data["assignment"] == "scaled_dot_product", sid
        tests = release.scored(data["tests"])
        assert {t["name"] for t in tests} == qs and sum(t["max_score"] for t in tests) == SDP_FULL, sid
    for sid in ("claims_classic", "defines_both"):
        assert got[sid]["score"] == SDP_FULL
        assert "classic_attention" in got[sid]["output"] and "graded as scaled_dot_product" in got[sid]["output"]
    # its code fits both: the batch's note says what it looks like (the judge's says what its metadata names)
    assert (
        "this notebook looks like it is for classic_attention; it was graded as scaled_dot_product, "
        "the batch's assignment"
    ) in got["defines_both"]["output"], got["defines_both"]["output"]
    assert "classic_attention" not in got["honest"].get("output", "")
    assert "graded every submission as scaled_dot_product" in proc.stderr


# -- signals ------------------------------------------------------------------------
def _tree(pid):
    """Every descendant of pid now, as {pid: start time} (the start time tells a reused pid)."""
    out = {}
    for path in glob.glob(f"/proc/{pid}/task/*/children"):
        try:
            kids = [int(c) for c in open(path).read().split()]
        except OSError:
            continue
        for c in kids:
            st = _stat(c)
            if st:
                out[c] = st[19]
            out.update(_tree(c))
    return out


def _stat(pid):
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _alive(seen):
    return {p for p, start in seen.items() if (st := _stat(p)) and st[19] == start and st[0] not in "ZX"}


def _mentions(text):
    """pids whose command line mentions text."""
    found = set()
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if text.encode() in open(f"/proc/{d}/cmdline", "rb").read():
                    found.add(int(d))
            except OSError:
                pass
    return found


def _start_batch(tmp_path, n=8):
    subs, out = tmp_path / "subs", tmp_path / "out"
    subs.mkdir()
    for i in range(n):
        shutil.copy(SDP / "reference.ipynb", subs / f"s{i}.ipynb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "autograder", "grade", str(subs), "--out", str(out), "--jobs", "2", "--no-progress"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )  # a process group of its own, as a terminal's job
    seen, deadline = {}, time.monotonic() + 300
    while not list(out.glob("*/results.json")):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no result in 300 s"
        seen.update(_tree(proc.pid))
        time.sleep(0.05)
    seen.update(_tree(proc.pid))
    assert len(seen) >= 5, seen  # the resource tracker, two judges, their two fork servers
    return proc, out, seen


def _nothing_left(proc, out, seen, within=5.0):
    deadline = time.monotonic() + within
    while True:
        left = _alive(seen) | (_mentions(str(out)) - {os.getpid()})
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert not left, {p: open(f"/proc/{p}/cmdline", "rb").read()[:120] for p in left if _stat(p)}


@pytest.mark.slow
def test_ctrl_c_stops_within_seconds_writes_what_is_done_and_says_how_to_resume(tmp_path):
    proc, out, seen = _start_batch(tmp_path)
    start = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: the whole foreground process group
    stdout, stderr = proc.communicate(timeout=30)
    took = time.monotonic() - start
    assert proc.returncode == 130, stderr
    assert took < 3, f"took {took:.1f} s to stop"
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    assert "--resume" in stderr
    done = results(out)
    rows = csv_rows(out)
    assert 1 <= len(rows) < 8 and {r["id"] for r in rows} == set(done)
    assert all(d["score"] == SDP_FULL for d in done.values()), "an interrupted submission is not written as a result"
    _nothing_left(proc, out, seen)


@pytest.mark.slow
def test_kill_9_takes_every_process_of_the_batch_with_it(tmp_path):
    proc, out, seen = _start_batch(tmp_path)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    _nothing_left(proc, out, seen)
