"""The kit's Gradescope autograder zip for one assignment.

Starts from the zip otter assign generated and keeps what makes it recognisable
to otter's Gradescope plumbing (`otter_config.json`, the public tests in
`tests/`), but replaces the runner: `run_autograder` runs the kit's trusted
judge (`python -m autograder gradescope`), never otter's `run_otter.py`, which
unpickles a submission's `.OTTER_LOG` before any plugin runs. `setup.sh`
installs PyTorch and the kit, shipped in `kit/`.

Layout (every member dated 1980-01-01, sorted, so rebuilding gives the same bytes):

    run_autograder          the kit's (0755)
    setup.sh                the kit's (0755)
    otter_config.json       otter's
    tests/<question>.py     otter's public tests
    kit/pyproject.toml      the kit, installed by setup.sh with `pip install ./kit`
    kit/README.md           (when the repository has one)
    kit/grading.yml
    kit/autograder/...      judge, worker, sandbox, hidden suites (no caches)
    kit/solutions/...       reference solutions (the judge's expected values)
"""
import zipfile
from pathlib import Path

from autograder.build import sync

# otter's members that are kept; everything else (run_otter.py, otter's
# run_autograder and setup.sh, environment.yml, requirements) is replaced.
KEEP_FROM_OTTER = ("otter_config.json",)
KEEP_FROM_OTTER_DIRS = ("tests/",)
KIT_FILES = ("pyproject.toml", "README.md", "LICENSE", "grading.yml")
KIT_DIRS = ("autograder", "solutions")
SKIP_PARTS = {"__pycache__", ".pytest_cache", ".ipynb_checkpoints"}
SKIP_SUFFIXES = (".pyc", ".pyo", ".egg-info")
FIXED_DATE = (1980, 1, 1, 0, 0, 0)

RUN_AUTOGRADER = """\
#!/usr/bin/env bash
# Gradescope runs this for every submission of the {assignment} assignment.
# It runs the kit's trusted judge, never otter's runner: nothing in the
# submission is unpickled or run outside the judge's sandboxed worker.
# KIT_AUTOGRADER_ROOT replaces /autograder (tests); KIT_PYTHON replaces python3.
set -u
ROOT="${{KIT_AUTOGRADER_ROOT:-/autograder}}"
KIT="$ROOT/source/kit"
PY="${{KIT_PYTHON:-python3}}"
export PYTHONPATH="$KIT${{PYTHONPATH:+:$PYTHONPATH}}"
export KIT_GRADING_YML="$KIT/grading.yml"
export KIT_ASSIGNMENT="{assignment}"
mkdir -p "$ROOT/results"
cd "$KIT" || exit 1
"$PY" -m autograder gradescope --root "$ROOT"
status=$?
if [ ! -s "$ROOT/results/results.json" ]; then
    printf '{{"score": 0, "tests": [], "output": "The autograder stopped before it could grade this submission (exit status %s). Please tell the course staff."}}\\n' "$status" > "$ROOT/results/results.json"
fi
exit "$status"
"""

SETUP_SH = """\
#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image for
# the {assignment} assignment: it installs PyTorch and the kit (kit/: the
# judge, the hidden suites, the reference solutions and grading.yml).
set -euo pipefail
cd "$(dirname "$0")"
export DEBIAN_FRONTEND=noninteractive
if ! python3 -m pip --version >/dev/null 2>&1; then
    apt-get update
    apt-get install -y --no-install-recommends python3 python3-pip
fi
pip_install() {{
    python3 -m pip install --no-cache-dir "$@" \\
        || python3 -m pip install --no-cache-dir --break-system-packages "$@"
}}
# Gradescope's machines have no GPU: the CPU wheel (about 200 MB, not several GB).
pip_install torch --index-url https://download.pytorch.org/whl/cpu || pip_install torch
pip_install numpy pyyaml pytest matplotlib
pip_install ./kit
# Fail the image build now rather than at the first submission.
(cd kit && python3 -c "import torch, yaml, pytest, autograder.judge, autograder.gradescope")
"""


def _info(name, mode):
    info = zipfile.ZipInfo(name, date_time=FIXED_DATE)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = (0o100000 | mode) << 16
    info.create_system = 3  # unix, so the modes are honoured
    return info


def kit_members(root=None):
    """{zip name: path} for the kit's own files under `kit/`."""
    root = Path(root or sync.KIT_ROOT)
    members = {}
    for name in KIT_FILES:
        if (root / name).is_file():
            members[f"kit/{name}"] = root / name
    for d in KIT_DIRS:
        for path in sorted((root / d).rglob("*")):
            rel = path.relative_to(root)
            if not path.is_file() or SKIP_PARTS & set(rel.parts) or path.name.endswith(SKIP_SUFFIXES):
                continue
            if any(p.endswith(".egg-info") for p in rel.parts):
                continue
            members[f"kit/{rel.as_posix()}"] = path
    return members


def otter_members(otter_zip):
    """{zip name: bytes} of what is kept from otter's generated zip."""
    kept = {}
    with zipfile.ZipFile(otter_zip) as zf:
        for info in zf.infolist():
            if info.is_dir():
                continue
            if info.filename in KEEP_FROM_OTTER or info.filename.startswith(KEEP_FROM_OTTER_DIRS):
                kept[info.filename] = zf.read(info)
    if "otter_config.json" not in kept:
        raise ValueError(f"{otter_zip} has no otter_config.json")
    return kept


def build_zip(assignment, otter_zip, dest, root=None):
    """Write the kit's autograder zip for `assignment` to `dest`; returns its member names."""
    entries = {
        "run_autograder": (RUN_AUTOGRADER.format(assignment=assignment).encode(), 0o755),
        "setup.sh": (SETUP_SH.format(assignment=assignment).encode(), 0o755),
    }
    for name, data in otter_members(otter_zip).items():
        entries[name] = (data, 0o644)
    for name, path in kit_members(root).items():
        entries[name] = (path.read_bytes(), 0o644)
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".tmp")
    with zipfile.ZipFile(tmp, "w") as zf:
        for name in sorted(entries):
            data, mode = entries[name]
            zf.writestr(_info(name, mode), data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
    tmp.replace(dest)
    return sorted(entries)
