"""Few-shot examples: the synthetic records of the chosen database nearest to the question by
question skeleton (schema words and values masked, as PET-SQL selects them), blended with the
embedding similarity the search already gave."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from difflib import SequenceMatcher

from retriever.knowledge import QuestionHit
from retriever.result import Example
from retriever.text import skeleton

SKELETON_WEIGHT = 0.6


def select_examples(
    question: str,
    candidates: Sequence[QuestionHit],
    schema_words: Collection[str],
    values: Collection[str],
    count: int,
) -> list[Example]:
    """The `count` candidates whose skeleton is closest to the question's."""
    if count <= 0 or not candidates:
        return []
    target = skeleton(question, schema_words, values).split()
    scored: list[Example] = []
    seen: set[str] = set()
    for hit in candidates:
        if hit.question in seen:
            continue
        seen.add(hit.question)
        shape = skeleton(hit.question, schema_words, values)
        ratio = SequenceMatcher(None, target, shape.split(), autojunk=False).ratio()
        similarity = SKELETON_WEIGHT * ratio + (1 - SKELETON_WEIGHT) * hit.score
        scored.append(
            Example(hit.question, hit.sql, hit.db_id, hit.tables, round(similarity, 4), shape)
        )
    scored.sort(key=lambda e: -e.similarity)
    return scored[:count]
