"""Lexical signals over the table entries: BM25 over table documents, and linking of the
question to table names and to indexed cell values.

A value that occurs in one database only is strong evidence ("Who lives in Ottawa?"), so a
value match weighs `log(1 + databases / databases holding the value)`; common values ("yes",
"male") weigh little. Overlapping matches keep the longest span.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from rank_bm25 import BM25Okapi

from retriever.tables import TableEntry
from retriever.text import STOPWORDS, normalize_value, terms, words
from schemagraph.model import fold

MAX_VALUE_WORDS = 5


class TableBM25:
    """BM25 (rank-bm25's Okapi) over one document per table."""

    def __init__(self, entries: Sequence[TableEntry]) -> None:
        corpus = [terms(e.text) or ["_"] for e in entries]
        self._bm25 = BM25Okapi(corpus)
        self._size = len(entries)

    def scores(self, question: str) -> npt.NDArray[np.float64]:
        query = terms(question)
        if not query or not self._size:
            return np.zeros(self._size)
        return np.asarray(self._bm25.get_scores(query), dtype=np.float64)


@dataclass(frozen=True)
class ValueMatch:
    """`text` of the question matched a value of `entry`'s `column`."""

    text: str
    entry: int
    column: str
    weight: float


@dataclass(frozen=True)
class Links:
    """Per-entry linking scores: table-name matches and value matches (with the evidence)."""

    names: npt.NDArray[np.float64]
    values: npt.NDArray[np.float64]
    value_matches: tuple[ValueMatch, ...]


class SchemaLinker:
    """Links question words to table names and n-grams to cell values of the entries."""

    def __init__(self, entries: Sequence[TableEntry]) -> None:
        self._size = len(entries)
        databases = {fold(e.db_id) for e in entries}
        self._name_terms: list[tuple[str, ...]] = []
        df: dict[str, int] = {}
        for entry in entries:
            vocab = {t for c in (entry.table, *entry.columns) for t in terms(c)}
            for term in vocab:
                df[term] = df.get(term, 0) + 1
            self._name_terms.append(tuple(dict.fromkeys(terms(entry.table))))
        self._idf = {t: math.log(1 + self._size / n) for t, n in df.items()}
        index: dict[str, list[tuple[int, str]]] = {}
        for i, entry in enumerate(entries):
            for column, values in entry.values.items():
                for value in values:
                    key = normalize_value(value)
                    if _indexable(key):
                        index.setdefault(key, []).append((i, column))
        self._values: dict[str, tuple[tuple[int, str], ...]] = {}
        self._value_weight: dict[str, float] = {}
        for key, hits in index.items():
            unique = tuple(dict.fromkeys(hits))
            dbs = {fold(entries[i].db_id) for i, _ in unique}
            self._values[key] = unique
            self._value_weight[key] = math.log(1 + len(databases) / len(dbs)) * math.sqrt(
                len(key.split())
            )

    def idf(self, term: str) -> float:
        return self._idf.get(term, 0.0)

    def link(self, question: str) -> Links:
        names = np.zeros(self._size)
        qterms = set(terms(question))
        for i, name in enumerate(self._name_terms):
            if name and all(t in qterms for t in name):
                names[i] = sum(self.idf(t) for t in name)
        values = np.zeros(self._size)
        matches: list[ValueMatch] = []
        tokens = words(question)
        used = [False] * len(tokens)
        spans = [
            (end - start, start, end)
            for start in range(len(tokens))
            for end in range(start + 1, min(len(tokens), start + MAX_VALUE_WORDS) + 1)
        ]
        for _, start, end in sorted(spans, key=lambda s: (-s[0], s[1])):
            if any(used[start:end]):
                continue
            gram = " ".join(tokens[start:end])
            hits = self._values.get(gram)
            if not hits:
                continue
            for i in range(start, end):
                used[i] = True
            weight = self._value_weight[gram]
            seen: set[int] = set()
            for entry, column in hits:
                if entry in seen:
                    continue
                seen.add(entry)
                values[entry] += weight
                matches.append(ValueMatch(gram, entry, column, weight))
        return Links(names, values, tuple(matches))


def _indexable(key: str) -> bool:
    if not key or len(key) < 2 or len(key.split()) > MAX_VALUE_WORDS:
        return False
    if key in STOPWORDS:
        return False
    return not (key.replace(" ", "").isdigit() and len(key) < 4)
