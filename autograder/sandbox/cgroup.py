"""A control group per worker, where the judge may make one (root, a writable hierarchy).

It adds what rlimits cannot: a process/thread cap for the whole tree
(pids.max, also counting what a double fork or `setsid` took out of the
worker's process group), a memory cap for the whole tree (RLIMIT_DATA is per
process), the tree's peak memory, whether the kernel killed it for memory,
and a way to kill every process it left behind. cgroup v1 (a `pids` and a
`memory` hierarchy) and v2 (the unified tree, where `pids` and `memory` can be
enabled below the judge's own group) are both handled; anywhere else
`WorkerGroup.create` returns None and the rlimits alone apply.
"""

import os
import signal
import time
from collections.abc import Callable, Iterable
from itertools import count
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
_SEQ = count()
_LAYOUT: dict[str, list[tuple[str, Path]]] = {}


def _own_paths() -> dict[str, str]:
    """{controller or "": path of this process's group} from /proc/self/cgroup."""
    out: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return out
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) == 3:
            for c in parts[1].split(",") if parts[1] else [""]:
                out[c] = parts[2]
    return out


def _probe(parent: Path, setup: Callable[[Path], object] | None = None) -> bool:
    """Whether a group can be made (and removed) under `parent`."""
    probe = parent / f"kit-probe-{os.getpid()}"
    try:
        probe.mkdir()
    except OSError:
        return False
    try:
        if setup:
            setup(probe)
        return True
    except OSError:
        return False
    finally:
        try:
            probe.rmdir()
        except OSError:
            pass


def layout() -> list[tuple[str, Path]]:
    """[(kind, parent directory)] where worker groups go: kind "v1-pids",
    "v1-memory" or "v2". Empty where no group can be made. Cached."""
    if "found" in _LAYOUT:
        return _LAYOUT["found"]
    found: list[tuple[str, Path]] = []
    if os.geteuid() == 0 and ROOT.is_dir():
        own = _own_paths()
        for controller in ("pids", "memory"):
            base = ROOT / controller
            if controller in own and (base / "cgroup.procs").exists():
                parent = base / own[controller].lstrip("/")
                if _probe(parent):
                    found.append((f"v1-{controller}", parent))
        if not found and (ROOT / "cgroup.controllers").exists() and "" in own:
            parent = ROOT / own[""].lstrip("/")
            try:
                (parent / "cgroup.subtree_control").write_text("+pids +memory")
            except OSError:
                pass
            if _probe(parent, lambda p: (p / "pids.max").write_text("1")):
                found.append(("v2", parent))
    _LAYOUT["found"] = found
    for _, parent in found:
        sweep(parent)
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep(parent: Path) -> None:
    """Remove the groups that judges which are gone left under `parent`
    (`kit-<pid>-<n>`, `kit-probe-<pid>`): a judge killed with SIGKILL never
    removes its own. Groups still holding a process are left alone."""
    try:
        names = [d.name for d in parent.iterdir() if d.name.startswith("kit-")]
    except OSError:
        return
    for name in names:
        owner = name.split("-")[2] if name.startswith("kit-probe-") else name.split("-")[1]
        if not owner.isdigit() or _alive(int(owner)):
            continue
        group = parent / name
        if not _read(group / "cgroup.procs").split():
            try:
                group.rmdir()
            except OSError:
                pass


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


class WorkerGroup:
    """The groups of one worker (one per hierarchy). The worker joins them
    itself (`join`, before dropping root); the judge reads and removes them."""

    def __init__(self, dirs: list[tuple[str, Path]]) -> None:
        self.dirs = dirs  # [(kind, directory)]

    @classmethod
    def create(cls, processes: int, memory_mb: int) -> "WorkerGroup | None":
        dirs: list[tuple[str, Path]] = []
        name = f"kit-{os.getpid()}-{next(_SEQ)}"
        try:
            for kind, parent in layout():
                d = parent / name
                d.mkdir()
                dirs.append((kind, d))
                if kind in ("v1-pids", "v2"):
                    (d / "pids.max").write_text(str(processes))
                if kind == "v1-memory":
                    (d / "memory.limit_in_bytes").write_text(str(memory_mb << 20))
                if kind == "v2":
                    (d / "memory.max").write_text(str(memory_mb << 20))
                    if (d / "memory.swap.max").exists():
                        (d / "memory.swap.max").write_text("0")
        except OSError:
            cls(dirs).remove()
            return None
        return cls(dirs) if dirs else None

    @property
    def paths(self) -> list[str]:
        return [str(d) for _, d in self.dirs]

    @staticmethod
    def join(paths: Iterable[str]) -> None:
        """In the new worker, before any student code: move this process in.
        Best effort: where the kernel refuses, the rlimits still apply."""
        for p in paths:
            try:
                with open(os.path.join(p, "cgroup.procs"), "w") as f:
                    f.write(str(os.getpid()))
            except OSError:
                pass

    def _file(self, *names: str) -> Path | None:
        for _, d in self.dirs:
            for n in names:
                if (d / n).exists():
                    return d / n
        return None

    def _pids(self) -> set[int]:
        """Process ids (not threads) in the group now."""
        return {int(x) for _, d in self.dirs for x in _read(d / "cgroup.procs").split() if x.isdigit()}

    def processes(self) -> int:
        """Processes (not threads) in the group now."""
        return len(self._pids())

    def tasks(self) -> int | None:
        """Threads and processes in the group now (None where unknown)."""
        f = self._file("pids.current")
        try:
            return int(_read(f)) if f else None
        except ValueError:
            return None

    def hit_process_limit(self) -> bool:
        """Whether the group is at its process cap: a fork refused by pids.max,
        or as many tasks as pids.max (RLIMIT_NPROC, the same number, may refuse
        the fork first)."""
        f = self._file("pids.events")
        for line in _read(f).splitlines() if f else []:
            k, _, v = line.partition(" ")
            if k == "max" and v.strip().isdigit() and int(v) > 0:
                return True
        f, now = self._file("pids.max"), self.tasks()
        cap = _read(f).strip() if f else ""
        return cap.isdigit() and now is not None and now >= int(cap)

    def peak_mb(self) -> float | None:
        """Peak memory charged to the group: what the worker tree allocated
        (pages it shares with the fork server are charged there)."""
        f = self._file("memory.max_usage_in_bytes", "memory.peak")
        try:
            return round(int(_read(f)) / (1 << 20), 1) if f else None
        except ValueError:
            return None

    def usage_bytes(self) -> int | None:
        """Memory charged to the group now (None without a memory controller)."""
        f = self._file("memory.usage_in_bytes", "memory.current")
        try:
            return int(_read(f)) if f else None
        except ValueError:
            return None

    def lower_memory_limit(self, limit: int) -> bool:
        """Lower the group's memory limit to `limit` bytes (never raise it): a call's cap
        (`sandbox.memcap`). Whether the kernel now holds it, read back."""
        f = self._file("memory.limit_in_bytes", "memory.max")
        if f is None:
            return False
        now = _read(f).strip()
        if now.isdigit() and int(now) <= limit:
            return True
        try:
            f.write_text(str(limit))
        except OSError:
            return False
        now = _read(f).strip()
        return now.isdigit() and int(now) <= limit

    def pids(self) -> set[int]:
        """Process ids (not threads) in the group now."""
        return self._pids()

    def oom_killed(self) -> bool:
        """Whether the kernel killed a process of the group for memory."""
        for n, key in (("memory.oom_control", "oom_kill"), ("memory.events", "oom_kill")):
            f = self._file(n)
            for line in _read(f).splitlines() if f else []:
                k, _, v = line.partition(" ")
                if k == key and v.strip().isdigit() and int(v) > 0:
                    return True
        return False

    def reached_memory_limit(self) -> bool:
        """Whether the group's memory reached its limit (the kernel then reclaims the group's
        file pages, which can slow it to a crawl before any process is killed)."""
        f = self._file("memory.failcnt")
        if f is not None:
            count = _read(f).strip()
            return count.isdigit() and int(count) > 0
        f = self._file("memory.events")
        for line in _read(f).splitlines() if f else []:
            k, _, v = line.partition(" ")
            if k == "max" and v.strip().isdigit() and int(v) > 0:
                return True
        return False

    def kill_all(self, wait: float = 2.0) -> bool:
        """SIGKILL every process in the group, including ones that left the
        worker's process group, until none is left (or `wait` seconds)."""
        deadline = time.monotonic() + wait
        while True:
            for _, d in self.dirs:
                kill = d / "cgroup.kill"
                if kill.exists():
                    try:
                        kill.write_text("1")
                    except OSError:
                        pass
            pids = self._pids()
            if not pids or time.monotonic() > deadline:
                return not pids
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.02)

    def remove(self) -> None:
        """Remove every group of this worker (after `kill_all`): retried for up to
        2 s each, since a killed task leaves a group only once it is reaped."""
        for _, d in reversed(self.dirs):
            for _ in range(100):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)
