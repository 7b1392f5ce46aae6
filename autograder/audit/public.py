"""Which public checks (what `grader.check` runs) flag each notebook, on a fresh load as `check` runs them.

The audit's own column reads each entry's from its grading instead (the same worker, after
the last verdict: `grade_batch(keep_public=True)`, one load an entry); this runs them for
notebooks graded nowhere (the kit's tests' references and templates).

`public_failures(paths, cfg)` runs each notebook's public tests the way
`python -m autograder check` does (the tests from the notebook's metadata, run
beside its code in the sandboxed worker through `Remote.public`; this process
imports no student code) and returns, per path, the failing checks as
`["question/test_name", ...]` (empty when every public check passes), or
`["(not run: reason)"]`. Notebooks are checked by a small pool of judge
processes (one per CPU, each with its own fork server, as `grade` does), one
worker per notebook.
"""

import os
import signal

from autograder import config as config_mod

_STATE = {}


def _init(config_path, parent_pid):
    import atexit

    from autograder.sandbox import pdeath
    from autograder.sandbox.forkserver import ForkServer

    pdeath.die_with_parent(parent_pid, ignore_interrupt=True)
    _STATE["cfg"] = config_mod.load(config_path)
    _STATE["forkserver"] = ForkServer()
    atexit.register(_STATE["forkserver"].close)


def failures(path, cfg, forkserver=None):
    """The failing public checks of one notebook: ["question/test", ...] ([] when all pass)."""
    from autograder import check
    from autograder.judge import public_failed

    try:
        _, _, results = check.run_checks(path, cfg, forkserver=forkserver)
    except Exception as exc:  # noqa: BLE001 - unreadable or a dead worker: that is the answer
        return [f"(not run: {type(exc).__name__}: {str(getattr(exc, 'reason', exc))[:200]})"]
    return public_failed(results)  # listed as the judge lists those it runs (`grade(keep_public=True)`)


def _task(path):
    return failures(path, _STATE["cfg"], _STATE["forkserver"])


def public_failures(paths, cfg=None, jobs=None):
    """{path: failing public checks} for every notebook in `paths`."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    cfg = cfg or config_mod.load()
    paths = [os.fspath(p) for p in paths]
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(paths)))
    if jobs == 1 or len(paths) < 2:
        from autograder.sandbox.forkserver import ForkServer

        server = ForkServer()
        try:
            return {p: failures(p, cfg, server) for p in paths}
        finally:
            server.close()
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        pool = ProcessPoolExecutor(
            jobs,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_init,
            initargs=(str(cfg.path), os.getpid()),
        )
        futures = {p: pool.submit(_task, p) for p in paths}
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
    try:
        out = {}
        for p, fut in futures.items():
            try:
                out[p] = fut.result()
            except Exception as exc:  # noqa: BLE001 - a judge process died: check it here
                out[p] = (
                    failures(p, cfg)
                    if "BrokenProcessPool" not in type(exc).__name__
                    else [f"(not run: {type(exc).__name__})"]
                )
        return out
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
