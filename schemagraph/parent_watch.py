"""Worker processes that end on their own when the process that started them is gone.

A worker blocked on a pipe or a queue does not notice that its parent was killed (SIGKILL, the
out-of-memory killer): a sibling still holds the other end of the pipe, so no end of file ever
comes, and the worker lives on under init, holding whatever it inherited (memory, a store's build
lock). `exit_with_parent` makes a worker end within `POLL_S` of its parent:

- a daemon thread compares `os.getppid()` with the parent's pid every `POLL_S` seconds (an
  orphan is adopted by init or a subreaper, so its parent pid changes) and ends the process with
  `os._exit`. It works on every POSIX system and whichever thread started the worker, but needs
  the GIL, so it waits for a C call that holds the GIL to return;
- with `kernel=True`, on Linux, `prctl(PR_SET_PDEATHSIG, SIGKILL)` as well: the kernel kills the
  worker when its parent goes, at once and whatever the worker is doing. The kernel sends it when
  the *thread* that forked the worker ends, so it is for workers forked by a thread that outlives
  them (a process pool forks from the thread that submits to it), never for processes started
  from short-lived threads (the SQL workers' replacements are).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time

POLL_S = 0.5
PR_SET_PDEATHSIG = 1


def exit_with_parent(parent_pid: int, *, kernel: bool = False) -> None:
    """End this process (exit status 1) when `parent_pid` is no longer its parent; call it first
    thing in the worker. `kernel`: also ask Linux to SIGKILL this process when the thread that
    forked it ends (see the module docstring). Called in the process `parent_pid` itself (an
    app factory called in-process, say), it does nothing."""
    if parent_pid == os.getpid():
        return
    if kernel and sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent_pid:  # the parent ended before the watch began
        os._exit(1)
    threading.Thread(target=_watch, args=(parent_pid,), name="parent-watch", daemon=True).start()


def _watch(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(POLL_S)
    os._exit(1)
