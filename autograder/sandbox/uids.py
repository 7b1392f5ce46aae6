"""One unprivileged uid per judge process, for its workers (root only)."""

import fcntl
import os
import tempfile
from pathlib import Path

UID_BASE = 61000
_UID: dict[str, int] = {}  # uid: this process's worker uid, fd: its lock file


def worker_uid() -> int:
    """This judge process's own unprivileged uid for its workers (root only).

    Held with a lock file for the life of the process, so that concurrent
    judges (a pool, or two batches on one machine) never share a uid: a
    student's `kill(-1, SIGKILL)` then reaches no other submission's worker.
    """
    if "uid" in _UID:
        return _UID["uid"]
    locks = Path(tempfile.gettempdir()) / "kit-worker-uids"
    locks.mkdir(mode=0o700, exist_ok=True)
    for uid in range(UID_BASE, UID_BASE + 4096):
        fd = os.open(locks / str(uid), os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        _UID.update(uid=uid, fd=fd)  # the lock lasts as long as this process
        return uid
    raise RuntimeError("no free worker uid")
