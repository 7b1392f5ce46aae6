"""`python -m autograder new NAME` (autograder/new): a skeleton that works at once.

In a copy of the kit (its tracked files, and the untracked ones git does not ignore, in a
git repository of their own), the test runs the commands of docs/pages/adding.md's first
block, as a course would: `new` touches only the new assignment's places (git status
says so), and `build`, `grade` (the reference full, the template 0, the catalog's bug
loses its question) and `audit` (the bug caught, the correct entry passes) work on it;
then the kit's per-assignment tests pass on it. A NAME that cannot be made is refused in
one line, with exit status 2, and nothing written.
"""

import difflib
import json
import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml

from autograder import new
from conftest import ROOT

NAME = "demo_task"
TUTORIAL = ROOT / "docs" / "pages" / "adding.md"
DOC_NAME = "my_task"  # the name the tutorial's commands use
# the kit's tests parametrized by assignment (tests/conftest.py ASSIGNMENTS), run on the skeleton
# alone; not test_notebooks.py (kernels: a minute here; it passes on the skeleton with -k) nor
# test_grading.py (its fixtures build and grade every assignment's examples)
PER_ASSIGNMENT = (
    "test_build.py",
    "test_editions.py",
    "test_grading_text.py",
    "test_scoring.py",
    "test_public_checks.py",
    "test_reader.py",
    "test_time_promises.py",
    "test_stand_in_reach.py",
)


def _run(cmd, cwd, check=True, timeout=900):
    env = {k: v for k, v in os.environ.items() if k not in ("KIT_GRADING_YML", "PYTHONPATH")}
    env["PYTHONPATH"] = str(cwd)  # the copy's package, not the checkout's editable install
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"{cmd} exited {proc.returncode}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}")
    return proc


def _git(copy, *args):
    return _run(["git", "-c", "user.name=kit", "-c", "user.email=kit@example.org", *args], copy).stdout


def tutorial_commands():
    """The first bash block of the tutorial: the commands from `new` to the audit."""
    block = re.search(r"```bash\n(.*?)```", TUTORIAL.read_text(encoding="utf-8"), re.S).group(1)
    return [line.split() for line in block.splitlines() if line.startswith("python -m autograder ")]


@pytest.fixture(scope="module")
def kit_copy(tmp_path_factory):
    """A copy of the kit in a git repository of its own, everything committed."""
    copy = tmp_path_factory.mktemp("kit") / "kit"
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for rel in filter(None, (f.decode() for f in files)):
        src, dst = ROOT / rel, copy / rel
        if not src.exists() and not src.is_symlink():
            continue  # deleted in the working tree, not yet in the index
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            os.symlink(os.readlink(src), dst)
        else:
            shutil.copy2(src, dst)
    _git(copy, "init", "-q")
    _git(copy, "add", "-A")
    _git(copy, "commit", "-q", "-m", "the kit")
    probe = _run([sys.executable, "-c", "import autograder; print(autograder.__file__)"], copy).stdout
    assert probe.strip() == str(copy / "autograder" / "__init__.py"), probe
    return copy


def _changed(copy):
    """{path: status} of what differs from the commit (untracked folders listed file by file)."""
    out = {}
    for line in _git(copy, "status", "--porcelain", "--untracked-files=all").splitlines():
        out[line[3:]] = line[:2].strip()
    return out


def _own(path):
    """Whether `path` is one of NAME's own places (its folders, files, grading.yml entry, the
    examples' expectations that build writes)."""
    return (
        path.startswith((f"assignments/{NAME}/", f"autograder/private/assignments/{NAME}/"))
        or path in (f"solutions/{NAME}.py", "grading.yml", "examples/submissions/expected.yml")
        or path.startswith(f"examples/submissions/{NAME}/")
        or path in (f"student_template/en/{NAME}.ipynb", f"student_template/pt-BR/{NAME}.ipynb")
    )


@pytest.mark.slow
def test_new_then_build_grade_audit_and_the_per_assignment_tests_pass(kit_copy):
    copy = kit_copy
    commands = tutorial_commands()
    assert [c[3] for c in commands] == ["new", "build", "grade", "audit"], commands
    before = (copy / "grading.yml").read_text(encoding="utf-8").splitlines()
    steps = {}
    for words in commands:
        words = [w.replace(DOC_NAME, NAME) for w in words]
        steps[words[3]] = _run([sys.executable, *words[1:]], copy)
        if words[3] == "new":
            changed = _changed(copy)
            assert changed.pop("grading.yml") == "M", changed
            assert changed and all(s == "??" and _own(p) for p, s in changed.items()), changed
            written = re.findall(r"^wrote (\S+)$", steps["new"].stdout, re.M)
            assert sorted(written) == sorted([*changed, "grading.yml"]), steps["new"].stdout
            # its entry is one block of lines added to grading.yml; every other line is as it was
            after = (copy / "grading.yml").read_text(encoding="utf-8").splitlines()
            edits = [op for op in difflib.SequenceMatcher(None, before, after).get_opcodes() if op[0] != "equal"]
            assert [op[0] for op in edits] == ["insert"], edits
            assert yaml.safe_load("\n".join(after))["assignments"][NAME]["questions"] == {NAME: 2}
            # the kit's static checks hold on its code as written (the test command runs them)
            code = [f"autograder/private/assignments/{NAME}", f"solutions/{NAME}.py"]
            _run([sys.executable, "-m", "ruff", "check", *code], copy)
            _run([sys.executable, "-m", "ruff", "format", "--check", *code], copy)
        if words[3] == "build":  # the tracked files it rewrites and the ones it adds: NAME's alone
            changed = _changed(copy)
            assert all(_own(p) for p in changed), sorted(p for p in changed if not _own(p))
    examples = copy / "examples" / "submissions" / NAME
    bug = f"{NAME}_not_scaled"
    assert sorted(p.name for p in examples.iterdir()) == sorted(
        [f"{bug}.ipynb", f"{bug}_pt-BR.ipynb", "reference.ipynb", "template.ipynb"]
    )
    # grade: each example scores what expected.yml (written by build) says
    out = copy / "out" / NAME
    expected = yaml.safe_load((copy / "examples" / "submissions" / "expected.yml").read_text())
    for stem in ("reference", "template", bug, f"{bug}_pt-BR"):
        score = json.loads((out / stem / "results.json").read_text(encoding="utf-8"))["score"]
        expect = expected[f"{NAME}/{stem}.ipynb"]["expect"]
        assert {"full marks": score == 2, "zero": score == 0, "loses points": score < 2}[expect], (stem, score)
        if stem.startswith(bug):  # its one value check fails, and the property earns no more than it
            assert score == 0, (stem, score)
    assert expected[f"{NAME}/reference.ipynb"]["expect"] == "full marks"
    assert expected[f"{NAME}/template.ipynb"]["expect"] == "zero"
    # the suite's likely cause, in the edition's language (messages.yml of the assignment)
    feedback = {stem: (out / stem / "feedback.md").read_text(encoding="utf-8") for stem in (bug, f"{bug}_pt-BR")}
    assert "the scores are not divided by sqrt(d_k)" in feedback[bug]
    assert "os scores não foram divididos por sqrt(d_k)" in feedback[f"{bug}_pt-BR"]
    # audit: the bug caught on its question, the correct variant at full marks
    audit = steps["audit"].stdout
    assert "buggy entries caught on their questions: 1/1 (100%)" in audit, audit
    assert "correct entries at full marks: 1/1" in audit, audit
    # the kit's own tests of every assignment, on this one
    tests = _run(
        [sys.executable, "-m", "pytest", *(f"tests/{f}" for f in PER_ASSIGNMENT), "-k", NAME, "-q"]
        + ["-n", "0", "-p", "no:cacheprovider"],
        copy,
    )
    assert re.search(r"\b\d+ passed\b", tests.stdout) and " failed" not in tests.stdout, tests.stdout[-3000:]
    # a second time: refused in one line, nothing written; a stray file of a name: refused too
    again = _run([sys.executable, "-m", "autograder", "new", NAME], copy, check=False)
    assert again.returncode == 2 and again.stderr.count("\n") == 1 and "already exists" in again.stderr
    (copy / "solutions" / "stray_task.py").write_text("")
    stray = _run([sys.executable, "-m", "autograder", "new", "stray_task"], copy, check=False)
    assert stray.returncode == 2 and "solutions/stray_task.py" in stray.stderr, stray.stderr
    assert {p: s for p, s in _changed(copy).items() if not p.startswith("out/")} == {
        **changed,
        "solutions/stray_task.py": "??",
    }


@pytest.mark.parametrize(
    "name, why",
    [
        ("My-Task", "is not a name for an assignment"),
        ("class", "is not a name for an assignment"),
        ("_task", "is not a name for an assignment"),
        ("multi_head", "already exists"),
        ("causal_mask", "clashes with a question"),
        ("max", "clashes with a Python name"),
        ("torch", "clashes with a Python name"),
    ],
)
def test_a_name_that_cannot_be_made_is_refused_in_one_line_and_nothing_is_written(name, why, capsys):
    from autograder import cli

    grading = (ROOT / "grading.yml").read_bytes()
    assert cli.main(["new", name]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"new: {name!r} {why}") and err.count("\n") == 1, err
    assert (ROOT / "grading.yml").read_bytes() == grading
    if why != "already exists":
        assert not any((ROOT / place).exists() for place in new.places(name)), name


GRADING = """\
# a course's file
assignments:
  first:
    questions:
      one: 1
# the next section's comment
limits:
  memory_mb: 1024
"""


def test_the_entry_goes_after_the_last_assignment_and_every_other_line_stays():
    entry = "  second:\n    questions:\n      two: 2\n"
    out = new.with_entry(GRADING, entry)
    assert out == GRADING.replace("      one: 1\n", "      one: 1\n" + entry)
    last = new.with_entry(GRADING.split("# the next")[0].rstrip("\n"), entry)  # the section ends the file
    assert last.endswith("      one: 1\n" + entry)
    with pytest.raises(new.Refused, match="no `assignments:` section"):
        new.with_entry("limits:\n  memory_mb: 1\n", entry)
