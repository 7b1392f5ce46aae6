"""Die with the parent: the kernel's parent-death signal (standard library only).

A batch's judges (its pool processes) and each judge's fork server must not
outlive what started them: a `kill -9` of `grade` runs no Python clean-up, so
only the kernel can end them. `die_with_parent()` asks it (Linux
`prctl(PR_SET_PDEATHSIG, SIGKILL)`) to send SIGKILL to this process when the
thread that started it ends. Elsewhere (no prctl) it does nothing and says so.

The signal is armed only from the moment of the call. A parent that died
before it is caught either by its pid (`os.getppid()` is no longer it) or, for
a process that talks to its parent over a socket (the fork server), by that
socket's end of file.
"""

import ctypes
import os
import signal
import socket
from typing import Any

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _prctl() -> Any:  # a ctypes foreign function, or None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl
    except (OSError, AttributeError):
        return None


def die_with_parent(
    parent_pid: int | None = None, ignore_interrupt: bool = False, peer_fd: int | None = None, sig: int = signal.SIGKILL
) -> bool:
    """Have the kernel send `sig` to this process when its parent dies; True if armed.

    parent_pid: the parent this process expects; if it is already gone (this
    process was re-parented), the process ends now with `sig`.
    peer_fd: a socket to the parent; if the parent's end is already closed (end of
    file, nothing read from it), the process ends now with `sig`.
    ignore_interrupt: ignore SIGINT (Ctrl-C reaches the whole foreground process
    group; a child whose parent decides when it stops must not act on it itself).
    """
    if ignore_interrupt:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    prctl = _prctl()
    armed = False
    if prctl is not None:
        prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
        prctl.restype = ctypes.c_int
        armed = prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0
    if parent_pid is not None and os.getppid() != parent_pid:
        os.kill(os.getpid(), sig)
    if peer_fd is not None and _peer_closed(peer_fd):
        os.kill(os.getpid(), sig)
    return armed


def _peer_closed(fd: int) -> bool:
    """Whether the other end of the socket `fd` is closed (peeks: consumes nothing)."""
    try:
        sock = socket.socket(fileno=os.dup(fd))
    except OSError:
        return False
    try:
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except (BlockingIOError, InterruptedError):
        return False
    except OSError:
        return True  # ECONNRESET and the like: the parent is gone
    finally:
        sock.close()
