"""A memory cap on one call, read back from the kernel (judge side; standard library only).

The judge asks a worker to hold at most `cap` bytes of data beyond a bare worker (torch
imported, no cell run) for one call. The worker lowers its own hard RLIMIT_DATA (a hard
limit no unprivileged process raises again) before the call's student code runs, and asks
the judge to look: the judge reads, from /proc (the kernel's word, never the worker's), the
hard data limit of every process of the worker (its control group, else its process tree)
and accepts only where each one is at most the cap it asked. A private allocation past it
(torch's CPU allocator, Python's) then fails inside the worker: MemoryError or torch's
RuntimeError, the student's.

RLIMIT_DATA does not count shared mappings (an anonymous `mmap`, a file in /dev/shm): where a
control group holds the worker, its memory limit is lowered for the call too (`group_limit`),
so memory taken that way past the cap and a slack ends in the group's OOM kill, worded as
the same cap. Without a control group (a judge that is not root) that road stays open.
The worker is retired after a capped call (its hard limit stays lowered).
"""

import os
from pathlib import Path

KB = 1024
MB = 1 << 20
# What the control group allows beyond the cap: its charges are not the data limit's (pages
# a bare worker shares with the fork server are charged to the worker once it writes them;
# a garbage collection writes many), so it only stops what RLIMIT_DATA cannot see.
GROUP_SLACK_MB = 256


def data_bytes(pid: int) -> int | None:
    """The process's data size (VmData: private writable mappings, what RLIMIT_DATA counts),
    from /proc; None where unreadable (gone, or /proc hidden)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmData:"):
                return int(line.split()[1]) * KB
    except (OSError, ValueError, IndexError):
        return None
    return None


def hard_data_limit(pid: int) -> int | None:
    """The process's hard RLIMIT_DATA in bytes from /proc/PID/limits (-1: unlimited);
    None where unreadable."""
    try:
        for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
            if line.startswith("Max data size"):
                hard = line[len("Max data size") :].split()[1]
                return -1 if hard == "unlimited" else int(hard)
    except (OSError, ValueError, IndexError):
        return None
    return None


def descendants(pid: int) -> set[int]:
    """`pid` and every process below it, from /proc/PID/task/*/children."""
    found, todo = set(), [pid]
    while todo:
        p = todo.pop()
        if p in found:
            continue
        found.add(p)
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                todo += [int(c) for c in Path(f"/proc/{p}/task/{tid}/children").read_text().split()]
            except (OSError, ValueError):
                pass
    return found


def uncapped(pids: set[int], limit: int) -> list[int]:
    """The processes among `pids` whose hard data limit the kernel does not hold at most
    `limit` bytes (unreadable counts as not held): [] when every one is capped."""
    out = []
    for pid in sorted(pids):
        hard = hard_data_limit(pid)
        if hard is None and not os.path.exists(f"/proc/{pid}"):
            continue  # ended since it was listed: it computes nothing
        if hard is None or hard < 0 or hard > limit:
            out.append(pid)
    return out


def cap_bytes(bare: int, cap_mb: float) -> int:
    """The hard RLIMIT_DATA of a capped call: a bare worker's data size plus the cap."""
    return int(bare + cap_mb * MB)
