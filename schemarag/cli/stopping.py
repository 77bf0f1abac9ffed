"""SIGTERM, the signal `timeout`, systemd, cron wrappers, Kubernetes and CI stop a job with, stops
a command the way Ctrl-C does: `Terminated` is raised where the main thread is, so the same
cleanup runs (a build kills its synthesis processes and keeps its journal, a query's worker is
killed), and the command exits 143 with one line."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable


class Terminated(BaseException):
    """SIGTERM arrived. Not an `Exception`, so that `except Exception` does not swallow it."""


def _terminate(signum: int, _frame: object) -> None:
    raise Terminated(signum)


def raise_on_sigterm() -> Callable[[], None]:
    """Make SIGTERM raise `Terminated` in the main thread; returns what restores the previous
    handler. Outside the main thread (where Python sets no handlers) it changes nothing."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.signal(signal.SIGTERM, _terminate)

    def restore() -> None:
        signal.signal(signal.SIGTERM, previous)

    return restore
