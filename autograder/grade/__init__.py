"""`python -m autograder grade`: grade a batch of submissions in the trusted judge.

Writes OUT/<id>/results.json (Gradescope's format), with feedback.md and
feedback.html beside it (`feedback`), as each submission finishes, then
OUT/grades.csv (`grades_csv`: the columns an LMS import takes). A broken
submission scores what it earned with a message saying why, and the batch
goes on. A submission under `submission_<n>/` of a Gradescope export folder
gets its submitters (`export`). `--shard I/N` grades one fixed part of the
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
"""
import hashlib
import json
import os
import re
import signal
import sys
import threading
import time
import traceback

from autograder import messages
from autograder.messages import t
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from autograder import config as config_mod
from autograder.grade import export, feedback
from autograder.grade import shard as shard_mod
from autograder.grade import grades_csv
from autograder.grade.grades_csv import CSV_NAME, first_line, was_graded, write_csv
from autograder.grade.text import clean as _clean
from autograder.grade.text import display

SUFFIXES = (".ipynb", ".zip")
SKIP_DIRS = (".ipynb_checkpoints", "__MACOSX", "__pycache__", ".git")
BATCH = "(one per batch)"  # grade_batch(assignment=BATCH): detect one assignment for the whole batch
MAX_ID = 96
EXIT_INTERRUPTED = {signal.SIGINT: 130, signal.SIGTERM: 143}
EXIT_GRADER_FAULT = 3  # the kit failed on at least one submission (status internal_error)

_SAFE_PART = re.compile(r"[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*")


def _say(message):
    print(message, file=sys.stderr, flush=True)


# -- finding the files ----------------------------------------------------------
@dataclass(frozen=True)
class Found:
    """One submission file: where it was found and under which argument."""
    path: Path  # as found: the argument, or a file under it
    rel: tuple  # its path relative to the folder argument (a file argument: its name)
    parts: tuple  # every component of its absolute path (ids widen leftwards from rel)
    real: str  # os.path.realpath: one row per real file
    root: str = None  # the folder argument it was found under (None: a file given by name)

    def __fspath__(self):
        return os.fspath(self.path)


def _walk(root, skip_real):
    """Submission files under a folder, in a stable order; unreadable folders are reported."""
    def onerror(exc):
        _say(f"grade: cannot read {display(exc.filename or root)}: {exc.strerror or exc}; skipped")

    for dirpath, dirs, files in os.walk(root, onerror=onerror):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS
                         and os.path.realpath(os.path.join(dirpath, d)) not in skip_real)
        for name in sorted(files):
            if name.lower().endswith(SUFFIXES):
                full = os.path.join(dirpath, name)
                if os.path.isfile(full):
                    yield full


def collect(paths, out=None):
    """[Found] from files and folders (folders: *.ipynb and *.zip inside), each real file once.

    A path that does not exist is reported on stderr (one line) and skipped. A
    file given by name is kept whatever its name (a bad file gets a clear
    reason in its results, not a skip). `out`, if under a folder, is not searched."""
    skip = {os.path.realpath(out)} if out is not None else set()
    found, seen = [], set()
    for arg in paths:
        arg = os.fspath(arg)
        if isinstance(arg, bytes):
            arg = os.fsdecode(arg)
        if not os.path.lexists(arg) or not os.path.exists(arg):
            _say(f"grade: {display(arg)}: no such file or folder; skipped")
            continue
        if os.path.isdir(arg):
            for full in _walk(arg, skip):
                rel = tuple(Path(os.path.relpath(full, arg)).parts)
                _add(found, seen, full, rel, arg)
        else:
            _add(found, seen, arg, (os.path.basename(os.path.abspath(arg)),))
    return found


def _add(found, seen, path, rel, root=None):
    real = os.path.realpath(path)
    if real in seen:
        return
    seen.add(real)
    parts = Path(os.path.abspath(path)).parts[1:]
    found.append(Found(Path(path), rel, tuple(parts), real, root))


# -- ids ----------------------------------------------------------------------
def _strip_suffix(name):
    low = name.lower()
    for s in SUFFIXES:
        if low.endswith(s) and len(name) > len(s):
            return name[: -len(s)]
    return name


def _id_at(f, depth):
    """The id from the last `depth` components of the file's path."""
    comps = list(f.parts[-depth:]) if depth <= len(f.parts) else list(f.rel)
    comps[-1] = _strip_suffix(comps[-1])
    plain = "__".join(comps)
    if all(_SAFE_PART.fullmatch(c) for c in comps) and len(plain) <= MAX_ID:
        return plain
    slug = re.sub(r"[^A-Za-z0-9-]+", "_", "_".join(comps)).strip("_-")[:60].rstrip("_-") or "submission"
    digest = hashlib.sha256(os.fsencode("/".join(comps))).hexdigest()[:8]
    return f"{slug}-{digest}"


def assign_ids(found):
    """{Found: id}: safe, unique (also ignoring case) and independent of the order of the files."""
    depth = {f: len(f.rel) for f in found}
    while True:
        ids = {f: _id_at(f, depth[f]) for f in found}
        groups = {}
        for f in found:
            groups.setdefault(ids[f].lower(), []).append(f)
        widened = False
        for group in groups.values():
            if len(group) > 1:
                for f in group:
                    if depth[f] < len(f.parts):
                        depth[f] += 1
                        widened = True
        if not widened:
            break
    used, out = set(), {}
    for f in sorted(found, key=lambda f: (ids[f].lower(), os.fsencode(f.real))):
        candidate, n = ids[f], 2
        while candidate.lower() in used:  # the same path twice over (cannot widen): number them
            candidate, n = f"{ids[f]}-{n}", n + 1
        used.add(candidate.lower())
        out[f] = candidate
    return out


def sha256_of(path):
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return None
    return h.hexdigest()


# -- progress -------------------------------------------------------------------
class Progress:
    def __init__(self, total, enabled=True, stream=sys.stderr):
        self.total, self.done, self.start = total, 0, time.monotonic()
        self.enabled, self.stream = enabled, stream
        self.tty = getattr(stream, "isatty", lambda: False)()

    def step(self, label):
        self.done += 1
        if not self.enabled:
            return
        elapsed = time.monotonic() - self.start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        eta = (self.total - self.done) / rate if rate > 0 else 0.0
        width = 24
        filled = int(width * self.done / max(self.total, 1))
        bar = "#" * filled + "-" * (width - filled)
        line = (f"[{bar}] {self.done}/{self.total} {rate * 60:.1f}/min "
                f"ETA {eta:.0f}s  {label[:40]}")
        if self.tty:
            self.stream.write("\r" + line.ljust(100))
            if self.done == self.total:
                self.stream.write("\n")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def end(self):
        if self.enabled and self.tty and self.done < self.total:
            self.stream.write("\n")
            self.stream.flush()


def _write_atomic(path, text):
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_json_atomic(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    _write_atomic(path, json.dumps(_clean(data), indent=2))


def write_result(out, sid, data, cfg):
    """OUT/<id>/feedback.md and feedback.html, then results.json (each written whole, then renamed).

    results.json comes last: it is what says a submission is done (--resume, an
    interrupted batch's grades.csv), so nothing runs between it and the caller's
    record of the result but a few bytecodes, where a Ctrl-C could fall."""
    folder = Path(out) / sid
    folder.mkdir(parents=True, exist_ok=True)
    clean = _clean(data)
    a = clean.get("assignment")
    title = cfg.title(a) if a in cfg.assignments else None
    _write_atomic(folder / feedback.MD_NAME, feedback.markdown(sid, clean, title))
    _write_atomic(folder / feedback.HTML_NAME, feedback.page(sid, clean, title))
    write_json_atomic(folder / "results.json", data)


# -- grading one --------------------------------------------------------------
def grade_one(path, assignment, cfg, forkserver=None, lang=None):
    """results.json dict for one file; never raises (but for KeyboardInterrupt).
    `lang`: the feedback's language (None: each notebook's edition, else grading.yml's)."""
    from autograder.judge import grade

    try:
        result = grade(path, assignment, cfg, forkserver=forkserver, lang=lang)
        data = result.to_gradescope()
        data["assignment"] = result.assignment
        if getattr(result, "internal_errors", None):
            data["internal_errors"] = result.internal_errors
        return data
    except Exception as exc:  # noqa: BLE001 - a judge bug must not stop the batch
        with messages.language(lang):
            output = t("internal_error_batch", error=f"{type(exc).__name__}: {exc}")
        return {
            "score": 0.0, "tests": [], "assignment": assignment, "output": output,
            "internal_errors": [traceback.format_exc()],
            "extra_data": {"status": "internal_error", "internal_errors": 1},
        }


def detect_one(path, cfg):
    """(the assignment the file's code is for, the one its metadata names), each None where
    it does not tell; read with the judge's reader (`autograder.judge.detect`)."""
    from autograder.judge import detect
    from autograder.judge.notebook import load_submission

    try:
        sub = load_submission(path, cfg.assignments, cfg=cfg)
        return detect.detect(sub, cfg), detect.metadata(sub, cfg)
    except Exception:  # noqa: BLE001 - unreadable: grading it gives the reason
        return None, None


def batch_of(own, order):
    """(the batch's assignment, whether it is a tie) from each file's own (`detect.batch_assignment`)."""
    from autograder.judge import detect

    return detect.batch_assignment(own, order), detect.is_tie(own)


def _task(path, assignment, own_first, cfg, forkserver, lang=None):
    """(results, (own, metadata) or None). With own_first the file's own assignment is
    detected first, and graded as where `assignment` is None."""
    seen = detect_one(path, cfg) if own_first else None
    if assignment is None and seen is not None:
        assignment = seen[0]
    return grade_one(path, assignment, cfg, forkserver, lang), seen


def not_graded(reason, assignment, cfg, lang=None):
    """results.json for a file the judge is not given at all (not a regular file)."""
    qs = cfg.questions(assignment) if assignment in cfg.assignments else {}
    with messages.language(lang):
        line, note = t("not_graded_line", reason=reason), t("not_graded_note", reason=reason)
    tests = [{"name": q, "score": 0.0, "max_score": float(p), "output": f"0 / {p:g}\n{line}",
              "visibility": "visible"} for q, p in qs.items()]
    return {"score": 0.0, "tests": tests, "assignment": assignment if qs else None, "output": note,
            "extra_data": {"status": "not_graded"}}


def _reason(data):
    return first_line(data) if not was_graded(data) else ""


# -- the judges -----------------------------------------------------------------
# Each pool process is a trusted judge with its own worker uid (sandbox.worker_uid) and its
# own fork server, so torch is imported once per judge, not once per submission. The
# batch's own process reads no notebook and imports no torch when it has a pool.
_POOL = {}
_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def _pool_init(config_path, parent_pid):
    import atexit

    from autograder.sandbox import pdeath
    from autograder.sandbox.forkserver import ForkServer

    # Ctrl-C reaches the whole process group: the batch (the parent) decides, and kills us.
    pdeath.die_with_parent(parent_pid, ignore_interrupt=True)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _SIGNALS)  # blocked by the parent while it spawned us
    _POOL["cfg"] = config_mod.load(config_path)  # the batch's own grading.yml, not the pool's cwd
    _POOL["forkserver"] = ForkServer()  # its server ignores SIGINT too, and dies with this process
    atexit.register(_POOL["forkserver"].close)


def _pool_ready():
    return os.getpid()


def _pool_detect(path):
    return detect_one(Path(path), _POOL["cfg"])


def _pool_batch(own, order):
    return batch_of(own, order)


def _pool_task(path, assignment, own_first, lang):
    return _task(Path(path), assignment, own_first, _POOL["cfg"], _POOL["forkserver"], lang)


class _Local:
    """One judge: this process, with one fork server (started on first use)."""

    def __init__(self, cfg, stop, lang=None):
        self.cfg, self.stop, self.forkserver, self.lang = cfg, stop, None, lang

    def detect(self, files):
        return {f: detect_one(f.path, self.cfg) for f in files}

    def batch(self, own):
        return batch_of(own, self.cfg.assignments)

    def grade(self, todo, done):
        """Grade [(Found, id, assignment, own_first)], calling done(f, id, results, seen) as each finishes."""
        from autograder.sandbox.forkserver import ForkServer

        for f, sid, a, own_first in todo:
            if self.forkserver is None:
                self.forkserver = ForkServer()
            data, seen = _task(f.path, a, own_first, self.cfg, self.forkserver, self.lang)
            if self.stop:  # interrupted while grading it (pytest stops early): not a result
                raise KeyboardInterrupt
            done(f, sid, data, seen)

    def kill(self):
        if self.forkserver is not None:  # idle now: no clean exit to wait for (its teardown takes a second)
            self.forkserver.proc.kill()
            self.forkserver.close()


class _Pool:
    """The batch's judges. Processes are started with SIGINT and SIGTERM blocked, so
    no Ctrl-C reaches one before it ignores it; they die with this process."""

    def __init__(self, jobs, cfg, stop, lang=None):
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        ctx = multiprocessing.get_context("spawn")  # judges start clean: no torch state forked
        self.jobs, self.cfg, self.stop, self.lang = jobs, cfg, stop, lang
        self.executor = ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_pool_init,
                                            initargs=(str(cfg.path), os.getpid()))

    def start(self):
        """Start every judge now (their torch imports overlap the parent's work)."""
        for _ in range(self.jobs):
            self.submit(_pool_ready)
        return self

    def submit(self, fn, *args):
        old = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
        try:
            return self.executor.submit(fn, *args)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)

    def _submit_all(self, fn, items):
        """{future: item}; an item the pool refuses (a judge died: the pool is broken) maps to None."""
        from concurrent.futures import Future

        futures = {}
        for item, args in items:
            try:
                futures[self.submit(fn, *args)] = item
            except RuntimeError as exc:  # BrokenProcessPool: a judge process died
                failed = Future()
                failed.set_exception(exc)
                futures[failed] = item
        return futures

    def detect(self, files):
        from concurrent.futures import as_completed

        futures = self._submit_all(_pool_detect, [(f, (os.fspath(f.path),)) for f in files])
        seen = {}
        for fut in as_completed(futures):
            f = futures[fut]
            try:
                seen[f] = fut.result()
            except Exception:  # noqa: BLE001 - a judge process died: read it here
                seen[f] = detect_one(f.path, self.cfg)
        return seen

    def batch(self, own):
        try:  # in a judge: this process imports no torch (the judge package does)
            return self.submit(_pool_batch, own, self.cfg.assignments).result()
        except RuntimeError:  # BrokenProcessPool
            return batch_of(own, self.cfg.assignments)

    def grade(self, todo, done):
        """Grade [(Found, id, assignment, own_first)], calling done(f, id, results, seen) as each finishes."""
        from concurrent.futures import as_completed

        futures = self._submit_all(_pool_task, [((f, sid, a, o), (os.fspath(f.path), a, o, self.lang))
                                                for f, sid, a, o in todo])
        try:
            for fut in as_completed(futures):
                f, sid, a, own_first = futures[fut]
                try:
                    data, seen = fut.result()
                except Exception as exc:  # noqa: BLE001 - a judge process died: grade it alone, here
                    data, seen = _task(f.path, a, own_first, self.cfg, None, self.lang)
                    if self.stop:
                        raise KeyboardInterrupt from None
                    data.setdefault("internal_errors", []).append(f"pool: {type(exc).__name__}: {exc}")
                done(f, sid, data, seen)
        except KeyboardInterrupt:
            # What finished but was not yet taken is done too.
            for fut, (f, sid, a, own_first) in futures.items():
                if fut.done() and not fut.cancelled() and fut.exception() is None:
                    data, seen = fut.result()
                    done(f, sid, data, seen, quiet=True)
            raise

    def kill(self):
        """End every judge now (their fork servers follow by the parent-death signal)."""
        procs = dict(getattr(self.executor, "_processes", None) or {})
        for p in procs.values():
            try:
                p.kill()
            except (OSError, AttributeError, ValueError):
                pass
        self.executor.shutdown(wait=False, cancel_futures=True)
        for p in procs.values():
            try:
                p.join(timeout=1)
            except (OSError, AssertionError, ValueError):
                pass


class _Interrupts:
    """The first SIGINT or SIGTERM raises KeyboardInterrupt; later ones are ignored.

    Some code swallows a KeyboardInterrupt (torch's import does, pytest turns it into
    an early return): until the batch reaches its clean-up (`settle`), the interrupt
    is raised again every 0.3 s, from 0.6 s after the first one."""

    AGAIN_AFTER, AGAIN_EVERY = 0.6, 0.3

    def __init__(self):
        self.signum = None
        self.settled = False
        self.old = {}

    def __bool__(self):
        return self.signum is not None

    def _handle(self, signum, frame):
        if self.signum is None:
            self.signum = signum
            if signal.SIGALRM in self.old:
                signal.setitimer(signal.ITIMER_REAL, self.AGAIN_AFTER, self.AGAIN_EVERY)
            raise KeyboardInterrupt

    def _again(self, signum, frame):
        if self.signum is not None and not self.settled:
            raise KeyboardInterrupt

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for s in _SIGNALS:
                self.old[s] = signal.signal(s, self._handle)
            if signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0):  # no timer of the caller's
                self.old[signal.SIGALRM] = signal.signal(signal.SIGALRM, self._again)
        return self

    def settle(self):
        """The clean-up has begun: no more raising, and a second Ctrl-C must not interrupt it."""
        self.settled = True
        if signal.SIGALRM in self.old:
            signal.setitimer(signal.ITIMER_REAL, 0)
        if self.signum is not None:
            for s in _SIGNALS & set(self.old):
                signal.signal(s, signal.SIG_IGN)

    def __exit__(self, *exc):
        self.settle()
        for s, h in self.old.items():
            signal.signal(s, h)
        return False


class BatchInterrupted(KeyboardInterrupt):
    """The batch stopped on SIGINT or SIGTERM; `rows` are the submissions done."""

    def __init__(self, rows, total, signum, out):
        super().__init__(f"interrupted after {len(rows)} of {total}")
        self.rows, self.total, self.signum, self.out = rows, total, signum, out


# -- the batch ------------------------------------------------------------------
def _index(out):
    """{(real path, sha256): (id, data)} of every results.json already under `out`."""
    index = {}
    try:
        entries = sorted(os.listdir(out))
    except OSError:
        return index
    for name in entries:
        target = Path(out) / name / "results.json"
        try:
            data = json.loads(target.read_text(encoding="utf-8"))
            sub = data["extra_data"]["submission"]
            index[(sub["path"], sub["sha256"])] = (name, data)
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return index


def _reusable(data, assignment):
    """A result kept by --resume: graded against the same assignment, no grader error."""
    extra = data.get("extra_data") or {}
    errors = extra.get("internal_errors")
    if errors is None:  # a results.json from before the kit recorded it
        errors = "internal grader error" in str(data.get("output", ""))
    return (data.get("assignment") == assignment and not errors and not data.get("internal_errors")
            and extra.get("status") != grades_csv.INTERNAL_ERROR)


def _note(own, meta, graded_as, why):
    """The note for a notebook whose code is for another assignment than it was graded as
    (one whose metadata names another gets the judge's own note)."""
    if not own or not graded_as or own == graded_as:
        return None
    return t("batch_other_assignment", own=own, graded_as=graded_as, why=t(why))


class Rows(list):
    """grade_batch's [(id, path, results)], with `found`: how many files were found in all
    (more than the rows for a shard) and `assignment`: the batch's (None: each file's own)."""
    found = 0
    assignment = None


def _export_limit(cfg):
    """limits.export_metadata_mb of grading.yml, in bytes."""
    mb = cfg.limits.get("export_metadata_mb")
    if isinstance(mb, bool) or not isinstance(mb, (int, float)) or mb <= 0:
        raise config_mod.ConfigError("grading.yml: limits.export_metadata_mb must be a number > 0")
    return int(mb * 2**20)


def grade_batch(paths, out, assignment=None, resume=False, progress=True, cfg=None, jobs=None, lang=None,
                shard=None):
    """Grade every submission under `paths` into `out`; returns Rows [(id, path, results)] in input order.

    assignment: a name (every file graded against it); BATCH (one detected for the
    whole batch, by majority, over every file found, also with a shard); None (each
    file as its own code says). shard: (I, N) to grade only the I-th of N parts
    (`autograder.grade.shard`) and write OUT/shard.json. Results (results.json,
    feedback.md, feedback.html) are written as each submission finishes, so an
    interrupted batch resumes (`resume=True`) without regrading what is done.
    Raises BatchInterrupted (a KeyboardInterrupt) on SIGINT/SIGTERM, after
    writing what was done.
    """
    cfg = cfg or config_mod.load()
    jobs = max(1, jobs or os.cpu_count() or 1)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / shard_mod.SHARD_NAME).unlink(missing_ok=True)  # written again only when this run completes
    found = collect(paths, out)
    ids = assign_ids(found)  # over every file found: a shard's ids are the single run's
    position = {f: n for n, f in enumerate(found)}
    mine = [f for f in found if shard is None or shard_mod.number(f.rel, shard[1]) == shard[0]]
    mine_set = set(mine)
    people = export.submitters_of(mine, _export_limit(cfg), _say)
    bar = Progress(len(mine), progress)
    judges, stop, results, detected, graded_as = None, _Interrupts(), {}, {}, {}
    why = {BATCH: "why_batch", None: "why_own_code"}.get(assignment, "why_given")
    batch = assignment if assignment not in (BATCH, None) else None

    def with_submission(f, sid, data):
        ed = dict(data.get("extra_data") or {})
        ed["submission"] = {"path": reals[f], "sha256": hashes[f], "id": sid, "found_as": display(f.path)}
        ed.pop("submitters", None)
        if f in people:
            ed["submitters"] = people[f]
        return {**data, "extra_data": ed}

    def done(f, sid, data, seen=None, quiet=False):
        data = dict(data)
        own, meta = seen or detected.get(f) or (None, None)
        with messages.language((data.get("extra_data") or {}).get("language") or lang):
            note = _note(own, meta, graded_as.get(f) or data.get("assignment"), why)
        if note:
            data["output"] = "\n".join(x for x in (note, data.get("output")) if x)
        data = with_submission(f, sid, data)
        write_result(out, sid, data, cfg)
        results[f] = data
        bar.step(sid if not quiet else sid + " (taken at stop)")

    def start(n):
        pool = _Pool(min(jobs, n), cfg, stop, lang)
        try:
            return pool.start()
        except BaseException:
            pool.kill()
            raise

    with stop:
        try:
            # Start the judges first: their start-up overlaps ours. A shard's detection reads every file.
            busy = len(found) if assignment == BATCH else len(mine)
            if jobs > 1 and busy > 1 and not resume:
                judges = start(busy)
            hashes = {f: sha256_of(f.path) if os.path.isfile(f.path) else None for f in found}
            reals = {f: display(f.real) for f in found}
            index = _index(out) if resume else {}
            regular = [f for f in found if hashes[f] is not None]
            pending = [f for f in mine if hashes[f] is not None and (reals[f], hashes[f]) not in index]
            if judges is None:
                n = len(regular) if assignment == BATCH else len(pending)
                judges = start(n) if jobs > 1 and n > 1 else _Local(cfg, stop, lang)
            # Which assignment each is graded as: the batch's needs every file read first (every file
            # found, in a shard too, so each shard finds the single run's); a file's own
            # (assignment=None) is read with its grading, unless --resume must know it before.
            if assignment == BATCH:
                detected.update(judges.detect(regular))
            elif assignment is None and resume:
                detected.update(judges.detect([f for f in regular if f in mine_set]))
            if assignment == BATCH:
                own = [detected[f][0] for f in regular]
                batch, tied = judges.batch(own)
                counts = Counter(a for a in own if a)
                if batch and len(counts) > 1:
                    others = ", ".join(f"{n} {a}" for a, n in counts.most_common() if a != batch)
                    tie = " (a tie: pass --assignment to choose)" if tied else ""
                    _say(f"grade: graded every submission as {batch}, the batch's assignment "
                         f"({counts[batch]} of {len(found)} notebooks){tie}; some look like other assignments "
                         f"({others}): their results.json say so; grade them on their own with --assignment")
                graded_as.update({f: batch for f in found})
            elif assignment is None:
                graded_as.update({f: detected[f][0] for f in detected})
            else:
                graded_as.update({f: assignment for f in found})
            todo = []
            for f in mine:
                sid = ids[f]
                hit = index.get((reals[f], hashes[f])) if hashes[f] else None
                if hit is not None and _reusable(hit[1], graded_as.get(f)):
                    data = with_submission(f, sid, hit[1])
                    if hit[0] != sid or data != hit[1] or not (out / sid / feedback.HTML_NAME).is_file():
                        write_result(out, sid, data, cfg)
                    results[f] = data
                    bar.step(sid + " (done before)")
                elif hashes[f] is None and not os.path.isfile(f.path):
                    done(f, sid, not_graded(f"{display(f.path.name)} is not a regular file", graded_as.get(f), cfg,
                                            lang))
                else:
                    todo.append((f, sid, graded_as.get(f), f not in detected))
            judges.grade(todo, done)
        except KeyboardInterrupt:
            stop.settle()
            if not stop:  # a KeyboardInterrupt of no signal of ours (raised by code): as Ctrl-C
                stop.signum = signal.SIGINT
        finally:  # also on a grader bug: what is done is written
            stop.settle()
            if judges is not None:  # every result is in (or we stop): nothing of theirs is left to finish
                judges.kill()
            bar.end()
            rows = Rows((ids[f], f.path, results[f]) for f in mine if f in results)
            rows.found, rows.assignment = len(found), batch
            if found:
                write_csv(out, rows, cfg)
            if shard is not None and found and not stop:
                shard_mod.write(out, shard, batch, len(found), [ids[f] for f in mine], [position[f] for f in mine])
    if stop:
        raise BatchInterrupted(rows, len(mine), stop.signum, out)
    return rows


def score_table(rows, cfg):
    """A plain-text table: one row per submission, one column per question."""
    lines = []
    by_assignment = {}
    for sid, path, data in rows:
        by_assignment.setdefault(data.get("assignment"), []).append((sid, data))
    for a, items in by_assignment.items():
        qs = list(cfg.questions(a)) if a in cfg.assignments else []
        maxes = {q: p for q, p in cfg.questions(a).items()} if qs else {}
        width = max([len(s) for s, _ in items] + [10])
        lines.append(f"\n{a or '(unknown assignment)'}")
        lines.append("  " + "submission".ljust(width) + "".join(f"{q[:14]:>16}" for q in qs) + f"{'total':>10}")
        for sid, data in items:
            scores = {t["name"]: t["score"] for t in data.get("tests", [])}
            cells = "".join(f"{scores.get(q, 0):>10g}/{maxes[q]:<5g}" for q in qs)
            total = sum(maxes.values()) if maxes else 0
            lines.append("  " + sid.ljust(width) + cells + f"{data.get('score', 0):>5g}/{total:<4g}")
    return "\n".join(lines)


def _usage_error(message):
    _say(f"grade: {message}")
    return 2


def main(args):
    try:
        cfg = config_mod.load()
    except config_mod.ConfigError as exc:
        return _usage_error(str(exc))
    if args.assignment and args.assignment not in cfg.assignments:
        return _usage_error(f"unknown assignment {display(args.assignment, 100)!r}; known: {', '.join(cfg.assignments)}")
    if args.jobs is not None and args.jobs < 1:
        return _usage_error(f"--jobs must be 1 or more (got {args.jobs})")
    try:
        lang = messages.normalize(args.lang) if getattr(args, "lang", None) else None
    except messages.MessageError as exc:
        return _usage_error(str(exc))
    try:
        shard = shard_mod.parse(args.shard) if getattr(args, "shard", None) is not None else None
        _export_limit(cfg)
    except (shard_mod.ShardError, config_mod.ConfigError) as exc:
        return _usage_error(str(exc))
    out = Path(args.out)
    if os.path.lexists(out) and not out.is_dir():
        return _usage_error(f"--out {display(out)} exists and is not a folder")
    if (out / CSV_NAME).is_dir():
        return _usage_error(f"{display(out / CSV_NAME)} is a folder; move it away or choose another --out")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return _usage_error(f"cannot create --out {display(out)}: {exc.strerror or exc}")
    if shard and not args.assignment:
        _say(f"grade: --shard {shard[0]}/{shard[1]} without --assignment: the batch's assignment is detected "
             "over every file found, as one run would (pass --assignment to skip reading them all)")
    try:
        rows = grade_batch(args.submissions, out, args.assignment or BATCH, args.resume, not args.no_progress,
                           cfg, jobs=args.jobs, lang=lang, shard=shard)
    except KeyboardInterrupt as stop:
        signum = getattr(stop, "signum", None) or signal.SIGINT
        done = f" after {len(stop.rows)} of {stop.total} submissions" if isinstance(stop, BatchInterrupted) else ""
        _say(f"\ngrade: stopped ({signal.Signals(signum).name}){done}; what was graded is in "
             f"{display(out)}/<id>/results.json and {display(out / CSV_NAME)}. To grade the rest, run the same "
             f"command again with --resume.")
        return EXIT_INTERRUPTED.get(signum, 130)
    if not rows and shard and rows.found:
        print(f"grade: shard {shard[0]}/{shard[1]} holds none of the {rows.found} submissions found; "
              f"wrote {display(out / shard_mod.SHARD_NAME)}")
        return 0
    if not rows:
        _say("grade: no submissions found")
        return 2
    print(score_table(rows, cfg))
    faults = [(sid, data) for sid, _, data in rows if grades_csv.status(data) == grades_csv.INTERNAL_ERROR]
    failed = [(sid, data) for sid, _, data in rows
              if not was_graded(data) and grades_csv.status(data) != grades_csv.INTERNAL_ERROR]
    for sid, data in failed:
        _say(f"grade: {sid}: {display(_reason(data), 300)}")
    for sid, data in faults:
        _say(f"grade: {sid}: GRADER FAULT (internal_error, not the student's): {grades_csv.reason(data)}")
    of = f" (shard {shard[0]}/{shard[1]} of {rows.found} submissions found)" if shard else ""
    print(f"\nwrote {len(rows)} results{of} to {display(out)}/<id>/results.json (with feedback.md and "
          f"feedback.html) and {display(out / CSV_NAME)}")
    if not shard:  # a shard's report comes after the merge
        from autograder import report

        with messages.language(lang):
            print(report.pointer(out))
    if faults:
        _say(f"grade: the grader itself failed on {len(faults)} of {len(rows)} submissions (status internal_error "
             f"in grades.csv, listed first in the report); fix the kit, then run the same command with --resume "
             f"to regrade them")
        return EXIT_GRADER_FAULT
    if len(failed) == len(rows):
        _say("grade: no submission could be graded")
        return 1
    return 0
