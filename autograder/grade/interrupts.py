"""Ctrl-C and SIGTERM during a batch: the batch stops at once, writes what was done, and says so.

The exit statuses the `grade` command ends with are here too.
"""

import signal
import threading
from types import FrameType
from typing import Any

SIGNALS = {signal.SIGINT, signal.SIGTERM}
EXIT_INTERRUPTED = {signal.SIGINT: 130, signal.SIGTERM: 143}
EXIT_GRADER_FAULT = 3  # the kit failed on at least one submission (status internal_error)


class Interrupts:
    """The first SIGINT or SIGTERM raises KeyboardInterrupt; later ones are ignored.

    Some code swallows a KeyboardInterrupt (torch's import does, pytest turns it into
    an early return): until the batch reaches its clean-up (`settle`), the interrupt
    is raised again every 0.3 s, from 0.6 s after the first one."""

    AGAIN_AFTER, AGAIN_EVERY = 0.6, 0.3

    def __init__(self) -> None:
        self.signum: int | None = None
        self.settled = False
        self.old: dict[int, Any] = {}

    def __bool__(self) -> bool:
        return self.signum is not None

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is None:
            self.signum = signum
            if signal.SIGALRM in self.old:
                signal.setitimer(signal.ITIMER_REAL, self.AGAIN_AFTER, self.AGAIN_EVERY)
            raise KeyboardInterrupt

    def _again(self, signum: int, frame: FrameType | None) -> None:
        if self.signum is not None and not self.settled:
            raise KeyboardInterrupt

    def __enter__(self) -> "Interrupts":
        if threading.current_thread() is threading.main_thread():
            for s in SIGNALS:
                self.old[s] = signal.signal(s, self._handle)
            if signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0):  # no timer of the caller's
                self.old[signal.SIGALRM] = signal.signal(signal.SIGALRM, self._again)
        return self

    def settle(self) -> None:
        """The clean-up has begun: no more raising, and a second Ctrl-C must not interrupt it."""
        self.settled = True
        if signal.SIGALRM in self.old:
            signal.setitimer(signal.ITIMER_REAL, 0)
        if self.signum is not None:
            for s in SIGNALS & set(self.old):
                signal.signal(s, signal.SIG_IGN)

    def __exit__(self, *exc: object) -> bool:
        self.settle()
        for s, h in self.old.items():
            signal.signal(s, h)
        return False


class BatchInterrupted(KeyboardInterrupt):
    """The batch stopped on SIGINT or SIGTERM; `rows` are the submissions done."""

    def __init__(self, rows: list[Any], total: int, signum: int, out: Any) -> None:
        super().__init__(f"interrupted after {len(rows)} of {total}")
        self.rows, self.total, self.signum, self.out = rows, total, signum, out
