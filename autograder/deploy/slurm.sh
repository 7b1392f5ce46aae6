#!/bin/bash
# Grade a class on a Slurm cluster. Written by `python -m autograder deploy slurm`
# (or slurm-gpu). Run it on a login node: `bash grade-class.sh`. It submits
#   a job array of @SHARDS@ tasks: task I grades shard I of @SHARDS@
#     (`grade --shard`, from SLURM_ARRAY_TASK_ID) into @OUT@/shard-I/;
#   a merge job that starts when every task has ended (afterany) and merges
#     them into @OUT@/merged/ (per student <id>/results.json, feedback.md and
#     feedback.html; grades.csv exactly as a single run writes it; it warns, and
#     exits 1, if a shard did not finish).
# Each array task asks for: @CPUS@ CPUs, @MEM@, @TIME@ @GRES@
#
# Root: the judge needs root for the kit's sandbox (mount and network
# namespaces, a worker uid per judge, control groups; docs/pages/architecture/index.md, "What a worker
# can reach"). Tasks run as you, so the grading command runs through
# `@AS_ROOT@`: ask the cluster's administrators for a rule that lets you run
# exactly `@PYTHON@ -m autograder grade ...` as root on the grading nodes.
# With AS_ROOT empty it runs as you: a non-root judge, whose workers run as you
# and can read whatever you can (the kit's private root included), so do that
# only for trusted submissions.
#SBATCH --job-name=kit-grade-@ASSIGNMENT@
#SBATCH --time=@TIME@
#SBATCH --output=@OUT@/logs/%x-%A_%a.log
set -euo pipefail

if [ -n "${SLURM_ARRAY_TASK_ID:-}" ]; then
  exec @AS_ROOT@ "@PYTHON@" -m autograder grade "@SUBMISSIONS@" --out "@OUT@/shard-${SLURM_ARRAY_TASK_ID}" --shard "${SLURM_ARRAY_TASK_ID}/@SHARDS@" --assignment @ASSIGNMENT@ --jobs "${SLURM_CPUS_PER_TASK:-1}" --no-progress
elif [ "${KIT_STEP:-}" = merge ]; then
  exec "@PYTHON@" -m autograder merge "@OUT@"/shard-* --out "@OUT@/merged"
else
  mkdir -p "@OUT@/logs"
  if ! array=$(sbatch --parsable --array=1-@SHARDS@ --cpus-per-task=@CPUS@ --mem=@MEM@ @GRES@ "$0"); then
    echo "grade-class: Slurm refused the grading array (its reason above); nothing was submitted" >&2
    exit 1
  fi
  if ! merge=$(sbatch --parsable --dependency=afterany:"${array%%;*}" --export=ALL,KIT_STEP=merge \
               --job-name=kit-merge-@ASSIGNMENT@ --cpus-per-task=1 --mem=2G "$0"); then
    echo "grade-class: Slurm refused the merge job (its reason above); the array ${array%%;*} is queued:" \
         "merge by hand when it ends, or scancel ${array%%;*}" >&2
    exit 1
  fi
  echo "submitted the grading array ${array%%;*} (@SHARDS@ shards) and the merge job ${merge%%;*}:"
  echo "  squeue -j ${array%%;*},${merge%%;*}; results in @OUT@/merged/"
fi
