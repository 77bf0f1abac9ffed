"""`limited_threads` holds torch to the limit, where threadpoolctl alone does not."""

from __future__ import annotations

import threading

import pytest

from providers.threads import limited_threads

torch = pytest.importorskip("torch")


def _threads_seen_by_a_new_thread() -> int:
    """torch's thread count in a thread whose first parallel operation runs now (torch sets
    its OpenMP threads lazily, once per thread, on that operation)."""
    seen: list[int] = []

    def work() -> None:
        torch.ones(1 << 16).add(1).sum()
        seen.append(torch.get_num_threads())

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    return seen[0]


def test_torch_in_a_new_thread_keeps_to_the_limit_and_is_restored_after() -> None:
    before = torch.get_num_threads()
    with limited_threads(1):
        assert torch.get_num_threads() == 1
        assert _threads_seen_by_a_new_thread() == 1
    assert torch.get_num_threads() == before


def test_the_limit_is_restored_when_the_body_raises() -> None:
    before = torch.get_num_threads()
    with pytest.raises(RuntimeError), limited_threads(1):
        raise RuntimeError("synthesis failed")
    assert torch.get_num_threads() == before
