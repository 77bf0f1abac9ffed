"""The `Embedder` protocol: texts in, unit-length float32 vectors out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

__all__ = ["Embedder", "Vectors", "normalize_rows"]

#: Embeddings: a float32 array, 2-D ``(n_texts, dim)`` from ``embed_documents`` and 1-D
#: ``(dim,)`` from ``embed_query``.
Vectors = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors; documents and queries may be embedded differently.

    ``embed_documents`` returns a float32 array of shape ``(len(texts), dim)`` (``(0, dim)`` for
    no texts), rows in input order and L2-normalized, so a dot product is the cosine
    similarity. ``embed_query`` returns one such row, shape ``(dim,)``. ``name`` identifies the
    model (``minilm:all-MiniLM-L6-v2``); caches key on it.
    """

    @property
    def name(self) -> str: ...

    @property
    def dim(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> Vectors: ...

    def embed_query(self, text: str) -> Vectors: ...


def normalize_rows(vectors: npt.ArrayLike) -> Vectors:
    """``vectors`` as float32 with every non-zero row scaled to length 1."""
    array = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(array, axis=-1, keepdims=True)
    return np.divide(array, norms, out=np.zeros_like(array), where=norms > 0)
