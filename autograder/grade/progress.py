"""What a batch tells the terminal while it runs: one-line messages and the progress bar (stderr)."""

import sys
import time
from typing import TextIO


def say(message: str) -> None:
    """One message on stderr, at once."""
    print(message, file=sys.stderr, flush=True)


class Progress:
    def __init__(self, total: int, enabled: bool = True, stream: TextIO = sys.stderr) -> None:
        self.total, self.done, self.start = total, 0, time.monotonic()
        self.enabled, self.stream = enabled, stream
        self.tty = getattr(stream, "isatty", lambda: False)()

    def step(self, label: str) -> None:
        self.done += 1
        if not self.enabled:
            return
        elapsed = time.monotonic() - self.start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        eta = (self.total - self.done) / rate if rate > 0 else 0.0
        width = 24
        filled = int(width * self.done / max(self.total, 1))
        bar = "#" * filled + "-" * (width - filled)
        line = f"[{bar}] {self.done}/{self.total} {rate * 60:.1f}/min ETA {eta:.0f}s  {label[:40]}"
        if self.tty:
            self.stream.write("\r" + line.ljust(100))
            if self.done == self.total:
                self.stream.write("\n")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def end(self) -> None:
        if self.enabled and self.tty and self.done < self.total:
            self.stream.write("\n")
            self.stream.flush()
