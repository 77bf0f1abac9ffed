"""Questions prepared together: their embeddings, nearest synthetic questions and the start
of their semantic linking, computed in one batch for `Retriever.retrieve(..., prepared=)`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from providers import Embedder
from retriever.knowledge import KnowledgeBase, QuestionHit
from retriever.semantic import PendingLinks, SemanticLinker


@dataclass(frozen=True)
class Prepared:
    """A question's embedding, nearest synthetic questions and the start of its semantic
    linking, from `Retriever.prepare`."""

    vector: npt.NDArray[np.float32]
    hits: list[QuestionHit]
    links: PendingLinks | None = None


def prepare(
    questions: Sequence[str],
    embedder: Embedder,
    semantic: SemanticLinker | None,
    kb: KnowledgeBase | None,
    hits: int,
) -> list[Prepared]:
    """The embeddings and nearest synthetic questions (`hits` each) of many questions,
    computed together for `Retriever.retrieve(..., prepared=)`: one model call for the
    questions when the embedder embeds queries as documents (`symmetric`: MiniLM, hashing;
    Cohere embeds queries differently, one call each), one for their new words (semantic
    linking), and one search for all."""
    links = [semantic.start(q, defer=True) if semantic else None for q in questions]
    words = list(dict.fromkeys(w for pending in links if pending for w in pending.to_embed))
    symmetric = getattr(embedder, "symmetric", False)
    if symmetric:
        vectors = np.asarray(embedder.embed_documents(list(questions)), np.float32)
    else:
        vectors = np.asarray([embedder.embed_query(q) for q in questions], np.float32)
    word_vectors = np.zeros((0, embedder.dim), dtype=np.float32)
    if words and semantic is not None:
        # a call of its own: words padded to a question's length would cost as much
        words_by = embedder if symmetric else semantic.embedder
        word_vectors = np.asarray(words_by.embed_documents(words), np.float32)
    row = {w: i for i, w in enumerate(words)}
    for pending in links:
        if pending is not None and pending.future is not None:
            pending.future.set_result(word_vectors[[row[w] for w in pending.to_embed]])
    vectors = vectors.reshape(len(questions), embedder.dim)
    if kb is None:
        found: list[list[QuestionHit]] = [[] for _ in questions]
    else:
        found = kb.search_questions_many(vectors, hits)
    return [
        Prepared(v, hits, pending) for v, hits, pending in zip(vectors, found, links, strict=True)
    ]
