"""Lexical signals over the table entries: BM25 over table documents, and linking of the
question to table names and to indexed cell values.

A value that occurs in one database only is strong evidence ("Who lives in Ottawa?"), so a
value match weighs `log(1 + databases / databases holding the value)`; common values ("yes",
"male") weigh little. A value matches whole written words only (the value 'git' is not in
"GitHub"), and overlapping matches keep the longest span. The values are the sampled
rows' and those the column descriptions quote ("such as 'Eredivisie'").
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence, Set
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from rank_bm25 import BM25Okapi

from providers import tokenize_words
from retriever.tables import TableEntry
from retriever.text import STOPWORDS, joined_terms, normalize_value, terms
from schemagraph.documentation import quoted_values
from schemagraph.humanize import humanize
from schemagraph.model import fold

MAX_VALUE_WORDS = 5
#: SQL type names and NULL, which descriptions quote as often as values ("stored as 'text'")
TYPE_NAMES = frozenset(
    {"text", "integer", "int", "real", "float", "double", "numeric", "decimal", "number"}
    | {"date", "datetime", "time", "timestamp", "boolean", "bool", "varchar", "char", "string"}
    | {"null"}
)


class TableBM25:
    """BM25 (rank-bm25's Okapi) over one document per table (its `lexical_text`: the table
    document with its descriptions).

    rank-bm25 computes idf (with its epsilon floor), document lengths and avgdl, but its
    `get_scores` loops in Python over every document for every query term. So the index is
    turned, once, into postings: per term, the documents holding it and each one's BM25
    contribution, computed with `get_scores`' own expression. A query then adds the postings of
    its terms in order, once per occurrence like `get_scores` (a term outside the corpus adds
    nothing); the sums equal `get_scores`.
    """

    def __init__(self, entries: Sequence[TableEntry]) -> None:
        corpus = [terms(e.lexical_text) or ["_"] for e in entries]
        self._size = len(entries)
        bm25 = BM25Okapi(corpus)
        self._postings: dict[str, tuple[npt.NDArray[np.intp], npt.NDArray[np.float64]]] = {}
        docs: dict[str, list[int]] = {}
        for i, freqs in enumerate(bm25.doc_freqs):
            for term in freqs:
                docs.setdefault(term, []).append(i)
        doc_len = np.asarray(bm25.doc_len)
        for term, holders in docs.items():
            index = np.asarray(holders, dtype=np.intp)
            freq = np.asarray([bm25.doc_freqs[i][term] for i in holders])
            length = doc_len[index]
            contribution = bm25.idf[term] * (
                freq
                * (bm25.k1 + 1)
                / (freq + bm25.k1 * (1 - bm25.b + bm25.b * length / bm25.avgdl))
            )
            self._postings[term] = (index, contribution)

    def scores(self, question: str) -> npt.NDArray[np.float64]:
        score = np.zeros(self._size)
        for term in [*terms(question), *joined_terms(question, self._postings)]:
            posting = self._postings.get(term)
            if posting is not None:
                score[posting[0]] += posting[1]
        return score


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
    """Links question words to table names and n-grams to cell values of the entries.

    Both lookups are indexed so a query touches only what it can match: a table name is filed
    under its first term (a name links when all its terms are in the question, so only names
    whose first term is there need checking), and every word prefix of an indexed value is kept
    so extending an n-gram stops as soon as no value starts with it.
    """

    def __init__(self, entries: Sequence[TableEntry]) -> None:
        self._size = len(entries)
        databases = {fold(e.db_id) for e in entries}
        name_terms: list[tuple[str, ...]] = []
        df: dict[str, int] = {}
        for entry in entries:
            vocab = {t for c in (entry.word_name, *entry.columns) for t in terms(c)}
            for term in vocab:
                df[term] = df.get(term, 0) + 1
            name_terms.append(tuple(dict.fromkeys(terms(entry.word_name))))
        self._idf = {t: math.log(1 + self._size / n) for t, n in df.items()}
        self._names: dict[str, list[tuple[int, tuple[str, ...], float]]] = {}
        for i, name in enumerate(name_terms):
            if name:
                score = sum(self.idf(t) for t in name)
                self._names.setdefault(name[0], []).append((i, name[1:], score))
        names = _schema_names(entries) if any(e.descriptions for e in entries) else set()
        index: dict[str, list[tuple[int, str]]] = {}
        for i, entry in enumerate(entries):
            for column, values in _values_of(entry, names):
                for value in values:
                    key = normalize_value(value)
                    if _indexable(key):
                        index.setdefault(key, []).append((i, column))
        #: per value: its weight and, per entry holding it, the first column it is in
        self._values: dict[str, tuple[float, tuple[tuple[int, str], ...]]] = {}
        self._prefixes: set[str] = set()
        for key, hits in index.items():
            first_column: dict[int, str] = {}
            for i, column in hits:
                first_column.setdefault(i, column)
            dbs = {fold(entries[i].db_id) for i in first_column}
            weight = math.log(1 + len(databases) / len(dbs)) * math.sqrt(len(key.split()))
            self._values[key] = (weight, tuple(first_column.items()))
            parts = key.split(" ")
            self._prefixes.update(" ".join(parts[:n]) for n in range(1, len(parts) + 1))

    def idf(self, term: str) -> float:
        return self._idf.get(term, 0.0)

    def link(self, question: str) -> Links:
        names = np.zeros(self._size)
        qterms = {*terms(question), *joined_terms(question, self._idf)}
        for term in qterms:
            for i, rest, score in self._names.get(term, ()):
                if all(t in qterms for t in rest):
                    names[i] = score
        values = np.zeros(self._size)
        matches: list[ValueMatch] = []
        written = tokenize_words(question)
        tokens = [token for word in written for token in word]
        used = [False] * len(tokens)
        for start, end, gram in self._value_spans(tokens, _word_edges(written)):
            if any(used[start:end]):
                continue
            for i in range(start, end):
                used[i] = True
            weight, hits = self._values[gram]
            for entry, column in hits:
                values[entry] += weight
                matches.append(ValueMatch(gram, entry, column, weight))
        return Links(names, values, tuple(matches))

    def _value_spans(
        self, tokens: list[str], edges: tuple[set[int], set[int]]
    ) -> list[tuple[int, int, str]]:
        """(start, end, text) of the n-grams of `tokens` that are indexed values and whole
        written words (`edges`: the positions where words start and end; the value 'git' is not
        in "GitHub"), the longest first, then the leftmost: the order overlapping matches are
        resolved in."""
        starts, ends = edges
        spans: list[tuple[int, int, str]] = []
        for start in sorted(starts):
            gram = tokens[start]
            end = start + 1
            while gram in self._prefixes:
                if gram in self._values and end in ends:
                    spans.append((start, end, gram))
                if end == len(tokens) or end - start == MAX_VALUE_WORDS:
                    break
                gram = f"{gram} {tokens[end]}"
                end += 1
        spans.sort(key=lambda s: (s[0] - s[1], s[0]))
        return spans


def _word_edges(written: list[list[str]]) -> tuple[set[int], set[int]]:
    """The token positions where each written word starts, and where each ends (exclusive)."""
    starts, ends, at = set(), set(), 0
    for word in written:
        starts.add(at)
        at += len(word)
        ends.add(at)
    return starts, ends


def _schema_names(entries: Sequence[TableEntry]) -> set[str]:
    """Every table and column name of the pool, as written and humanized (`fname` → "first
    name"), and the type names, as `normalize_value` writes them."""
    names = set(TYPE_NAMES)
    # each distinct name once: a warehouse repeats its columns across hundreds of shards
    for name in {n for entry in entries for n in (entry.table, entry.word_name, *entry.columns)}:
        names.add(normalize_value(name))
        names.add(normalize_value(humanize(name)))
    return names


def _values_of(entry: TableEntry, names: Set[str]) -> Iterator[tuple[str, Sequence[str]]]:
    """(column, values) of `entry`: its sampled values, then the values its column descriptions
    quote (a schema-only source has no others) but the `names` (`_schema_names`). Descriptions
    quote names as often as values ("the 'first name' column", "stored as 'date'"), and a
    quoted name that is a value too ('ID' for Idaho) would link every question that says it."""
    yield from entry.values.items()
    for column, text in entry.descriptions.items():
        yield column, [v for v in quoted_values(text) if normalize_value(v) not in names]


def _indexable(key: str) -> bool:
    if not key or len(key) < 2 or len(key.split()) > MAX_VALUE_WORDS:
        return False
    if key in STOPWORDS:
        return False
    return not (key.replace(" ", "").isdigit() and len(key) < 4)
