"""`StoreSource`: retrievers over a knowledge-base store, and the probe that spots new builds.

Embedded store (a folder): the probe reads `ROOT/CURRENT`, the id of the served build, which a
build replaces atomically once its own Qdrant folder is complete and closed.

Qdrant server (a URL): a build switches the aliases `<collection>_questions`/`_tables` in one
call, then writes `CURRENT` in its local state folder (`.schemarag/state/<collection>`, where
the manifests live). The probe resolves the questions alias on the server and reads that
`CURRENT`; the token changes when either does, so a server whose state folder lags the alias
by a moment reloads once more when it catches up. The server process must see the state folder
the builder writes (same machine, or a shared volume as in docker-compose.yml): the manifests
say which embedder a build needs.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

from providers import CachedEmbedder, Embedder, ProviderCache
from providers.embedding import Vectors
from providers.threads import BACKGROUND_LOAD
from retriever import (
    DEFAULT_CONFIG,
    Retriever,
    RetrieverConfig,
)
from store import StoreLocation
from store.location import QUESTIONS

log = logging.getLogger(__name__)

__all__ = ["StoreSource", "VocabularyEmbedder", "prepare_query_embedder"]


def prepare_query_embedder(embedder: Embedder, *, warming: bool = False) -> Embedder:
    """Ready an embedder for serving: MiniLM is loaded now (not on the first request), runs
    torch on one thread per pass (the server's parallelism comes from its workers, and extra
    threads per pass only contend on a busy machine), in bfloat16 when the CPU has it natively
    (3x faster; cosine 0.99999 with fp32); other embedders are returned as they are.

    `warming`: MiniLM answers at once from NumPy and loads torch in the background once the
    index has opened (`WarmingEmbedder`): importing torch and sentence-transformers takes 4-6 s
    of a server's start, which a first question need not wait for."""
    from providers.minilm_embedder import MiniLMEmbedder

    if not isinstance(embedder, MiniLMEmbedder):
        return embedder
    if warming:
        return WarmingEmbedder(embedder.with_precision("auto"))
    import torch

    torch.set_num_threads(1)
    embedder = embedder.with_precision("auto")
    embedder.load()
    return embedder


class WarmingEmbedder:
    """MiniLM that embeds from NumPy (fp32, loaded in a fraction of a second) until `warm` has
    loaded torch in a background thread, then from torch (bfloat16 where native). The load
    starts once a first question has been embedded, or `FIRST_ANSWER_S` after `warm`. A call of
    more texts than NumPy takes (`NUMPY_TEXTS`: the schema vocabulary when no cache holds it)
    loads torch on the spot. The two engines' vectors agree to a cosine of 0.99999."""

    symmetric = True

    #: how long the background load waits for the first question to be answered first (an
    #: import holds the interpreter lock, and the first answer is what a user waits for)
    FIRST_ANSWER_S = 5.0

    def __init__(self, torch_embedder: Any) -> None:
        self.torch = torch_embedder
        self.numpy = torch_embedder.with_engine("numpy")
        self.ready = threading.Event()
        self._answered = threading.Event()
        self._started = False
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return str(self.torch.name)

    @property
    def dim(self) -> int:
        return int(self.torch.dim)

    def warm(self) -> None:
        """Start loading torch in the background (once)."""
        with self._lock:
            if self._started:
                return
            self._started = True
        threading.Thread(target=self._load, name="schemarag-warm-minilm", daemon=True).start()

    def _load(self) -> None:
        self._answered.wait(self.FIRST_ANSWER_S)
        try:
            with BACKGROUND_LOAD:
                import torch

                torch.set_num_threads(1)
                self.torch.embed_query("warm up")
        except Exception as exc:  # NumPy goes on answering
            log.warning("MiniLM stays on NumPy: torch failed to load: %s", exc)
            return
        self.ready.set()
        log.info("MiniLM now runs on torch")

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if self.ready.is_set():
            return self.torch.embed_documents(texts)
        vectors: Vectors = self.numpy.embed_documents(texts)
        if self._started:
            self._answered.set()
        return vectors

    def embed_query(self, text: str) -> Vectors:
        return self.embed_documents([text])[0]


class VocabularyEmbedder:
    """The `vocabulary_embedder` of one retriever. While the retriever is being built it embeds
    the schema vocabulary (thousands of names): those texts go through `cached` (the provider
    cache), so that the next reload reads them back instead of running the model. Once `opened`
    is called, what remains is the per-question units the linker has not seen: they go to
    `serving` and are never written to disk, like the questions themselves."""

    def __init__(self, serving: Embedder, cached: Embedder | None) -> None:
        self.serving = serving
        self.cached = cached
        self.opening = True

    @property
    def name(self) -> str:
        return self.serving.name

    @property
    def dim(self) -> int:
        return self.serving.dim

    def opened(self) -> None:
        self.opening = False

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if self.opening and self.cached is not None:
            return self.cached.embed_documents(texts)
        return self.serving.embed_documents(texts)

    def embed_query(self, text: str) -> Vectors:
        return self.serving.embed_query(text)


class StoreSource:
    """Opens the served build of `location` (see the module docstring).

    `make_embedder(spec)`: the embedder for a spec (called once per spec; the result is kept
    for the life of the source, so the model loads once); `embedder_spec`: force one spec
    instead of the one each build's manifest names; `config`: how its retrievers rank
    (`RetrieverConfig`); `cache`: the provider cache that keeps the schema
    vocabulary's vectors between loads (see `VocabularyEmbedder`; closed with the source);
    `client`: the Qdrant client the server-mode probe uses (default: one of its own, opened on
    first use).
    """

    def __init__(
        self,
        location: StoreLocation,
        *,
        make_embedder: Callable[[str], Embedder],
        embedder_spec: str | None = None,
        config: RetrieverConfig = DEFAULT_CONFIG,
        cache: ProviderCache | None = None,
        client: Any = None,
    ) -> None:
        self.location = location
        self.cache = cache
        self.make_embedder = make_embedder
        self.embedder_spec = embedder_spec
        self.config = config
        self._client = client
        self._own_client = client is None
        self._embedders: dict[str, Embedder] = {}
        self._lock = threading.Lock()

    @property
    def where(self) -> str:
        return self.location.where

    # -- probing ---------------------------------------------------------------------------

    def probe(self) -> str | None:
        current = self.location.current()
        if self.location.embedded:
            return current
        alias = self.alias_build()
        if alias is None and current is None:
            return None
        return f"{alias or '-'}|{current or '-'}"

    def latest_build(self) -> str | None:
        if self.location.embedded:
            return self.location.current()
        try:
            return self.alias_build() or self.location.current()
        except Exception:
            return self.location.current()

    def alias_build(self) -> str | None:
        """The build the server's questions alias points at (None: no alias yet)."""
        if self._client is None:
            from qdrant_client import QdrantClient

            self._client = QdrantClient(
                url=self.location.url, api_key=self.location.api_key, timeout=5
            )
        name = self.location.alias(QUESTIONS)
        for alias in self._client.get_aliases().aliases:
            if alias.alias_name == name:
                collection = str(alias.collection_name)
                return collection.rsplit("__", 1)[-1] if "__" in collection else collection
        return None

    # -- loading ---------------------------------------------------------------------------

    def open(self) -> Retriever:
        made: list[VocabularyEmbedder] = []

        def vocabulary(embedder: Embedder) -> Embedder:
            cached = CachedEmbedder(embedder, self.cache) if self.cache is not None else None
            made.append(VocabularyEmbedder(embedder, cached))
            return made[-1]

        retriever = Retriever.open(
            self.location,
            lambda spec: self.embedder(self.embedder_spec or spec),
            config=self.config,
            vocabulary_embedder=vocabulary,
        )
        for opened in made:
            opened.opened()
        warm = getattr(retriever.embedder, "warm", None)
        if warm is not None:
            warm()
        return retriever

    def embedder(self, spec: str) -> Embedder:
        with self._lock:
            if spec not in self._embedders:
                self._embedders[spec] = self.make_embedder(spec)
            return self._embedders[spec]

    def close(self) -> None:
        for embedder in self._embedders.values():
            close = getattr(embedder, "close", None)
            if close is not None:
                close()
        self._embedders.clear()
        if self.cache is not None:
            self.cache.close()
            self.cache = None
        if self._own_client and self._client is not None:
            self._client.close()
            self._client = None
