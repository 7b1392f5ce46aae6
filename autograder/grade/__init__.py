"""`python -m autograder grade`: grade a batch of submissions in the trusted judge.

Writes OUT/<id>/results.json (Gradescope's format), with feedback.md and
feedback.html beside it (`feedback`), as each submission finishes, then
OUT/grades.csv (`grades_csv`: the columns an LMS import takes). A broken
submission scores what it earned with a message saying why, and the batch
goes on. A submission under `submission_<n>/` of a Gradescope export folder
gets its submitters (`export`); one in a Moodle or Canvas class download
(its zip given by name, or its folder) gets the student the LMS named
(`autograder.lms.layouts`). `--shard I/N` grades one fixed part of the
files found and writes OUT/shard.json (`shard`); `merge` joins the parts.

Which file is which. Folders are searched for `*.ipynb` and `*.zip`; a file
given by name is taken whatever it is called; the same file reached twice (a
folder and a file in it, two links) is graded once. A submission's id is its
path relative to the folder it was found under (a file given by name: its own
name), folders joined with `__`, without the suffix: `A/hw.ipynb` -> `A__hw`,
`A-hw.ipynb` -> `A-hw`. A name with any character other than ASCII letters,
digits, `-` and `_` (or a `__` of its own) is cleaned and gets 8 hex digits of
a hash of its path (`hw 1.ipynb` -> `hw_1-3f09c2aa`), so ids are safe file
names, never `.`, `..` or `grades.csv`. Where two ids are the same (the same
relative path under two folders given), each takes the next folder above it
in front (`alice__submission`, `bob__submission`). So a file's id does not
change when other files arrive in or leave the folders.

A result belongs to its file by content, never by its id: results.json records
the file's real path and sha256 (`extra_data.submission`), and `--resume`
keeps a result only for the same path, the same bytes and the same assignment
(a changed file is graded again).

Which assignment. Without `--assignment` the batch has one assignment: each
notebook's is detected from what its code defines (`autograder.judge.detect`;
its metadata, the student's to edit, only breaks a tie) and the most common
one is the batch's. A shard detects it over every file found, not only its
own, so each shard grades against the single run's assignment. Every submission is graded against it; one whose code or
metadata points elsewhere is told so in its results.json. (The Python API's
`grade_batch(assignment=None)` grades each file as its own code says: the
audit, the demo and the hostile battery grade trusted files of several
assignments in one batch.)

Processes. A pool of judge processes (spawned: no torch state forked), each
with its own fork server, grades in parallel. Each pool process and each fork
server has the kernel's parent-death signal (`autograder.sandbox.pdeath`), so
a `kill -9` of the command takes them with it. Ctrl-C (or SIGTERM) stops the
batch at once: the pool is killed, results.json and grades.csv hold what was
done, the message says how to resume, and the exit status is 130 (143).

One module per job: `discovery` (the files and their ids), `progress` (the
terminal), `judges` (grading one file; the pool), `interrupts` (signals, exit
statuses), `batch` (the batch itself, `grade_batch`), `results` (OUT/<id>/),
`command` (the CLI verb); beside them `grades_csv`, `feedback`, `export`,
`shard` and `text`. What other code imports from `autograder.grade` is here.
"""

from autograder.grade import export, feedback, grades_csv, shard  # noqa: F401 - re-exported
from autograder.grade.batch import BATCH, Batch, Rows, export_limit, grade_batch  # noqa: F401 - re-exported
from autograder.grade.command import main, score_table  # noqa: F401 - re-exported
from autograder.grade.discovery import (  # noqa: F401 - re-exported
    MAX_ID,
    SKIP_DIRS,
    SUFFIXES,
    Found,
    assign_ids,
    collect,
    sha256_of,
)
from autograder.grade.interrupts import (  # noqa: F401 - re-exported
    EXIT_GRADER_FAULT,
    EXIT_INTERRUPTED,
    BatchInterrupted,
)
from autograder.grade.judges import batch_of, detect_one, grade_one  # noqa: F401 - re-exported
from autograder.grade.progress import Progress  # noqa: F401 - re-exported
from autograder.grade.results import not_graded, write_json_atomic, write_result  # noqa: F401 - re-exported
