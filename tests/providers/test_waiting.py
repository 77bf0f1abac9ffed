"""A signal that the kernel hands to another thread still reaches a main thread waiting on a
future: its handler runs while the future is pending, not once it completes."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from typing import Any

import pytest

from providers.waiting import result_of


class Stopped(Exception):
    pass


@pytest.fixture
def handler_raising_stopped() -> Iterator[None]:
    def stop(_signum: int, _frame: Any) -> None:
        raise Stopped

    previous = signal.signal(signal.SIGUSR1, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGUSR1, previous)


def _signal_from_another_thread_then_complete(future: Future[str]) -> threading.Thread:
    """A thread that, once the main thread waits, sends SIGUSR1 to itself (the kernel delivers
    it there, not to the main thread), then completes `future` 2 s later, so that a wait deaf to
    the signal ends too."""

    def run() -> None:
        threading.Event().wait(0.5)
        signal.pthread_kill(threading.get_ident(), signal.SIGUSR1)
        threading.Event().wait(2.0)
        future.set_result("done")

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def _pending_when_stopped(wait_on: Callable[[Future[str]], str]) -> bool:
    future: Future[str] = Future()
    thread = _signal_from_another_thread_then_complete(future)
    try:
        wait_on(future)
    except Stopped:
        return not future.done()
    finally:
        thread.join()
    raise AssertionError("the handler never ran")


@pytest.mark.usefixtures("handler_raising_stopped")
def test_a_signal_landing_on_another_thread_interrupts_the_wait() -> None:
    assert _pending_when_stopped(result_of)


@pytest.mark.usefixtures("handler_raising_stopped")
def test_a_plain_result_waits_for_the_future_first() -> None:
    """The behaviour `result_of` exists for: this test fails the day CPython wakes the main
    thread itself, and `result_of` can go."""
    assert not _pending_when_stopped(lambda future: future.result())


def test_the_result_and_the_exception_are_the_futures() -> None:
    done: Future[int] = Future()
    done.set_result(7)
    assert result_of(done) == 7
    failed: Future[int] = Future()
    failed.set_exception(TimeoutError("the call's own timeout"))
    with pytest.raises(TimeoutError, match="the call's own timeout"):
        result_of(failed)
