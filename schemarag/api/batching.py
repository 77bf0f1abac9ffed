"""Query embeddings batched across concurrent requests.

Under load the costly step of a retrieval is the MiniLM forward pass, and one pass over 16
short texts costs a fraction of 16 passes. `BatchingEmbedder` queues the texts of `embed_query`
and of small `embed_documents` calls (the retriever's per-question units), and one worker
thread embeds whatever is queued in a single `embed_documents` call of the inner embedder: an
idle server embeds a lone question at once (no timer, no added wait), a busy one in batches of
up to `max_batch` texts. Calls with more texts than that (a schema vocabulary) go straight to
the inner embedder, so they never hold live queries up. Only for embedders that embed queries
and documents alike (MiniLM); Cohere embeds queries differently and must not be wrapped.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Sequence
from concurrent.futures import Future

import numpy as np

from providers import Embedder
from providers.embedding import Vectors

log = logging.getLogger(__name__)

__all__ = ["BatchingEmbedder"]

_Item = tuple[list[str], "Future[Vectors]"]


class BatchingEmbedder:
    """An `Embedder` whose calls from many threads share forward passes."""

    def __init__(self, inner: Embedder, *, max_batch: int = 32) -> None:
        if max_batch < 1:
            raise ValueError(f"max_batch must be >= 1, got {max_batch}")
        self.inner = inner
        self.max_batch = max_batch
        self.batches = 0
        self.texts = 0
        self._queue: queue.SimpleQueue[_Item | None] = queue.SimpleQueue()  # None: stop
        self._worker = threading.Thread(target=self._run, name=f"embed-{inner.name}", daemon=True)
        self._worker.start()

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if isinstance(texts, str) or len(texts) > self.max_batch or not texts:
            return self.inner.embed_documents(texts)
        return self._submit(list(texts))

    def embed_query(self, text: str) -> Vectors:
        return self._submit([text])[0]

    def close(self) -> None:
        self._queue.put(None)
        self._worker.join(timeout=10)

    def _submit(self, texts: list[str]) -> Vectors:
        if not self._worker.is_alive():
            raise RuntimeError("the embedding worker has stopped")
        future: Future[Vectors] = Future()
        self._queue.put((texts, future))
        return future.result()

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            batch = [item]
            size = len(item[0])
            stop = False
            while size < self.max_batch:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stop = True
                    break
                batch.append(more)
                size += len(more[0])
            texts = [text for group, _ in batch for text in group]
            try:
                vectors = np.asarray(self.inner.embed_documents(texts), dtype=np.float32)
            except Exception as exc:
                for _, future in batch:
                    future.set_exception(exc)
            else:
                self.batches += 1
                self.texts += len(texts)
                start = 0
                for group, future in batch:
                    future.set_result(vectors[start : start + len(group)])
                    start += len(group)
            if stop:
                return
