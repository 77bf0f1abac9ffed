"""Run a call in a worker process that is killed when its deadline passes.

SQLite looks for an interrupt between opcodes, and one opcode can run for minutes:
`printf('%.*c', 2000000000, 'x')`, `LIKE` with a long pattern on a long string, `trim` with a
large set. Nothing inside the process can stop such a call, so untrusted queries run in worker
processes: the caller waits until the deadline, and if no answer came, kills the worker. The
next call gets a fresh one.

A worker is a fresh interpreter (`python -c`, running `serve`): it shares none of the
caller's threads, locks or models, and never re-runs the caller's main script, as
multiprocessing's spawn and forkserver would. Workers are kept between calls and used by one
calling thread at a time; up to `MAX_IDLE` idle workers are kept. A call costs well under a
millisecond of inter-process traffic on top of the query; starting a worker costs about 0.3 s
(more on a loaded machine), paid once per calling thread; a killed worker is replaced in the
background.

The deadline is the call's own: it starts when a worker is ready, and a new worker imports the
called function's module (sqlglot, for queries) before it says so. Counting the start made the
first query of a build on a busy 2-core machine time out at 2 s (`SELECT MPG FROM cars_data
ORDER BY Accelerate LIMIT 3`, 3.1 s with the start), and a valid synthetic pair was dropped.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from schemagraph.parent_watch import exit_with_parent

MAX_IDLE = 4
STARTUP_TIMEOUT_S = 60.0
KILL_GRACE_S = 0.2
"""How long after its deadline a worker that has not answered is killed."""
_WORKER_MAIN = "import sys; from schemagraph.sql.worker import serve; serve(*sys.argv[1:])"

T = TypeVar("T")


class DeadlinePassed(Exception):
    """No answer before the deadline; the worker was killed. `waited_s`: from the worker being
    ready to giving up."""

    def __init__(self, waited_s: float) -> None:
        super().__init__(f"no answer after {waited_s:.1f} s")
        self.waited_s = waited_s


class WorkerDied(Exception):
    """The worker process ended without answering (killed from outside, or crashed)."""


class _Worker:
    def __init__(self, preload: str) -> None:
        worker_reads, caller_writes = os.pipe()
        caller_reads, worker_writes = os.pipe()
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        self._process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                _WORKER_MAIN,
                str(worker_reads),
                str(worker_writes),
                preload,
                str(os.getpid()),
            ],
            pass_fds=(worker_reads, worker_writes),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            env=env,
        )
        os.close(worker_reads)
        os.close(worker_writes)
        self._sender = Connection(caller_writes, readable=False)
        self._receiver = Connection(caller_reads, writable=False)
        # The worker says when it has imported what calls need.
        if not self._receiver.poll(STARTUP_TIMEOUT_S):
            self.kill()
            raise WorkerDied(f"it did not start within {STARTUP_TIMEOUT_S:g} s")
        try:
            self._receiver.recv()
        except EOFError:
            raise WorkerDied(f"it did not start: exit code {self._process.wait()}") from None

    def call(self, function: Callable[..., T], args: tuple[Any, ...], timeout_s: float) -> T:
        ready = time.monotonic()
        deadline = ready + timeout_s
        try:
            self._sender.send((function, (*args, deadline)))
        except OSError:
            raise WorkerDied(f"exit code {self._process.poll()}") from None
        if not self._receiver.poll(max(0.0, deadline - time.monotonic()) + KILL_GRACE_S):
            raise DeadlinePassed(time.monotonic() - ready)
        try:
            ok, value = self._receiver.recv()
        except EOFError:
            raise WorkerDied(f"exit code {self._process.wait(1.0)}") from None
        if not ok:
            raise value
        return value

    def kill(self) -> None:
        """Kill at once; `wait` reaps the process (it may take a moment to free its memory)."""
        self._process.kill()
        self._sender.close()
        self._receiver.close()

    def wait(self) -> None:
        self._process.wait()

    def detach(self) -> None:
        """Close this process's ends of the pipes, leaving the worker to whoever else has them
        (a forked child's copy of its parent's worker)."""
        self._sender.close()
        self._receiver.close()


_idle: list[_Worker] = []
_lock = threading.Lock()


def _forget_workers_after_fork() -> None:
    """A forked child (a build's synthesis process) starts its own workers: the parent's
    processes stay the parent's, and the child closes its copies of their pipes, so that a worker
    sees the end of its pipe when the parent ends."""
    global _lock
    _lock = threading.Lock()
    for worker in _idle:
        with contextlib.suppress(OSError):
            worker.detach()
    _idle.clear()


os.register_at_fork(after_in_child=_forget_workers_after_fork)


def call_with_deadline(function: Callable[..., T], args: tuple[Any, ...], timeout_s: float) -> T:
    """`function(*args, deadline)` in a worker process, where `deadline` is the
    `time.monotonic()` value by which it should return, `timeout_s` after a worker is ready
    (both must pickle; `function` by reference).

    Raises `DeadlinePassed` if no answer came `KILL_GRACE_S` after the deadline, `WorkerDied`
    if the worker ended without one, and whatever `function` raised.
    """
    worker = _take(function.__module__)
    try:
        result = worker.call(function, args, timeout_s)
    except BaseException as exc:
        if not isinstance(exc, Exception):
            worker.kill()  # the caller was interrupted mid-call (Ctrl-C, SIGTERM): it is leaving
        elif not isinstance(exc, DeadlinePassed | WorkerDied):
            _give_back(worker)  # the function raised; the worker is idle again
        else:
            worker.kill()  # stuck or dead
            replace = threading.Thread(
                target=_replace, args=(worker, function.__module__), daemon=True
            )
            replace.start()
        raise
    _give_back(worker)
    return result


def _take(preload: str) -> _Worker:
    with _lock:
        if _idle:
            return _idle.pop()
    return _Worker(preload)


def _give_back(worker: _Worker) -> None:
    with _lock:
        if len(_idle) < MAX_IDLE:
            _idle.append(worker)
            return
    worker.kill()
    worker.wait()


def _replace(killed: _Worker, preload: str) -> None:
    """Reap a killed worker and start a new one, off the caller's time."""
    killed.wait()
    with contextlib.suppress(OSError, WorkerDied):  # the next call starts one and says why
        _give_back(_Worker(preload))


def serve(reads: str, writes: str, preload: str = "", caller: str = "") -> None:
    """The worker's loop, on the pipes' file descriptors: imports `preload`, says it is ready,
    then runs one call at a time until the caller (pid `caller`) closes its end or is gone."""
    # Ctrl-C and SIGTERM (sent to the whole group by a terminal, `timeout`, systemd) are the
    # caller's to handle: it kills the worker of a call it abandons
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if caller:
        # a query can run for minutes between two reads of the pipe: watch the caller meanwhile
        # (a thread, not the kernel's death signal: the caller may start workers from a thread
        # that ends at once, `_replace`)
        exit_with_parent(int(caller))
    receiver = Connection(int(reads), writable=False)
    sender = Connection(int(writes), readable=False)
    if preload:
        with contextlib.suppress(ImportError):  # the call will say why, as if not preloaded
            importlib.import_module(preload)
    try:
        sender.send(None)
        while True:
            try:
                function, args = receiver.recv()
            except EOFError:
                return
            try:
                reply: tuple[bool, Any] = (True, function(*args))
            except Exception as exc:
                reply = (False, exc)
            sender.send(reply)
    except BrokenPipeError:  # the caller is gone (it ended while this worker started or ran)
        return
