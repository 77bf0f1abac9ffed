"""A persistent SQLite cache of completions and embeddings, and the wrappers that use it."""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from providers.embedding import Embedder, Vectors
from providers.errors import ConfigurationError
from providers.llm import LLM, Completion, Message, Usage, check_request

__all__ = ["CacheStats", "CachedEmbedder", "CachedLLM", "ProviderCache", "cache_key"]

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS completions (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS embeddings (
    key TEXT PRIMARY KEY,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL
);
"""

# SQLite's default limit on host parameters is 999 in old builds.
_LOOKUP_CHUNK = 500


def cache_key(kind: str, provider: str, parameters: Mapping[str, Any], payload: Any) -> str:
    """sha256 of the canonical JSON of what determines a provider's answer.

    ``provider`` is the LLM's or embedder's ``name`` (provider and model), ``parameters`` the
    settings of the call, ``payload`` its input. Keys are the same in every process.
    """
    document = json.dumps(
        {"kind": kind, "provider": provider, "parameters": parameters, "input": payload},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(document.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CacheStats:
    """Lookups answered from the cache (hits) and passed on to the provider (misses)."""

    completion_hits: int = 0
    completion_misses: int = 0
    embedding_hits: int = 0
    embedding_misses: int = 0

    @property
    def hits(self) -> int:
        return self.completion_hits + self.embedding_hits

    @property
    def misses(self) -> int:
        return self.completion_misses + self.embedding_misses


class ProviderCache:
    """Completions and embedding vectors in one SQLite file (``":memory:"`` for none).

    One connection, guarded by a lock, serves every thread of the process; the file is in WAL
    mode so that other processes can read it while one writes. Vectors are stored as float32
    bytes. Counters of hits and misses are kept per instance (see `stats`).
    """

    def __init__(self, path: str | Path) -> None:
        location = str(path)
        if not location:
            raise ConfigurationError("path must name a file (or be ':memory:')")
        if location != ":memory:":
            Path(location).parent.mkdir(parents=True, exist_ok=True)
        self._path = location
        self._lock = threading.Lock()
        self._connection = sqlite3.connect(location, check_same_thread=False, timeout=30.0)
        deadline = time.monotonic() + 30.0
        while True:
            try:
                with self._lock:
                    if location != ":memory:":
                        self._connection.execute("PRAGMA journal_mode=WAL")
                        self._connection.execute("PRAGMA synchronous=NORMAL")
                    self._connection.executescript(_SCHEMA)
                    self._connection.commit()
                break
            except sqlite3.OperationalError as exc:
                # Processes that open a new cache at once (the workers of `serve`) can deadlock
                # on its first write, and SQLite answers "locked" at once, not after `timeout`.
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        self._stats = CacheStats()

    @property
    def path(self) -> str:
        return self._path

    def close(self) -> None:
        with self._lock:
            self._connection.close()

    def __enter__(self) -> ProviderCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def stats(self) -> CacheStats:
        with self._lock:
            return self._stats

    def _count(self, **increments: int) -> None:
        # Called with the lock held.
        self._stats = replace(
            self._stats,
            **{name: getattr(self._stats, name) + value for name, value in increments.items()},
        )

    # -- completions ------------------------------------------------------------------------

    def get_completion(self, key: str) -> Completion | None:
        with self._lock:
            row = self._connection.execute(
                "SELECT value FROM completions WHERE key = ?", (key,)
            ).fetchone()
            if row is None:
                self._count(completion_misses=1)
                return None
            self._count(completion_hits=1)
        data = json.loads(row[0])
        return Completion(
            text=data["text"],
            model=data["model"],
            usage=Usage(**data["usage"]),
            stop_reason=data.get("stop_reason"),
            logprob=data.get("logprob"),
            cached=True,
        )

    def put_completion(self, key: str, completion: Completion) -> None:
        value = json.dumps(
            {
                "text": completion.text,
                "model": completion.model,
                "usage": {
                    "input_tokens": completion.usage.input_tokens,
                    "output_tokens": completion.usage.output_tokens,
                    "cache_read_tokens": completion.usage.cache_read_tokens,
                    "cache_write_tokens": completion.usage.cache_write_tokens,
                },
                "stop_reason": completion.stop_reason,
                "logprob": completion.logprob,
            },
            ensure_ascii=False,
        )
        with self._lock:
            self._connection.execute(
                "INSERT OR REPLACE INTO completions (key, value) VALUES (?, ?)", (key, value)
            )
            self._connection.commit()

    # -- embeddings -------------------------------------------------------------------------

    def get_vectors(self, keys: Sequence[str]) -> dict[str, Vectors]:
        """The cached vectors among ``keys``; every key is counted as a hit or a miss."""
        unique = list(dict.fromkeys(keys))
        found: dict[str, Vectors] = {}
        with self._lock:
            for start in range(0, len(unique), _LOOKUP_CHUNK):
                chunk = unique[start : start + _LOOKUP_CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = self._connection.execute(
                    f"SELECT key, dim, vector FROM embeddings WHERE key IN ({marks})", chunk
                ).fetchall()
                for key, dim, blob in rows:
                    vector = np.frombuffer(blob, dtype=np.float32).copy()
                    if vector.shape == (dim,):
                        found[key] = vector
            self._count(embedding_hits=len(found), embedding_misses=len(unique) - len(found))
        return found

    def put_vectors(self, items: Iterable[tuple[str, Vectors]]) -> None:
        rows = [
            (key, int(vector.shape[0]), np.ascontiguousarray(vector, dtype=np.float32).tobytes())
            for key, vector in items
        ]
        with self._lock:
            self._connection.executemany(
                "INSERT OR REPLACE INTO embeddings (key, dim, vector) VALUES (?, ?, ?)", rows
            )
            self._connection.commit()


class CachedLLM:
    """An `LLM` that answers from a `ProviderCache` and asks ``llm`` only on a miss.

    The key covers the LLM's name (provider and model), the system prompt, the messages,
    temperature, max_tokens, stop and ``sample``; so at temperature > 0 pass a different
    ``sample`` for each draw wanted. A hit returns the stored `Completion` with
    ``cached=True``. Two threads missing the same key at once both call the provider.
    """

    def __init__(self, llm: LLM, cache: ProviderCache) -> None:
        self._llm = llm
        self._cache = cache

    @property
    def name(self) -> str:
        return self._llm.name

    @property
    def inner(self) -> LLM:
        return self._llm

    @property
    def cache(self) -> ProviderCache:
        return self._cache

    def key(
        self,
        system: str,
        messages: Sequence[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int = 1024,
        stop: Sequence[str] | None = None,
        sample: int = 0,
    ) -> str:
        return cache_key(
            "completion",
            self._llm.name,
            {
                "temperature": float(temperature),
                "max_tokens": int(max_tokens),
                "stop": list(stop) if stop is not None else None,
                "sample": sample,
            },
            {"system": system, "messages": [[m.role, m.content] for m in messages]},
        )

    def complete(
        self,
        system: str,
        messages: Sequence[Message],
        *,
        temperature: float = 0.0,
        max_tokens: int = 1024,
        stop: Sequence[str] | None = None,
        sample: int = 0,
    ) -> Completion:
        check_request(messages, temperature, max_tokens, sample)
        key = self.key(
            system,
            messages,
            temperature=temperature,
            max_tokens=max_tokens,
            stop=stop,
            sample=sample,
        )
        cached = self._cache.get_completion(key)
        if cached is not None:
            return cached
        completion = self._llm.complete(
            system,
            messages,
            temperature=temperature,
            max_tokens=max_tokens,
            stop=stop,
            sample=sample,
        )
        self._cache.put_completion(key, completion)
        return completion


class CachedEmbedder:
    """An `Embedder` that keeps every vector in a `ProviderCache`, one entry per text.

    Only the texts missing from the cache go to ``embedder`` (in one call, deduplicated); the
    key covers the embedder's name and dimension, document-or-query, and the text.
    """

    def __init__(self, embedder: Embedder, cache: ProviderCache) -> None:
        self._embedder = embedder
        self._cache = cache

    @property
    def name(self) -> str:
        return self._embedder.name

    @property
    def dim(self) -> int:
        return self._embedder.dim

    @property
    def inner(self) -> Embedder:
        return self._embedder

    def _key(self, role: str, text: str) -> str:
        return cache_key(
            "embedding", self._embedder.name, {"dim": self._embedder.dim, "role": role}, text
        )

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if isinstance(texts, str):
            raise ConfigurationError("texts must be a sequence of strings, not one string")
        dim = self._embedder.dim
        if not texts:
            return np.zeros((0, dim), dtype=np.float32)
        keys = [self._key("document", text) for text in texts]
        found = self._cache.get_vectors(keys)
        missing: dict[str, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key not in found and key not in missing:
                missing[key] = text
        if missing:
            vectors = self._embedder.embed_documents(list(missing.values()))
            fresh = dict(zip(missing, vectors, strict=True))
            self._cache.put_vectors(fresh.items())
            found.update(fresh)
            log.debug("%s: %d of %d texts embedded, rest cached", self.name, len(fresh), len(keys))
        return np.stack([found[key] for key in keys]).astype(np.float32, copy=False)

    def embed_query(self, text: str) -> Vectors:
        key = self._key("query", text)
        found = self._cache.get_vectors([key])
        if key in found:
            return found[key]
        vector = np.asarray(self._embedder.embed_query(text), dtype=np.float32)
        self._cache.put_vectors([(key, vector)])
        return vector
