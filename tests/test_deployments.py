"""The kit on each deployment, installed as its users install it.

- the wheel alone, in a fresh virtual environment with no checkout on the
  path, run from an empty folder: `grade`, `ci`, `check` and `gradescope`
  give the reference full marks, and the battery's cases that a deployment's own
  environment could let through (`DEPLOYED_CASES`) hold;
- each autograder zip in a Gradescope-like root after its `setup.sh` ran (a
  fresh virtual environment stands in for the image; torch is pre-installed
  there, since CI reaches no other package index): full marks for the
  reference, nothing found by a submission that looks for answers on disk,
  and only that assignment's private material in the zip;
- the public part alone: none of the private files, and `check` works.

The fresh environments are hard-linked copies of one made for the session (torch
and the kit's dependencies, nothing of the kit).
"""

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from autograder import __version__, config, messages, release
from autograder.audit import examples as examples_mod
from autograder.audit import hostile
from conftest import ASSIGNMENTS, ROOT

pytestmark = pytest.mark.slow
DEPENDENCIES = ("numpy", "pyyaml", "pytest", "matplotlib")
ANSWER_CASES = ("search_disk_for_answers", "read_other_assignment", "import_private_package")
# what each deployment's own environment could let through: the answers on its disk, the
# packages it holds beside the notebook's (PyYAML), the student's text in its feedback
DEPLOYED_CASES = ANSWER_CASES + ("import_past_the_statement", "cell_labels_hostile")


def _run(cmd, cwd, env=None, timeout=900, check=True):
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("KIT_", "PYTHON", "VIRTUAL_ENV"))}
    proc = subprocess.run(
        [str(c) for c in cmd], cwd=cwd, env={**clean, **(env or {})}, capture_output=True, text=True, timeout=timeout
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(map(str, cmd))} exited {proc.returncode}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
        )
    return proc


@pytest.fixture(scope="session")
def base_venv(tmp_path_factory):
    """A virtual environment with torch and the kit's dependencies, nothing of the kit: the
    distributions pip would install there (`pip install torch numpy pyyaml pytest matplotlib`,
    their requirements' closure, and pip itself), hard-linked from the ones this interpreter
    runs with, the same versions (`_link_distributions`). pip installing them afresh cost about
    55 s of CPU (unpacking and compiling torch), all of it for what is already on this disk."""
    venv = tmp_path_factory.mktemp("base") / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", venv], cwd=venv.parent)
    _link_distributions(("pip", "torch", *DEPENDENCIES), venv)
    _run([venv / "bin" / "python", "-m", "pip", "check"], cwd=venv.parent)  # every requirement met
    return venv


def _distributions(roots):
    """The installed distributions `roots` name and everything they require (extras left out,
    as a plain `pip install` leaves them)."""
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    found, todo = {}, list(roots)
    while todo:
        name = canonicalize_name(todo.pop())
        if name not in found:
            found[name] = dist = metadata.distribution(name)
            requires = (Requirement(r) for r in dist.requires or ())
            todo += [r.name for r in requires if r.marker is None or r.marker.evaluate({"extra": ""})]
    return list(found.values())


def _link_distributions(roots, venv):
    """Install the distributions of `_distributions(roots)` in `venv` as pip had installed them
    here: every file of their RECORD linked (`_link_or_copy`), their scripts copied with
    `venv`'s interpreter in the first line."""
    site, here = site_packages(venv), Path(sys.prefix).resolve()
    for dist in _distributions(roots):
        for rel in dist.files or ():
            src = Path(dist.locate_file(rel))
            if not src.is_file():
                continue  # listed, never written (a byte-code file not compiled)
            dst = Path(os.path.normpath(site / rel))
            dst.parent.mkdir(parents=True, exist_ok=True)
            if dst.parent == venv / "bin":  # a console script: its #! names an interpreter
                first, _, rest = src.read_bytes().partition(b"\n")
                if first.startswith(b"#!") and str(here).encode() in first:
                    first = b"#!" + str(venv / "bin" / "python").encode()
                dst.write_bytes(first + b"\n" + rest)
                dst.chmod(src.stat().st_mode)
            else:
                _link_or_copy(src, dst)


def _link_or_copy(src, dst):
    """A hard link where the file system allows it (a copy of the 1.1 GB environment costs
    seconds of CPU, a link none), else a copy. Nothing writes into an installed file: pip and
    Python's bytecode cache replace files, so the session's environment stays as it was."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def fresh_venv(base, where):
    dest = Path(where) / "venv"
    shutil.copytree(base, dest, symlinks=True, copy_function=_link_or_copy)
    return dest


def site_packages(venv):
    return next((venv / "lib").glob("python3*/site-packages"))


@pytest.fixture(scope="session")
def kit_wheel(tmp_path_factory):
    """The wheel pip builds from the checkout's files (tracked and new, not ignored), copied
    first: setuptools' build/ folder in a working checkout keeps files that were since
    deleted, and a wheel built through it would carry them."""
    out = tmp_path_factory.mktemp("wheel")
    source = tmp_path_factory.mktemp("source")
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        (source / rel).parent.mkdir(parents=True, exist_ok=True)
        if (ROOT / rel).is_symlink():  # autograder/private/solutions -> ../../solutions
            os.symlink(os.readlink(ROOT / rel), source / rel)
        elif (ROOT / rel).is_file():
            shutil.copy2(ROOT / rel, source / rel)
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", out, source], cwd=source
    )
    return next(out.glob("attention_autograder_kit-*.whl"))


def _scores(results):
    data = json.loads(Path(results).read_text())
    return {t["name"]: t["score"] for t in release.scored(data["tests"])}, data


def _case_notebook(name, folder):
    case = next(c for c in hostile.CASES if c.name == name)
    suffix, data = case.build()
    path = Path(folder) / f"{name}{suffix}"
    path.write_bytes(data)
    return path, case


def test_the_wheel_alone_grades_checks_and_holds_from_an_empty_folder(base_venv, kit_wheel, tmp_path):
    venv = fresh_venv(base_venv, tmp_path)
    py = venv / "bin" / "python"
    _run([py, "-m", "pip", "install", "-q", "--no-deps", kit_wheel], cwd=tmp_path)
    installed = site_packages(venv) / "autograder"
    assert (installed / "grading.yml").is_file() and (installed / "ci" / "github-workflow.yml").is_file()
    assert (installed / "build" / "templates" / "run_autograder.sh").is_file()
    empty = tmp_path / "empty"
    empty.mkdir()
    reference = shutil.copy(examples_mod.EXAMPLES / "scaled_dot_product" / "reference.ipynb", empty / "hw.ipynb")
    probe = _run([py, "-c", "import autograder, sys; print(autograder.__file__); print(sys.path)"], cwd=empty).stdout
    assert str(ROOT) not in probe and str(installed) in probe

    _run([venv / "bin" / "attention-kit", "grade", reference, "--out", empty / "out"], cwd=empty)
    scores, data = _scores(empty / "out" / "hw" / "results.json")
    assert scores == config.load(ROOT / "grading.yml").questions("scaled_dot_product")
    assert data["extra_data"]["kit_version"] == __version__

    proc = _run(
        [py, "-m", "autograder", "ci", reference, "--out", empty / "ci", "--summary", empty / "s.md"], cwd=empty
    )
    assert json.loads((empty / "ci" / "results.json").read_text())["score"] == sum(scores.values()), proc.stdout

    _run([py, "-m", "autograder", "check", reference], cwd=empty)

    gs = empty / "gs"
    (gs / "submission").mkdir(parents=True)
    shutil.copy(reference, gs / "submission" / "scaled_dot_product.ipynb")
    _run([py, "-m", "autograder", "gradescope", "--root", gs], cwd=empty)
    assert _scores(gs / "results" / "results.json")[0]["scaled_dot_product_attention"] == 6

    args = [a for name in DEPLOYED_CASES + ("synthesized_reference",) for a in ("--case", name)]
    proc = _run([py, "-m", "autograder", "audit", "--hostile", "--no-progress", *args], cwd=empty, check=False)
    assert proc.returncode == 0 and "violated 0" in proc.stdout, proc.stdout[-5000:] + proc.stderr[-2000:]
    if os.geteuid() == 0:
        assert f"held {len(DEPLOYED_CASES) + 1}," in proc.stdout, proc.stdout[-3000:]


def test_each_autograder_zip_after_setup_sh_grades_and_hides_the_answers(base_venv, dist, tmp_path):
    image = fresh_venv(base_venv, tmp_path)
    env = {"PATH": f"{image / 'bin'}{os.pathsep}/usr/local/bin:/usr/bin:/bin"}
    for a in ASSIGNMENTS:
        z = dist / a / f"{a}-autograder.zip"
        names = zipfile.ZipFile(z).namelist()
        text = "\n".join(zipfile.ZipFile(z).read(n).decode("utf-8", "replace") for n in names)
        assert not any("/catalog/" in n or "/hostile/" in n or "/audit/" in n for n in names), a
        for other in ASSIGNMENTS:
            if other != a:
                assert not any(f"/assignments/{other}/" in n for n in names), (a, other)
        assert "pyproject.toml" not in " ".join(names) and "pip_install ./kit" not in text

        root = tmp_path / a
        (root / "source").mkdir(parents=True)
        (root / "submission").mkdir()
        with zipfile.ZipFile(z) as zf:
            zf.extractall(root / "source")
        for n in ("setup.sh", "run_autograder"):
            os.chmod(root / "source" / n, 0o755)
        _run(["bash", root / "source" / "setup.sh"], cwd=root / "source", env=env, timeout=1800)
        assert not (site_packages(image) / "autograder").exists(), "setup.sh installed a copy of the kit"

        def grade(notebook):
            for old in (root / "submission").iterdir():
                old.unlink()
            shutil.copy(notebook, root / "submission" / Path(notebook).name)
            _run(
                ["bash", root / "source" / "run_autograder"],
                cwd=root / "source",
                env={**env, "KIT_AUTOGRADER_ROOT": str(root)},
            )
            return _scores(root / "results" / "results.json")

        scores, data = grade(examples_mod.EXAMPLES / a / "reference.ipynb")
        from autograder import config

        assert scores == {q: float(p) for q, p in config.load(ROOT / "grading.yml").questions(a).items()}, scores
        assert data["extra_data"]["kit_version"] == __version__
        if a == "scaled_dot_product" and os.geteuid() == 0:
            for name in DEPLOYED_CASES:
                notebook, case = _case_notebook(name, tmp_path)
                scores, data = grade(notebook)
                problems = hostile.check(case, data, {})
                assert not problems, (name, problems, data.get("tests"))

    multi = zipfile.ZipFile(dist / "multi_head" / "multi_head-autograder.zip")
    shipped = "\n".join(multi.read(n).decode() for n in multi.namelist() if "/solutions/" in n)
    for other in ("def additive_attention(", "def dot_attention(", "def causal_mask(", "def padding_mask("):
        assert other not in shipped, f"the multi_head zip carries {other}"
    assert "def masked_softmax(" in shipped and "def scaled_dot_product_attention(" in shipped
    assert "def general_attention(" in shipped  # provided: the single-head check of multi_head_general_attention


def test_the_public_part_alone_holds_none_of_the_private_files(base_venv, dist, tmp_path):
    wheel = next((dist / "public").glob("attention_autograder_kit_public-*.whl"))
    venv = fresh_venv(base_venv, tmp_path)
    py = venv / "bin" / "python"
    _run([py, "-m", "pip", "install", "-q", "--no-deps", wheel], cwd=tmp_path)
    installed = site_packages(venv) / "autograder"
    files = [p for p in installed.rglob("*") if p.is_file()]
    assert files and not (installed / "private").exists()
    reference_lines = {
        line.strip()
        for f in (ROOT / "solutions").glob("*.py")
        for line in f.read_text().splitlines()
        if len(line.strip()) > 30
    }
    for f in files:
        rel = f.relative_to(installed)
        assert not {"private", "suites", "catalog", "audit", "solutions"} & set(rel.parts), rel
        if f.suffix == ".py":
            assert not reference_lines & {line.strip() for line in f.read_text().splitlines()}, rel
    empty = tmp_path / "repo"
    empty.mkdir()
    reference = shutil.copy(examples_mod.EXAMPLES / "scaled_dot_product" / "reference.ipynb", empty / "hw.ipynb")
    summary = empty / "summary.md"
    proc = _run([py, "-m", "autograder", "check", reference, "--summary", summary], cwd=empty)
    n = len(config.load(ROOT / "grading.yml").questions("scaled_dot_product"))
    assert f"{n} of {n} questions pass" in proc.stdout and f"{n} of {n} questions pass" in summary.read_text()
    stub = shutil.copy(ROOT / "student_template" / "en" / "scaled_dot_product.ipynb", empty / "stub.ipynb")
    assert _run([py, "-m", "autograder", "check", stub], cwd=empty, check=False).returncode == 1
    refused = _run([py, "-m", "autograder", "grade", reference, "--out", empty / "out"], cwd=empty, check=False)
    course = messages.normalize(config.load(ROOT / "grading.yml").language)  # _run leaves $KIT_LANG out
    said = messages.t("cli_public_part", course, verb="grade")
    assert refused.returncode == 2 and said in refused.stderr and "Traceback" not in refused.stderr
