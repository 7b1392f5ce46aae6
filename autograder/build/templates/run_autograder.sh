#!/usr/bin/env bash
# Gradescope runs this for every submission of the @ASSIGNMENT@ assignment.
# It runs the kit's trusted judge, never otter's runner: nothing in the
# submission is unpickled or run outside the judge's sandboxed worker.
# The kit is not installed in the image: it runs from kit/ (this zip's copy,
# which holds only this assignment's private material), and no worker can
# reach that folder.
# KIT_AUTOGRADER_ROOT replaces /autograder (tests); KIT_PYTHON replaces python3.
set -u
ROOT="${KIT_AUTOGRADER_ROOT:-/autograder}"
KIT="$ROOT/source/kit"
PY="${KIT_PYTHON:-python3}"
export PYTHONPATH="$KIT"
export KIT_GRADING_YML="$KIT/autograder/grading.yml"
export KIT_ASSIGNMENT="@ASSIGNMENT@"
mkdir -p "$ROOT/results"
cd "$KIT" || exit 1
"$PY" -m autograder gradescope --root "$ROOT"
status=$?
if [ ! -s "$ROOT/results/results.json" ]; then
    printf '{"score": 0, "tests": [], "output": "The autograder stopped before it could grade this submission (exit status %s). Please tell the course staff."}\n' "$status" > "$ROOT/results/results.json"
fi
exit "$status"
