"""The served index: one retriever at a time, replaced without failing a request.

A background thread polls the store's build pointer (`IndexSource.probe`). When it names a
build other than the one served, the new retriever is opened *beside* the old one, warmed up
with one query, and swapped in under a lock; requests hold a lease on the retriever they
started with, and the old one is closed when its last lease ends. A request therefore never
sees a half-loaded index nor a closed one, and at most two builds are in memory for the length
of the slowest in-flight request.

A build that fails to load (say, built with another embedder) is logged and counted, the old
build keeps serving, and the same build is retried with back-off (1 s doubling to 60 s); a new
pointer value is tried at once.

Until a first build is served, `ServedIndex.pending` says why (`Pending`): the store has not been
checked yet, holds no build, is loading one (which, since when), failed to load it (the error,
the next try) or cannot be reached; the routes turn it into their 503 message.

Embedded stores (one Qdrant folder per build, `ROOT/CURRENT` naming the served one) make this
hand-over lock-free across processes: the builder never touches the folder this process holds
locked, and this process opens the new folder only after the builder has closed and published
it. See `schemarag.api.store` for the probes.
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal, Protocol

from providers import LLM
from retriever import Retriever
from schemarag.api.metrics import Registry
from store.manifest import Manifest

log = logging.getLogger(__name__)

__all__ = ["IndexNotReadyError", "IndexSource", "Loaded", "Pending", "ServedIndex"]

WARMUP_QUESTION = "how many rows are in the largest table"
MAX_BACKOFF_S = 60.0


class IndexSource(Protocol):
    """Where retrievers come from: `probe` is cheap and polled (a token that changes when a new
    build is published, None while there is none); `open` loads the served build fully."""

    @property
    def where(self) -> str: ...

    def probe(self) -> str | None: ...

    def open(self) -> Retriever: ...

    def latest_build(self) -> str | None: ...

    def close(self) -> None: ...


def _summary(error: BaseException) -> str:
    """The first line of an error, at most 300 characters: what a 503 may say about it (the
    full error goes to the log)."""
    lines = str(error).strip().splitlines()
    return (lines[0] if lines else type(error).__name__)[:300]


class IndexNotReadyError(Exception):
    """No build has been loaded yet."""


@dataclass(frozen=True)
class Pending:
    """Why no build is served: `state` is

    - ``starting``: the store has not been checked yet (the first moments after start);
    - ``empty``: the store has no build;
    - ``loading``: `build` is being loaded, since `since` (`time.monotonic()`);
    - ``failed``: `build` failed to load with `error`; tried again at `retry_at` (monotonic),
      or at once when another build is published;
    - ``unreachable``: the store cannot be checked for a build (`error`).
    """

    state: Literal["starting", "empty", "loading", "failed", "unreachable"]
    build: str | None = None
    error: str | None = None
    since: float = 0.0
    retry_at: float = 0.0


@dataclass
class Loaded:
    """A loaded build: its retriever (and a pooling twin), what it is, and who uses it."""

    retriever: Retriever
    token: str
    build_id: str | None
    #: the build's manifest; None for a retriever made without a store
    manifest: Manifest | None
    loaded_at: datetime
    pooled: Retriever | None = None
    users: int = 0
    retired: bool = False
    closed: bool = field(default=False, repr=False)

    def for_request(self, pool: bool) -> Retriever | None:
        """The retriever for a request; None when pooling is asked and not configured."""
        return self.pooled if pool else self.retriever


class ServedIndex:
    """Holds the current `Loaded` build and swaps in new ones (see the module docstring).

    `pool_llm`: when given, each build also gets a pooling twin (a shallow copy of its
    retriever sharing the same Qdrant client, with `pool_llm` set) for `pool: true` requests.
    """

    def __init__(
        self,
        source: IndexSource,
        *,
        interval_s: float = 1.0,
        pool_llm: LLM | None = None,
        registry: Registry | None = None,
    ) -> None:
        self.source = source
        self.interval_s = interval_s
        self.pool_llm = pool_llm
        self._lock = threading.Lock()
        self._reload_lock = threading.Lock()
        self._current: Loaded | None = None
        self._failed: dict[str, tuple[float, float]] = {}  # token -> (retry at, back-off)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._probe_failing = False
        self._pending = Pending("starting")
        self.reloads = 0
        registry = registry or Registry()
        self._reload_count = registry.counter(
            "schemarag_index_reloads_total",
            "builds loaded (ok) or that failed to load",
            ("outcome",),
        )
        self._load_seconds = registry.gauge(
            "schemarag_index_load_seconds", "time the last successful build load took"
        )
        registry.gauge(
            "schemarag_index_ready", "1 when a build is being served", function=self._ready_metric
        )
        registry.gauge(
            "schemarag_index_build_info",
            "the served build (value 1)",
            ("build_id",),
            function=self._build_metric,
        )
        registry.gauge(
            "schemarag_index_loaded_timestamp_seconds",
            "when the served build was loaded (Unix time)",
            function=self._loaded_metric,
        )

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Start the watcher; the first load happens on its thread, so the server answers
        /healthz (and /readyz with 503) while the model and the index load."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._watch, name="schemarag-index", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=30)
            self._thread = None
        with self._lock:
            old, self._current = self._current, None
        if old is not None:
            self._retire(old)

    def _watch(self) -> None:
        while not self._stop.is_set():
            try:
                self.poll()
            except Exception:  # the watcher must survive anything
                log.exception("index watcher: unexpected error")
            self._stop.wait(self.interval_s)

    # -- state -----------------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        return self._current is not None

    @property
    def settled(self) -> bool:
        """Whether waiting for the first build is over: one is served, or the store is empty,
        failed or unreachable (`pending` says which)."""
        return self.ready or self._pending.state not in ("starting", "loading")

    @property
    def current(self) -> Loaded | None:
        return self._current

    @property
    def pending(self) -> Pending:
        """Why no build is served, while `current` is None (see `Pending`); once a build is
        served it tells what the watcher last did, which no request waits for."""
        return self._pending

    def why_not_ready(self) -> str:
        """Why no build answers now, in one sentence."""
        pending = self._pending
        where = self.source.where
        if pending.state == "empty":
            return f"{where} holds no knowledge base yet: run `schemarag index build` first"
        if pending.state == "loading":
            return f"the index {pending.build} of {where} is still loading; try again shortly"
        if pending.state in ("failed", "unreachable"):
            return f"the index of {where} cannot be loaded: {pending.error}"
        return f"the index of {where} is not loaded yet; try again shortly"

    @contextmanager
    def lease(self) -> Iterator[Loaded]:
        """The current build, kept open until the block ends even if a new one is swapped in."""
        with self._lock:
            loaded = self._current
            if loaded is None:
                raise IndexNotReadyError(f"{self.source.where}: no index loaded yet")
            loaded.users += 1
        try:
            yield loaded
        finally:
            with self._lock:
                loaded.users -= 1
                close = loaded.retired and loaded.users == 0 and not loaded.closed
                if close:
                    loaded.closed = True
            if close:
                self._close(loaded)

    # -- reload ----------------------------------------------------------------------------

    def poll(self) -> bool:
        """Check the pointer once and load a new build if there is one; True when swapped."""
        with self._reload_lock:
            try:
                token = self.source.probe()
            except Exception as exc:
                if not self._probe_failing:
                    log.warning("cannot check %s for a new build: %s", self.source.where, exc)
                self._probe_failing = True
                self._pending = Pending("unreachable", error=_summary(exc))
                return False
            if self._probe_failing:
                log.info("%s is reachable again", self.source.where)
                self._probe_failing = False
            current = self._current
            if token is None:
                self._pending = Pending("empty")
                return False
            if current is not None and token == current.token:
                return False
            retry = self._failed.get(token)
            if retry is not None and time.monotonic() < retry[0]:
                return False
            return self._load(token, retry[1] if retry else 0.0)

    def _build_name(self, token: str) -> str:
        """The build a load of `token` opens: the store's pointer (the token of an embedded
        store is that build id already; a server's joins the alias and the state pointer)."""
        try:
            return self.source.latest_build() or token
        except Exception:
            return token

    def _failed_load(self, token: str, build: str, error: Exception, backoff: float) -> None:
        retry_at = time.monotonic() + backoff
        self._failed[token] = (retry_at, backoff)
        self._pending = Pending("failed", build, error=_summary(error), retry_at=retry_at)
        self._reload_count.inc("failed")

    def _load(self, token: str, backoff: float) -> bool:
        started = time.perf_counter()
        build = self._build_name(token)
        self._pending = Pending("loading", build, since=time.monotonic())
        try:
            retriever = self.source.open()
        except Exception as exc:
            backoff = min(MAX_BACKOFF_S, max(1.0, 2 * backoff))
            self._failed_load(token, build, exc, backoff)
            log.error(
                "cannot load the new build of %s (%s); still serving %s, retrying in %.0f s",
                self.source.where,
                exc,
                self._current.build_id if self._current else "nothing",
                backoff,
            )
            return False
        try:
            retriever.retrieve(WARMUP_QUESTION, 1, 1)
        except Exception as exc:
            retriever.close()
            self._failed_load(token, build, exc, MAX_BACKOFF_S)
            log.error("the new build of %s fails a test query: %s", self.source.where, exc)
            return False
        self._failed.pop(token, None)
        manifest = retriever.kb.manifest if retriever.kb is not None else None
        pooled = None
        if self.pool_llm is not None:
            pooled = copy.copy(retriever)
            pooled.pool_llm = self.pool_llm
        loaded = Loaded(
            retriever=retriever,
            token=token,
            build_id=manifest.build_id if manifest is not None else None,
            manifest=manifest,
            loaded_at=datetime.now(UTC),
            pooled=pooled,
        )
        with self._lock:
            old, self._current = self._current, loaded
            self.reloads += 1
        seconds = time.perf_counter() - started
        self._reload_count.inc("ok")
        self._load_seconds.set(seconds)
        log.info(
            "serving build %s of %s (loaded in %.2f s%s)",
            loaded.build_id,
            self.source.where,
            seconds,
            f", replacing {old.build_id}" if old is not None else "",
        )
        if old is not None:
            self._retire(old)
        return True

    def _retire(self, loaded: Loaded) -> None:
        with self._lock:
            loaded.retired = True
            close = loaded.users == 0 and not loaded.closed
            if close:
                loaded.closed = True
        if close:
            self._close(loaded)

    @staticmethod
    def _close(loaded: Loaded) -> None:
        try:
            loaded.retriever.close()
            log.info("closed build %s", loaded.build_id)
        except Exception:
            log.exception("closing build %s failed", loaded.build_id)

    # -- metrics ---------------------------------------------------------------------------

    def _ready_metric(self) -> dict[tuple[str, ...], float]:
        return {(): 1.0 if self._current is not None else 0.0}

    def _build_metric(self) -> dict[tuple[str, ...], float]:
        current = self._current
        return {(str(current.build_id),): 1.0} if current is not None else {}

    def _loaded_metric(self) -> dict[tuple[str, ...], float]:
        current = self._current
        return {(): current.loaded_at.timestamp()} if current is not None else {}
