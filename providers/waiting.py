"""Waiting on a future without deafening the process to signals.

Python runs a signal's handler (Ctrl-C's KeyboardInterrupt, a SIGTERM handler) in the main
thread, but the kernel may deliver a process's signal to any of its threads. A main thread
blocked in `Future.result()` without a timeout wakes only when the signal lands on it, so a
Ctrl-C that lands on a worker thread waits for the future: minutes for a build's synthesis chunk.
`result_of` waits in slices of `WAKE_S`, after each of which pending handlers run.
"""

from __future__ import annotations

from concurrent.futures import Future, wait
from typing import TypeVar

T = TypeVar("T")

#: longest a signal's handler waits for a thread blocked in `result_of`
WAKE_S = 0.2


def result_of(future: Future[T]) -> T:
    """`future.result()`, waking every `WAKE_S` so that signal handlers run meanwhile."""
    while not future.done():
        wait([future], timeout=WAKE_S)
    return future.result()
