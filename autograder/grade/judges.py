"""The judges: what each runs (grade one file, detect its assignment) and where (this process or a pool).

Each pool process is a trusted judge with its own worker uid (sandbox.worker_uid) and its
own fork server, so torch is imported once per judge, not once per submission. The
batch's own process reads no notebook and imports no torch when it has a pool.
"""

import os
import signal
import traceback
from pathlib import Path

from autograder import config as config_mod
from autograder import messages
from autograder.grade.interrupts import SIGNALS
from autograder.messages import t


# -- grading one --------------------------------------------------------------
def grade_one(path, assignment, cfg, forkserver=None, lang=None, keep_public=False):
    """results.json dict for one file; never raises (but for KeyboardInterrupt).
    `lang`: the feedback's language (None: each notebook's edition, else grading.yml's);
    `keep_public`: the failing public checks too, as data (`judge.grade`)."""
    from autograder.judge import grade

    try:
        result = grade(path, assignment, cfg, forkserver=forkserver, lang=lang, keep_public=keep_public)
        data = result.to_gradescope()
        data["assignment"] = result.assignment
        if result.internal_errors:
            data["internal_errors"] = result.internal_errors
        return data
    except Exception as exc:  # noqa: BLE001 - a judge bug must not stop the batch
        with messages.language(lang):
            output = t("internal_error_batch", error=f"{type(exc).__name__}: {exc}")
        return {
            "score": 0.0,
            "tests": [],
            "assignment": assignment,
            "output": output,
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


def _task(path, assignment, own_first, cfg, forkserver, lang=None, keep_public=False):
    """(results, (own, metadata) or None). With own_first the file's own assignment is
    detected first, and graded as where `assignment` is None."""
    seen = detect_one(path, cfg) if own_first else None
    if assignment is None and seen is not None:
        assignment = seen[0]
    return grade_one(path, assignment, cfg, forkserver, lang, keep_public), seen


# -- the judges -----------------------------------------------------------------
_POOL = {}  # this pool process's own: its grading.yml and its fork server


def _pool_init(config_path, parent_pid):
    import atexit

    from autograder.sandbox import pdeath
    from autograder.sandbox.forkserver import ForkServer

    # Ctrl-C reaches the whole process group: the batch (the parent) decides, and kills us.
    pdeath.die_with_parent(parent_pid, ignore_interrupt=True)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, SIGNALS)  # blocked by the parent while it spawned us
    _POOL["cfg"] = config_mod.load(config_path)  # the batch's own grading.yml, not the pool's cwd
    _POOL["forkserver"] = ForkServer()  # its server ignores SIGINT too, and dies with this process
    atexit.register(_POOL["forkserver"].close)


def _pool_ready():
    return os.getpid()


def _pool_detect(path):
    return detect_one(Path(path), _POOL["cfg"])


def _pool_batch(own, order):
    return batch_of(own, order)


def _pool_task(path, assignment, own_first, lang, keep_public):
    return _task(Path(path), assignment, own_first, _POOL["cfg"], _POOL["forkserver"], lang, keep_public)


class Local:
    """One judge: this process, with one fork server (started on first use)."""

    def __init__(self, cfg, stop, lang=None, keep_public=False):
        self.cfg, self.stop, self.forkserver, self.lang = cfg, stop, None, lang
        self.keep_public = keep_public

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
            data, seen = _task(f.path, a, own_first, self.cfg, self.forkserver, self.lang, self.keep_public)
            if self.stop:  # interrupted while grading it (pytest stops early): not a result
                raise KeyboardInterrupt
            done(f, sid, data, seen)

    def kill(self):
        if self.forkserver is not None:  # idle now: no clean exit to wait for (its teardown takes a second)
            self.forkserver.proc.kill()
            self.forkserver.close()


class Pool:
    """The batch's judges. Processes are started with SIGINT and SIGTERM blocked, so
    no Ctrl-C reaches one before it ignores it; they die with this process."""

    def __init__(self, jobs, cfg, stop, lang=None, keep_public=False):
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        ctx = multiprocessing.get_context("spawn")  # judges start clean: no torch state forked
        self.jobs, self.cfg, self.stop, self.lang = jobs, cfg, stop, lang
        self.keep_public = keep_public
        self.executor = ProcessPoolExecutor(
            jobs, mp_context=ctx, initializer=_pool_init, initargs=(str(cfg.path), os.getpid())
        )

    def start(self):
        """Start every judge now (their torch imports overlap the parent's work)."""
        for _ in range(self.jobs):
            self.submit(_pool_ready)
        return self

    def submit(self, fn, *args):
        old = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
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

        futures = self._submit_all(
            _pool_task,
            [((f, sid, a, o), (os.fspath(f.path), a, o, self.lang, self.keep_public)) for f, sid, a, o in todo],
        )
        try:
            for fut in as_completed(futures):
                f, sid, a, own_first = futures[fut]
                try:
                    data, seen = fut.result()
                except Exception as exc:  # noqa: BLE001 - a judge process died: grade it alone, here
                    data, seen = _task(f.path, a, own_first, self.cfg, None, self.lang, self.keep_public)
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
