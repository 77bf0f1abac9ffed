"""`ServedIndex` on its own: leases keep a replaced build open until their requests end, a
build that fails to load leaves the old one serving (with back-off), an unreachable store is
survived, and pooling gets a twin retriever."""

from __future__ import annotations

from pathlib import Path

import pytest

from providers import ScriptedLLM
from retriever import Retriever, StoreNotReadyError
from schemagraph import Catalog
from schemarag.api.metrics import Registry
from schemarag.api.served import IndexNotReadyError, ServedIndex
from store import StoreLocation
from store.location import _write_atomic
from tests.api.conftest import build_store, source_for, wait_until


class ScriptedSource:
    """The real store, with failures the test switches on and a record of closed retrievers."""

    def __init__(self, store: Path) -> None:
        self.inner = source_for(store)
        self.where = "scripted"
        self.fail_open = False
        self.fail_probe = False
        self.opened: list[Retriever] = []
        self.closed: list[Retriever] = []

    def probe(self) -> str | None:
        if self.fail_probe:
            raise ConnectionError("store unreachable")
        return self.inner.probe()

    def latest_build(self) -> str | None:
        return self.inner.latest_build()

    def open(self) -> Retriever:
        if self.fail_open:
            raise StoreNotReadyError("built with another embedder")
        retriever = self.inner.open()
        real_close = retriever.close

        def close() -> None:
            self.closed.append(retriever)
            real_close()

        retriever.close = close  # type: ignore[method-assign]
        self.opened.append(retriever)
        return retriever

    def close(self) -> None:
        self.inner.close()


@pytest.fixture
def two_builds(store_copy: Path, catalog: Catalog) -> tuple[Path, str, str]:
    """A store holding two complete builds, its pointer on the first."""
    first = StoreLocation.parse(store_copy).current()
    assert first is not None
    second = build_store(store_copy, catalog, full=True, seed=1)
    _write_atomic(store_copy / "CURRENT", first)
    return store_copy, first, second


def publish(store: Path, build_id: str) -> None:
    _write_atomic(store / "CURRENT", build_id)


def test_lease_before_any_build_is_not_ready(tmp_path: Path) -> None:
    served = ServedIndex(ScriptedSource(tmp_path / "empty"))
    assert served.poll() is False and not served.ready
    with pytest.raises(IndexNotReadyError), served.lease():
        pass


def test_a_replaced_build_closes_only_after_its_last_lease(
    two_builds: tuple[Path, str, str],
) -> None:
    store, first_id, second_id = two_builds
    source = ScriptedSource(store)
    served = ServedIndex(source)
    assert served.poll() is True
    with served.lease() as first:
        assert first.build_id == first_id
        publish(store, second_id)
        assert served.poll() is True
        assert served.current is not first and first.retired
        assert source.closed == []  # still leased by this "request"
        with served.lease() as second:
            assert second.build_id == second_id
        assert first.retriever.retrieve("How many singers are there?").databases
    assert source.closed == [first.retriever]
    served.stop()
    assert source.closed == [first.retriever, second.retriever]


def test_a_failing_build_keeps_the_old_one_and_backs_off(
    two_builds: tuple[Path, str, str],
) -> None:
    store, _, second_id = two_builds
    source = ScriptedSource(store)
    registry = Registry()
    served = ServedIndex(source, registry=registry)
    served.poll()
    old = served.current
    publish(store, second_id)
    source.fail_open = True
    assert served.poll() is False and served.current is old
    source.fail_open = False
    assert served.poll() is False  # within the back-off: not retried yet
    assert 'schemarag_index_reloads_total{outcome="failed"} 1' in registry.render()
    served._failed.clear()  # the back-off has passed
    assert served.poll() is True and served.current is not old
    served.stop()


def test_an_unreachable_store_keeps_serving(built_store: Path) -> None:
    source = ScriptedSource(built_store)
    served = ServedIndex(source)
    served.poll()
    source.fail_probe = True
    assert served.poll() is False and served.ready
    with served.lease() as loaded:
        assert loaded.retriever.retrieve("How many singers are there?").databases
    served.stop()


def test_pooling_twin_shares_the_build_and_uses_the_llm(built_store: Path) -> None:
    llm = ScriptedLLM('{"databases": [{"db_id": "concert_singer", "tables": ["singer"]}]}')
    served = ServedIndex(ScriptedSource(built_store), pool_llm=llm)
    served.poll()
    with served.lease() as loaded:
        assert loaded.for_request(False) is loaded.retriever
        twin = loaded.for_request(True)
        assert twin is not None and twin is not loaded.retriever
        assert twin.pool_llm is llm and loaded.retriever.pool_llm is None
        assert twin.kb is loaded.retriever.kb
        result = twin.retrieve("How many singers are from France?")
        assert result.pooled and result.databases[0].db_id == "concert_singer"
        assert llm.calls
    served.stop()


def test_no_pooling_llm_no_twin(built_store: Path) -> None:
    served = ServedIndex(ScriptedSource(built_store))
    served.poll()
    with served.lease() as loaded:
        assert loaded.for_request(True) is None
    served.stop()


def test_the_watcher_thread_loads_and_stops(built_store: Path) -> None:
    source = ScriptedSource(built_store)
    served = ServedIndex(source, interval_s=0.01)
    served.start()
    wait_until(lambda: served.ready)
    served.stop()
    assert not served.ready and source.closed == source.opened


def test_the_schema_vocabulary_is_cached_between_loads_and_questions_are_not(
    built_store: Path, tmp_path: Path
) -> None:
    from providers import ProviderCache, make_embedder
    from schemarag.api import StoreSource
    from store import StoreLocation

    cache = ProviderCache(tmp_path / "cache.sqlite")
    source = StoreSource(StoreLocation.parse(built_store), make_embedder=make_embedder, cache=cache)
    first = source.open()
    misses = cache.stats().embedding_misses
    assert misses > 100  # the vocabulary, embedded once and stored
    first.close()
    second = source.open()
    assert cache.stats().embedding_misses == misses  # a reload reads it back
    assert cache.stats().embedding_hits >= misses
    hits = cache.stats().embedding_hits
    second.retrieve("Which zeppelin pilots flew over Quetzaltenango?")  # unseen words
    assert cache.stats().embedding_misses == misses  # the units never touch the cache
    assert cache.stats().embedding_hits == hits
    second.close()
    source.close()
