#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image for
# the @ASSIGNMENT@ assignment. It installs the judge's dependencies only: the
# kit itself is not installed (a copy in site-packages would be one more place
# holding answers); run_autograder runs it from kit/.
set -euo pipefail
cd "$(dirname "$0")"
export DEBIAN_FRONTEND=noninteractive
PY="${KIT_PYTHON:-python3}"
if ! "$PY" -m pip --version >/dev/null 2>&1; then
    apt-get update
    apt-get install -y --no-install-recommends python3 python3-pip
fi
pip_install() {
    "$PY" -m pip install --no-cache-dir "$@" \
        || "$PY" -m pip install --no-cache-dir --break-system-packages "$@"
}
# Gradescope's machines have no GPU: the CPU wheel (about 200 MB, not several GB).
if ! "$PY" -c "import torch" >/dev/null 2>&1; then
    pip_install torch --index-url https://download.pytorch.org/whl/cpu || pip_install torch
fi
pip_install numpy pyyaml pytest matplotlib
# Fail the image build now rather than at the first submission.
(cd kit && PYTHONPATH=. "$PY" -c "import torch, yaml, pytest, matplotlib, autograder.judge, autograder.gradescope")
