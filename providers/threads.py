"""How many threads this process's numeric libraries may use."""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import threading
from collections.abc import Iterator

from threadpoolctl import threadpool_limits

#: held by a server's loads in the background (torch for the embedder, a catalog), so that they
#: run one after the other: together they share the interpreter lock and both finish late
BACKGROUND_LOAD = threading.Lock()


@contextlib.contextmanager
def limited_threads(threads: int) -> Iterator[None]:
    """At most `threads` OpenMP threads in this process meanwhile, torch's included.

    threadpoolctl alone does not hold torch: its first parallel operation in a thread resets
    OpenMP to torch's own setting (every core unless `torch.set_num_threads` was called), so
    an embedding that starts inside the limit runs on every core anyway, and its idle OpenMP
    thread spins between operations. torch, when installed, is set too and restored after."""
    with threadpool_limits(limits=threads, user_api="openmp"):
        if importlib.util.find_spec("torch") is None:
            yield
            return
        torch = importlib.import_module("torch")
        before = torch.get_num_threads()
        torch.set_num_threads(threads)
        try:
            yield
        finally:
            torch.set_num_threads(before)
