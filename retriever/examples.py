"""Few-shot examples: the synthetic records of the chosen database nearest to the question by
question skeleton (schema words and values masked, as PET-SQL selects them), blended with the
embedding similarity the search already gave.

Examples people wrote (`origin` `user`, added with `schemarag index add-examples`) are preferred:
their similarity gets `USER_BONUS`, so a user example beats a synthetic one unless the synthetic
one is clearly closer (by more than the bonus). Real analysts' pairs show the database's actual
conventions (which column holds the date, how a status is spelled), which template questions
cannot; the bonus is a choice, not a measurement (few-shot quality needs an LLM to measure).
A warehouse's routing keys (`origin` `routing`: its pairs written as for SQLite) are never
examples: their SQL is not the engine's.

Selection runs on every query. The same synthetic records come back query after query, so their
skeletons are remembered (`SKELETON_MEMO` of them); and a candidate that could not enter the best
`count` even with difflib's cheap upper bound on the ratio (`quick_ratio`) is passed over before
the costly `ratio`. Neither changes the result.
"""

from __future__ import annotations

import functools
import heapq
from collections.abc import Collection, Sequence
from difflib import SequenceMatcher

import numpy as np
import numpy.typing as npt

from retriever.knowledge import KnowledgeBase, QuestionHit
from retriever.result import Example
from retriever.tables import TableEntry
from retriever.text import normalize_value, skeleton, stem, words
from schemagraph.model import fold
from store.records import ROUTING, USER

SKELETON_WEIGHT = 0.6
#: added to the similarity of a user example (see the module docstring)
USER_BONUS = 0.1
#: candidate skeletons remembered across queries (a few MB at most)
SKELETON_MEMO = 1 << 16


def select_examples(
    question: str,
    candidates: Sequence[QuestionHit],
    schema_words: Collection[str],
    values: Collection[str],
    count: int,
) -> list[Example]:
    """The `count` candidates whose skeleton is closest to the question's (user examples
    preferred by `USER_BONUS`); each example's `similarity` is its own, without the bonus."""
    if count <= 0 or not candidates:
        return []
    # the memo's key: the same objects on every query of a database (a frozenset is its own
    # frozenset, and caches its hash)
    schema_words, values = frozenset(schema_words), frozenset(values)
    target = skeleton(question, schema_words, values).split()
    scored: list[tuple[float, Example]] = []
    best: list[float] = []  # min-heap of the `count` highest ranking keys so far
    seen: set[str] = set()
    for hit in candidates:
        if hit.question in seen:
            continue
        seen.add(hit.question)
        shape, shape_words = _candidate_skeleton(hit.question, schema_words, values)
        matcher = SequenceMatcher(None, target, shape_words, autojunk=False)
        bonus = USER_BONUS if hit.origin == USER else 0.0
        # the final sort is stable, so a later candidate that at best ties the `count`-th
        # key so far can never be chosen
        if len(best) == count and _similarity(matcher.quick_ratio(), hit.score) + bonus <= best[0]:
            continue
        similarity = _similarity(matcher.ratio(), hit.score)
        example = Example(
            hit.question, hit.sql, hit.db_id, hit.tables, similarity, shape, origin=hit.origin
        )
        key = similarity + bonus
        scored.append((key, example))
        if len(best) < count:
            heapq.heappush(best, key)
        else:
            heapq.heappushpop(best, key)
    scored.sort(key=lambda pair: -pair[0])
    return [example for _, example in scored[:count]]


def _similarity(ratio: float, score: float) -> float:
    """Monotone in `ratio`, so an upper bound on the ratio bounds the similarity."""
    return round(SKELETON_WEIGHT * ratio + (1 - SKELETON_WEIGHT) * score, 4)


@functools.lru_cache(maxsize=SKELETON_MEMO)
def _candidate_skeleton(
    question: str, schema_words: frozenset[str], values: frozenset[str]
) -> tuple[str, tuple[str, ...]]:
    """A candidate's skeleton and its words (lru_cache: bounded and thread-safe)."""
    shape = skeleton(question, schema_words, values)
    return shape, tuple(shape.split())


class ExamplePicker:
    """Few-shot examples for the best database of a question: what each database's questions
    are masked with (its schema words and their stems, its sampled values), built once."""

    def __init__(
        self, entries: Sequence[TableEntry], members: Sequence[npt.NDArray[np.int64]]
    ) -> None:
        self.db_ids = [entries[int(idx[0])].db_id for idx in members]
        self.schema_words: list[frozenset[str]] = []
        self.values: list[frozenset[str]] = []
        for idx in members:
            names = {n for i in idx for n in (entries[i].word_name, *entries[i].columns)}
            vocab = {w for n in names for w in words(n)}
            self.schema_words.append(frozenset(vocab | {stem(w) for w in vocab}))
            self.values.append(
                frozenset(
                    normalize_value(v)
                    for i in idx
                    for vals in entries[i].values.values()
                    for v in vals
                )
            )

    def pick(
        self,
        question: str,
        vector: npt.NDArray[np.float32],
        hits: Sequence[QuestionHit],
        db: int,
        kb: KnowledgeBase,
        count: int,
    ) -> list[Example]:
        """`count` examples of database `db` for `question`: its 4 x count records nearest to
        the question, from the question hits, or a search of that database when they hold
        few, compared by skeleton."""
        db_key = fold(self.db_ids[db])
        size = 4 * count
        candidates = [h for h in hits if fold(h.db_id) == db_key and h.origin != ROUTING][:size]
        if len(candidates) < 2 * count:
            # twice as many: a warehouse's routing keys, never shown, are about half of them
            found = kb.search_questions(vector, 2 * size, db_id=self.db_ids[db])
            candidates = [h for h in found if h.origin != ROUTING][:size] or candidates
        return select_examples(question, candidates, self.schema_words[db], self.values[db], count)
