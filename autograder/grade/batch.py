"""The batch itself: every submission found, graded once, its files written as it finishes.

`grade_batch` is the Python API (the audit, the demo and the hostile battery call
it); `Batch` is one run of it: what it found, how each file is graded, and
what it has done so far, which the judges report to as each file finishes.
"""

import os
import signal
from collections import Counter
from pathlib import Path
from typing import Any

from autograder import config as config_mod
from autograder import messages
from autograder.grade import changes, export, feedback, fingerprint
from autograder.grade import shard as shard_mod
from autograder.grade.discovery import Found, assign_ids, collect, sha256_of
from autograder.grade.grades_csv import write_csv
from autograder.grade.interrupts import BatchInterrupted, Interrupts
from autograder.grade.judges import Local, Pool
from autograder.grade.progress import Progress, say
from autograder.grade.results import index, not_graded, reusable, write_result
from autograder.grade.text import display
from autograder.lms import layouts
from autograder.messages import t

BATCH = "(one per batch)"  # grade_batch(assignment=BATCH): detect one assignment for the whole batch


class Rows(list):
    """grade_batch's [(id, path, results)], with `found`: how many files were found in all
    (more than the rows for a shard) and `assignment`: the batch's (None: each file's own)."""

    found = 0
    assignment = None


def export_limit(cfg: config_mod.Config) -> int:
    """limits.export_metadata_mb of grading.yml (a number > 0: `autograder.schema`), in bytes."""
    return int(cfg.limits["export_metadata_mb"] * 2**20)


def _note(own: str | None, meta: str | None, graded_as: str | None, why: str) -> str | None:
    """The note for a notebook whose code is for another assignment than it was graded as
    (one whose metadata names another gets the judge's own note)."""
    if not own or not graded_as or own == graded_as:
        return None
    return t("batch_other_assignment", own=own, graded_as=graded_as, why=t(why))


JOBS_ENV = "KIT_JOBS"  # the judges a batch runs when --jobs is not given


def default_jobs() -> int:
    """Judges in parallel when the caller names none: $KIT_JOBS where set (what a scheduler
    gave the run: a Slurm job's CPUs, a pod's CPU limit, a test runner's share of the
    machine), else one per CPU this process may run on (its affinity: a cpuset narrows it).
    A value that is not a whole number of 1 or more raises ValueError."""
    said = os.environ.get(JOBS_ENV)
    if said is not None and said.strip():
        try:
            jobs = int(said)
        except ValueError:
            jobs = 0
        if jobs < 1:
            raise ValueError(said)
        return jobs
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def grade_batch(
    paths: Any,
    out: str | os.PathLike[str],
    assignment: str | None = None,
    resume: bool = False,
    progress: bool = True,
    cfg: config_mod.Config | None = None,
    jobs: int | None = None,
    lang: str | None = None,
    shard: tuple[int, int] | None = None,
    keep_public: bool = False,
) -> Rows:
    """Grade every submission under `paths` into `out`; returns Rows [(id, path, results)] in input order.

    assignment: a name (every file graded against it); BATCH (one detected for the
    whole batch, by majority, over every file found, also with a shard); None (each
    file as its own code says). shard: (I, N) to grade only the I-th of N parts
    (`autograder.grade.shard`) and write OUT/shard.json. Results (results.json,
    feedback.md, feedback.html) are written as each submission finishes, so an
    interrupted batch resumes (`resume=True`) without regrading what is done; a
    result is kept only while what scores it is unchanged (`fingerprint`), and
    the scores such a regrade moves go to OUT/changes.csv (`changes`). keep_public: each
    result also lists its failing public checks, run in the same worker after the last
    verdict (extra_data.public_failed: the audit's column).
    Raises BatchInterrupted (a KeyboardInterrupt) on SIGINT/SIGTERM, after
    writing what was done.
    """
    return Batch(paths, out, assignment, resume, progress, cfg, jobs, lang, shard, keep_public).run()


class Batch:
    """One run of `grade_batch` (its arguments as it takes them)."""

    def __init__(
        self,
        paths: Any,
        out: str | os.PathLike[str],
        assignment: str | None,
        resume: bool,
        progress: bool,
        cfg: config_mod.Config | None,
        jobs: int | None,
        lang: str | None,
        shard: tuple[int, int] | None,
        keep_public: bool = False,
    ) -> None:
        self.cfg = cfg = cfg or config_mod.load()
        self.jobs = max(1, jobs or default_jobs())
        self.out = out = Path(out)
        self.assignment, self.resume, self.lang, self.shard = assignment, resume, lang, shard
        self.keep_public = keep_public
        out.mkdir(parents=True, exist_ok=True)
        (out / shard_mod.SHARD_NAME).unlink(missing_ok=True)  # written again only when this run completes
        paths, class_zips = layouts.expand(paths, out, int(cfg.limits["notebook_file_mb"] * 2**20), say)
        self.found = found = collect(paths, out, class_zips)
        self.ids = assign_ids(found)  # over every file found: a shard's ids are the single run's
        self.position = {f: n for n, f in enumerate(found)}
        self.mine = [f for f in found if shard is None or shard_mod.number(f.rel, shard[1]) == shard[0]]
        self.people = export.submitters_of(self.mine, export_limit(cfg), say)
        # An LMS's class download names its students (over every file found: a shard sees the single run's)
        named = layouts.identities(found, say)
        self.people.update({f: named[f] for f in self.mine if f in named and f not in self.people})
        self.bar = Progress(len(self.mine), progress)
        self.stop = Interrupts()
        self.results: dict[Found, dict[str, Any]] = {}
        self.detected: dict[Found, tuple[str | None, str | None]] = {}  # file -> (its own, its metadata's)
        self.graded_as: dict[Found, str | None] = {}
        self.hashes: dict[Found, str | None] = {}  # read once the judges are starting
        self.reals: dict[Found, str] = {}
        self.prints: dict[str | None, dict[str, str] | None] = {}  # assignment -> what scores it now
        self.before: dict[Found, tuple[dict[str, Any], str]] = {}  # regraded by --resume: (old results, why)
        self.why = {BATCH: "why_batch", None: "why_own_code"}.get(assignment, "why_given")
        self.batch = assignment if assignment not in (BATCH, None) else None  # the batch's (None: each file's own)

    def fingerprint(self, assignment: str | None) -> dict[str, str] | None:
        """What scores `assignment` now (`fingerprint`), read once per batch."""
        if assignment not in self.prints:
            self.prints[assignment] = fingerprint.of(self.cfg, assignment)
        return self.prints[assignment]

    def with_submission(self, f: Found, sid: str, data: dict[str, Any]) -> dict[str, Any]:
        """The results with which file they belong to (`extra_data.submission`) and its submitters."""
        ed = dict(data.get("extra_data") or {})
        ed["submission"] = {"path": self.reals[f], "sha256": self.hashes[f], "id": sid, "found_as": display(f.path)}
        ed.pop("submitters", None)
        if f in self.people:
            ed["submitters"] = self.people[f]
        return {**data, "extra_data": ed}

    def done(
        self,
        f: Found,
        sid: str,
        data: dict[str, Any],
        seen: tuple[str | None, str | None] | None = None,
        quiet: bool = False,
    ) -> None:
        """A file is graded: its files written, its result kept (the judges call this as each finishes)."""
        data = dict(data)
        own, meta = seen or self.detected.get(f) or (None, None)
        with messages.language((data.get("extra_data") or {}).get("language") or self.lang):
            note = _note(own, meta, self.graded_as.get(f) or data.get("assignment"), self.why)
        if note:
            data["output"] = "\n".join(x for x in (note, data.get("output")) if x)
        data = self.with_submission(f, sid, data)
        data["extra_data"]["fingerprint"] = self.fingerprint(data.get("assignment"))
        write_result(self.out, sid, data, self.cfg)
        self.results[f] = data
        self.bar.step(sid if not quiet else sid + " (taken at stop)")

    def write_changes(self) -> None:
        """OUT/changes.csv of this --resume (`changes`); a run without it removes a stale one."""
        if not self.resume:
            changes.forget(self.out)
            return
        regraded = [
            (self.ids[f], old, self.results[f], reason)
            for f, (old, reason) in sorted(self.before.items(), key=lambda x: self.position[x[0]])
            if f in self.results
        ]
        changes.write(self.out, regraded)

    def start(self, n: int) -> Pool:
        """A pool of judges for `n` files, every one started."""
        pool = Pool(min(self.jobs, n), self.cfg, self.stop, self.lang, self.keep_public)
        try:
            return pool.start()
        except BaseException:
            pool.kill()
            raise

    def run(self) -> Rows:
        assignment, cfg, out, stop = self.assignment, self.cfg, self.out, self.stop
        found, mine, ids, hashes, reals = self.found, self.mine, self.ids, self.hashes, self.reals
        judges: Pool | Local | None = None
        with stop:
            try:
                # Start the judges first: their start-up overlaps ours. A shard's detection reads every file.
                busy = len(found) if assignment == BATCH else len(mine)
                if self.jobs > 1 and busy > 1 and not self.resume:
                    judges = self.start(busy)
                hashes.update({f: sha256_of(f.path) if os.path.isfile(f.path) else None for f in found})
                reals.update({f: display(f.real) for f in found})
                done_before = index(out) if self.resume else {}
                regular = [f for f in found if hashes[f] is not None]
                pending = [f for f in mine if hashes[f] is not None and (reals[f], hashes[f]) not in done_before]
                if judges is None:
                    n = len(regular) if assignment == BATCH else len(pending)
                    judges = self.start(n) if self.jobs > 1 and n > 1 else Local(cfg, stop, self.lang, self.keep_public)
                # Which assignment each is graded as: the batch's needs every file read first (every file
                # found, in a shard too, so each shard finds the single run's); a file's own
                # (assignment=None) is read with its grading, unless --resume must know it before.
                mine_set = set(mine)
                if assignment == BATCH:
                    self.detected.update(judges.detect(regular))
                elif assignment is None and self.resume:
                    self.detected.update(judges.detect([f for f in regular if f in mine_set]))
                if assignment == BATCH:
                    own = [self.detected[f][0] for f in regular]
                    self.batch, tied = judges.batch(own)
                    batch = self.batch
                    counts = Counter(a for a in own if a)
                    if batch and len(counts) > 1:
                        others = ", ".join(f"{n} {a}" for a, n in counts.most_common() if a != batch)
                        tie = t("grade_batch_tie") if tied else ""
                        say(
                            t(
                                "grade_batch_mixed",
                                batch=batch,
                                n=counts[batch],
                                total=len(found),
                                tie=tie,
                                others=others,
                            )
                        )
                    self.graded_as.update({f: batch for f in found})
                elif assignment is None:
                    self.graded_as.update({f: self.detected[f][0] for f in self.detected})
                else:
                    self.graded_as.update({f: assignment for f in found})
                todo = []
                for f in mine:
                    sid = ids[f]
                    hit = done_before.get((reals[f], hashes[f])) if hashes[f] else None
                    graded_as = self.graded_as.get(f)
                    same = hit is not None and hit[1].get("assignment") == graded_as
                    stale = changes.why(hit[1], self.fingerprint(graded_as)) if hit and same else None
                    if (
                        stale
                    ):  # what scores it changed since (a fix of the kit's fault too): its old scores go to changes.csv
                        self.before[f] = (hit[1], stale)
                    if hit is not None and not stale and reusable(hit[1], graded_as):
                        data = self.with_submission(f, sid, hit[1])
                        if hit[0] != sid or data != hit[1] or not (out / sid / feedback.HTML_NAME).is_file():
                            write_result(out, sid, data, cfg)
                        self.results[f] = data
                        self.bar.step(sid + " (done before)")
                    elif hashes[f] is None and not os.path.isfile(f.path):
                        self.done(
                            f,
                            sid,
                            not_graded(
                                f"{display(f.path.name)} is not a regular file", self.graded_as.get(f), cfg, self.lang
                            ),
                        )
                    else:
                        todo.append((f, sid, self.graded_as.get(f), f not in self.detected))
                judges.grade(todo, self.done)
            except KeyboardInterrupt:
                stop.settle()
                if not stop:  # a KeyboardInterrupt of no signal of ours (raised by code): as Ctrl-C
                    stop.signum = signal.SIGINT
            finally:  # also on a grader bug: what is done is written
                stop.settle()
                if judges is not None:  # every result is in (or we stop): nothing of theirs is left to finish
                    judges.kill()
                self.bar.end()
                rows = Rows((ids[f], f.path, self.results[f]) for f in mine if f in self.results)
                rows.found, rows.assignment = len(found), self.batch
                if found:
                    write_csv(out, rows, cfg)
                    self.write_changes()
                if self.shard is not None and found and not stop:
                    shard_mod.write(
                        out,
                        self.shard,
                        self.batch,
                        len(found),
                        [ids[f] for f in mine],
                        [self.position[f] for f in mine],
                    )
        if stop:
            raise BatchInterrupted(rows, len(mine), stop.signum, out)
        return rows
