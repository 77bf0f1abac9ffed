"""Cohere embeddings through the official ``cohere`` SDK (``ClientV2.embed``)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any, Literal

import httpx
import numpy as np

from providers.embedding import Vectors, normalize_rows
from providers.errors import (
    ConfigurationError,
    MissingDependencyError,
    ProviderCallError,
    excerpt,
)
from providers.llm import Usage

__all__ = ["COHERE_DIMS", "COHERE_MAX_TEXTS", "CohereEmbedder"]

log = logging.getLogger(__name__)

#: The API's limit on texts per embed call.
COHERE_MAX_TEXTS = 96

#: Output dimension of the Cohere models we know; others need ``dim=``.
COHERE_DIMS = {
    "embed-english-v3.0": 1024,
    "embed-multilingual-v3.0": 1024,
    "embed-english-light-v3.0": 384,
    "embed-multilingual-light-v3.0": 384,
    "embed-v4.0": 1536,
}


class CohereEmbedder:
    """An `Embedder` on Cohere (``pip install 'schemarag[cohere]'``).

    Documents are embedded with ``input_type="search_document"``, queries with
    ``"search_query"``, as float vectors, at most ``batch_size`` (<= 96) texts per call, rows in
    input order and L2-normalized. ``api_key`` is required (``CO_API_KEY`` is read at the edge,
    in `schemarag.settings.Settings`). The SDK retries 429, 5xx and timeouts ``max_retries``
    times with backoff. ``usage`` totals the billed input tokens of this instance's calls.
    """

    def __init__(
        self,
        model: str = "embed-english-v3.0",
        *,
        api_key: str | None,
        dim: int | None = None,
        batch_size: int = COHERE_MAX_TEXTS,
        timeout: float = 60.0,
        max_retries: int = 4,
        base_url: str | None = None,
        http_client: httpx.Client | None = None,
    ) -> None:
        if not model:
            raise ConfigurationError("model must be a non-empty string, e.g. 'embed-english-v3.0'")
        if not api_key:
            raise ConfigurationError(
                f"cohere:{model} needs a Cohere API key: set CO_API_KEY (or pass api_key)"
            )
        if not 1 <= batch_size <= COHERE_MAX_TEXTS:
            raise ConfigurationError(
                f"batch_size must be between 1 and {COHERE_MAX_TEXTS}, got {batch_size}"
            )
        if dim is None:
            dim = COHERE_DIMS.get(model)
            if dim is None:
                raise ConfigurationError(
                    f"dim is required for Cohere model {model!r} (known models: "
                    f"{', '.join(sorted(COHERE_DIMS))})"
                )
        if dim < 1:
            raise ConfigurationError(f"dim must be >= 1, got {dim}")
        if timeout <= 0:
            raise ConfigurationError(f"timeout must be > 0 seconds, got {timeout}")
        if max_retries < 0:
            raise ConfigurationError(f"max_retries must be >= 0, got {max_retries}")
        try:
            import cohere
        except ImportError as exc:
            raise MissingDependencyError("cohere", "cohere", "CohereEmbedder") from exc
        self._cohere = cohere
        self._model = model
        self._dim = dim
        self._batch_size = batch_size
        self._client = cohere.ClientV2(
            api_key=api_key,
            base_url=base_url,
            timeout=timeout,
            max_retries=max_retries,
            httpx_client=http_client,
        )
        self._usage = Usage()
        self._usage_lock = threading.Lock()

    @property
    def name(self) -> str:
        return f"cohere:{self._model}"

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def usage(self) -> Usage:
        """Billed input tokens of every call made so far."""
        with self._usage_lock:
            return self._usage

    def _embed_batch(self, texts: list[str], input_type: str) -> Vectors:
        from cohere.core.api_error import ApiError

        try:
            response = self._client.embed(
                model=self._model,
                input_type=input_type,
                texts=texts,
                embedding_types=["float"],
            )
        except ApiError as exc:
            ok = exc.status_code is not None and exc.status_code < 400
            what = "an unparsable response" if ok else f"HTTP {exc.status_code}"
            raise ProviderCallError(
                f"Cohere embed returned {what} ({self.name}): {excerpt(str(exc.body), 300)}",
                provider="cohere",
                status_code=exc.status_code,
            ) from exc
        except httpx.TimeoutException as exc:
            raise ProviderCallError(
                f"Cohere embed timed out ({self.name}) after the SDK's retries",
                provider="cohere",
            ) from exc
        except httpx.HTTPError as exc:
            raise ProviderCallError(
                f"could not reach the Cohere API ({self.name}): {exc!r}", provider="cohere"
            ) from exc
        except ValueError as exc:  # pydantic validation of the response body
            raise ProviderCallError(
                f"Cohere embed returned a response of unexpected shape ({self.name}): {exc}",
                provider="cohere",
            ) from exc
        vectors = response.embeddings.float_ if response.embeddings is not None else None
        array = np.asarray(vectors if vectors is not None else [], dtype=np.float32)
        if array.shape != (len(texts), self._dim):
            raise ProviderCallError(
                f"Cohere embed returned float embeddings of shape {array.shape} for "
                f"{len(texts)} texts; expected ({len(texts)}, {self._dim}) ({self.name})",
                provider="cohere",
            )
        billed = _billed_tokens(response)
        with self._usage_lock:
            self._usage = self._usage + Usage(input_tokens=billed)
        return normalize_rows(array)

    def _embed(
        self, texts: Sequence[str], input_type: Literal["search_document", "search_query"]
    ) -> Vectors:
        if isinstance(texts, str):
            raise ConfigurationError("texts must be a sequence of strings, not one string")
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        parts = [
            self._embed_batch(list(texts[start : start + self._batch_size]), input_type)
            for start in range(0, len(texts), self._batch_size)
        ]
        log.debug("cohere %s: %d texts in %d calls", input_type, len(texts), len(parts))
        return np.concatenate(parts)

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        return self._embed(texts, "search_document")

    def embed_query(self, text: str) -> Vectors:
        return self._embed([text], "search_query")[0]


def _billed_tokens(response: Any) -> int:
    meta = getattr(response, "meta", None)
    billed = getattr(meta, "billed_units", None)
    tokens = getattr(billed, "input_tokens", None)
    return int(tokens or 0)
