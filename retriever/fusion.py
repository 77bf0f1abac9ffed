"""Fusing the signals into a database ranking and a table ranking: the weights live here.

Signals, per table of the pool (`Signals`), each scaled to [0, 1] by its maximum over the pool:

- `questions`: votes of the nearest synthetic questions; hit i weighs
  `exp((s_i - s_max) / temperature)` and votes for its database and the tables its SQL uses;
- `dense`: cosine of the question and the table document, shifted by the pool median;
- `bm25`: BM25 over table documents;
- `names`: the table's name words all occur in the question (idf-weighted);
- `values`: question n-grams equal to indexed cell values, weighted by rarity across databases;
- `semantic`: question words and word pairs linked to table and column names by embedding
  cosine (`retriever.semantic`), the one lexical-like signal that survives synonyms; per table
  the table's links, per database its coverage of the question (a database-level signal, not
  the maximum over its tables).

- `user`: examples people wrote (`origin` `user` among the question hits) vote for tables like
  any record (databases take no question votes), and count once more by closeness: a user
  example nearer the question than the nearest synthetic record (any database) adds how much
  nearer, scaled to reach 1 at `user_width` of cosine, to the tables its SQL uses and, times its
  database's share of the user examples' votes to the power `user_consensus`, to its database
  (the nearest such example per table and per database). Not rescaled over the pool: a
  question that no user example matches better than the synthetic records gets nothing from
  them, so examples for some databases pull questions about the others towards them as little
  as possible. Weight `user`.

- `bm25_margin` (databases only): how far BM25's best database leads the runner-up, given to
  that database alone. BM25 is the signal that reads documentation: where a database's tables
  are described, its lead is large when the question uses the descriptions' words, and this
  lets a clear lead count for more than the fixed `bm25` weight would.

A database scores the weighted sum of its signals (votes summed over its hits; table signals by
their maximum over its tables), less a size prior: `db_size` times log(tables / `size_floor`)
for a database of more than `size_floor` tables. The best of many tables' scores is high by
chance; without the prior a warehouse database of hundreds of wide tables outranks the one a
question is about. A table scores the weighted sum of its own signals inside its database; the
pool-wide table ranking adds `table_database` times its database's score.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

Array = npt.NDArray[np.float64]

SIGNALS = ("questions", "dense", "bm25", "names", "values", "semantic")
#: the database signals: each of `SIGNALS`, and `bm25_margin`, the lead of BM25's best database
#: over the runner-up (on that database only, 0 elsewhere)
DATABASE_SIGNALS = (*SIGNALS, "bm25_margin")


@dataclass(frozen=True)
class FusionWeights:
    """Weights of the signals (see the module docstring)."""

    db_questions: float = 0.07
    db_dense: float = 0.33
    db_bm25: float = 0.21
    db_names: float = 0.0
    db_values: float = 0.27
    db_semantic: float = 0.44
    db_bm25_margin: float = 0.3
    #: the size prior (see the module docstring): weight of log(tables), and the number of
    #: tables up to which a database pays nothing
    db_size: float = 0.06
    size_floor: int = 12
    table_questions: float = 1.0
    table_dense: float = 1.0
    table_bm25: float = 0.5
    table_names: float = 0.2
    table_values: float = 1.0
    table_semantic: float = 0.5
    #: users' examples (see the module docstring): weight (for databases and tables), the
    #: cosine margin over the nearest synthetic record at which closeness reaches 1, and the
    #: exponent of a database's share of their votes (0: ignored)
    user: float = 1.0
    user_width: float = 0.2
    user_consensus: float = 2.0
    #: weight of the database score in the pool-wide table ranking
    table_database: float = 2.0
    #: softmax temperature over question-hit cosines (smaller: the nearest hit dominates)
    temperature: float = 0.05
    #: the configuration's own signals (`retriever.signal`): (name, table weight, database
    #: weight) each
    extra: tuple[tuple[str, float, float], ...] = ()

    def database(self) -> dict[str, float]:
        out = {s: getattr(self, f"db_{s}") for s in DATABASE_SIGNALS}
        out.update((name, weight) for name, _, weight in self.extra)
        return out

    def table(self) -> dict[str, float]:
        out = {s: getattr(self, f"table_{s}") for s in SIGNALS}
        out.update((name, weight) for name, weight, _ in self.extra)
        return out

    def with_extra(self, extra: tuple[tuple[str, float, float], ...]) -> FusionWeights:
        return replace(self, extra=extra)


#: The weights `Retriever` uses unless given others. Chosen on train questions only, never on
#: measured ones: table weights by coordinate ascent on Spider and Spider-Syn train, database
#: weights fitted on Spider, Spider-Syn and BIRD train (`benchmarks/tune_fusion.py`), the users'
#: examples rule by `benchmarks/user_example_rules.py`, the size prior's weight on held-out
#: synthetic questions of Spider and Spider 2.0-lite (its floor on Spider 2.0-lite's dev half);
#: each choice and its figures are in the decision log of docs/BENCHMARKS.md.
DEFAULT_WEIGHTS = FusionWeights()


@dataclass
class Signals:
    """Raw per-table signals of one question (arrays aligned with the pool's entries) plus the
    per-database question votes."""

    table: dict[str, Array]
    db_votes: Array
    table_votes: Array
    #: the embedded question
    vector: npt.NDArray[np.float32] | None = None
    #: signals defined per database rather than per table (`semantic` coverage), unscaled
    database: dict[str, Array] = field(default_factory=dict)
    #: cosine of the nearest user example per database and per table (0: none among the hits)
    user_db: Array | None = None
    user_table: Array | None = None
    #: cosine of the nearest synthetic record (0: none among the hits)
    synthetic_best: float = 0.0
    #: each database's share of the user examples' votes (softmax over their cosines)
    user_share: Array | None = None


def scale(values: Array) -> Array:
    """`values` divided by their maximum (all zeros stay zeros; negatives clip to 0)."""
    top = float(values.max()) if values.size else 0.0
    if top <= 0.0:
        return np.zeros_like(values, dtype=np.float64)
    out = values / top
    return np.maximum(out, 0.0, out=out)


def shift_dense(cosines: Array, median: float | None = None) -> Array:
    """Cosines relative to the pool: 0 at the median (theirs unless given), 1 at the best
    table."""
    if not cosines.size:
        return cosines.astype(np.float64)
    median = float(np.median(cosines)) if median is None else median
    top = float(cosines.max())
    if top <= median:
        return np.zeros_like(cosines, dtype=np.float64)
    out = (cosines - median) / (top - median)
    return np.maximum(out, 0.0, out=out).astype(np.float64, copy=False)


def user_closeness(cosines: Array, synthetic_best: float, weights: FusionWeights) -> Array:
    """Cosines of user examples mapped to [0, 1] against the nearest synthetic record's (see
    the module docstring)."""
    closeness = np.clip((cosines - synthetic_best) / max(weights.user_width, 1e-6), 0.0, 1.0)
    return np.where(cosines > 0, closeness, 0.0)


def user_nearest(
    scores: list[float],
    db_index: list[int],
    table_index: list[list[int]],
    n_dbs: int,
    n_tables: int,
    temperature: float,
) -> tuple[Array, Array, Array]:
    """The best cosine per database and per table among user hits (hit i: db `db_index[i]`,
    tables `table_index[i]`), and each database's share of their votes."""
    dbs = np.zeros(n_dbs)
    tables = np.zeros(n_tables)
    for score, db, tabs in zip(scores, db_index, table_index, strict=True):
        if db >= 0:
            dbs[db] = max(dbs[db], score)
        for t in tabs:
            tables[t] = max(tables[t], score)
    votes, _ = question_votes(scores, db_index, [[]] * len(scores), n_dbs, 0, temperature)
    total = float(votes.sum())
    return dbs, tables, votes / total if total > 0 else votes


def question_votes(
    scores: list[float],
    db_index: list[int],
    table_index: list[list[int]],
    n_dbs: int,
    n_tables: int,
    temperature: float,
) -> tuple[Array, Array]:
    """Votes of question hits for databases and tables (hit i: db `db_index[i]`, tables
    `table_index[i]`), before scaling."""
    dbs = np.zeros(n_dbs)
    tables = np.zeros(n_tables)
    if not scores:
        return dbs, tables
    best = max(scores)
    for score, db, tabs in zip(scores, db_index, table_index, strict=True):
        weight = float(np.exp((score - best) / max(temperature, 1e-6)))
        if db >= 0:
            dbs[db] += weight
        for t in tabs:
            tables[t] += weight
    return dbs, tables


def scaled_tables(
    signals: Signals, n_tables: int, dense_median: float | None = None
) -> dict[str, Array]:
    """Each table signal scaled over the pool (`dense` shifted by its median, or by
    `dense_median`)."""
    scaled = {
        "questions": scale(signals.table_votes),
        "dense": shift_dense(signals.table["dense"], dense_median),
        "bm25": scale(signals.table["bm25"]),
        "names": scale(signals.table["names"]),
        "values": scale(signals.table["values"]),
        "semantic": scale(signals.table.get("semantic", np.zeros(n_tables))),
    }
    for name, values in signals.table.items():  # the configuration's own signals
        if name not in scaled:
            scaled[name] = scale(values)
    return scaled


def lead(values: Array) -> Array:
    """The best entry's lead over the second best, at the best's position (ties: the first);
    zeros elsewhere."""
    out = np.zeros_like(values, dtype=np.float64)
    if len(values) > 1:
        # two passes of max, not np.partition: that takes 1 ms on 10,000 mostly equal values
        best = int(np.argmax(values))
        second = max(values[:best].max(initial=-np.inf), values[best + 1 :].max(initial=-np.inf))
        out[best] = values[best] - second
    return out


def database_signals(
    signals: Signals,
    scaled: dict[str, Array],
    db_of: npt.NDArray[np.int64],
    n_dbs: int,
    names: Sequence[str] = DATABASE_SIGNALS,
) -> dict[str, Array]:
    """Each signal in `names` per database, before weighting: the question votes, a signal
    defined per database (`semantic` coverage), the best of its tables' `scaled` values, or
    (`bm25_margin`) the `lead` of the best database by BM25."""
    out: dict[str, Array] = {}
    for name in names:
        if name == "questions":
            out[name] = scale(signals.db_votes)
        elif name in signals.database:
            out[name] = scale(signals.database[name])
        elif name == "bm25_margin":
            bm25 = out.get("bm25")
            if bm25 is None:
                bm25 = database_signals(signals, scaled, db_of, n_dbs, ["bm25"])["bm25"]
            out[name] = lead(bm25)
        else:
            out[name] = np.zeros(n_dbs)
            np.maximum.at(out[name], db_of, scaled[name])
    return out


def best_first(scores: Array, k: int) -> npt.NDArray[np.int64]:
    """Positions of the `k` highest `scores`, best first, ties in position order: the head of
    `np.argsort(-scores, kind="stable")` without sorting the whole pool."""
    if k >= len(scores):
        return np.argsort(-scores, kind="stable")
    kth = np.partition(scores, len(scores) - k)[len(scores) - k]
    candidates = np.flatnonzero(scores >= kth)
    return candidates[np.argsort(-scores[candidates], kind="stable")][:k]


def size_prior(db_of: npt.NDArray[np.int64], n_dbs: int, weights: FusionWeights) -> Array:
    """`db_size` times log(tables / `size_floor`) for each database of more than `size_floor`
    tables (`db_of`: the database of each table), 0 for the others."""
    if not weights.db_size:
        return np.zeros(n_dbs)
    floor = max(weights.size_floor, 1)
    tables = np.bincount(db_of, minlength=n_dbs)
    return weights.db_size * np.log(np.maximum(tables, floor) / floor)


def fuse(
    signals: Signals,
    db_of: npt.NDArray[np.int64],
    n_dbs: int,
    weights: FusionWeights,
    scaled: dict[str, Array] | None = None,
) -> tuple[Array, Array, Array]:
    """(database scores, table scores inside their database, pool-wide table scores).
    `scaled`: the signals' `scaled_tables`, when the caller has them."""
    scaled = scaled_tables(signals, len(db_of)) if scaled is None else scaled
    table_score = np.zeros(len(db_of))
    for name, w in weights.table().items():
        if w:
            table_score += w * scaled[name]
    if signals.user_table is not None and weights.user:
        table_score += weights.user * user_closeness(
            signals.user_table, signals.synthetic_best, weights
        )
    db_score = -size_prior(db_of, n_dbs, weights)
    db_weights = {name: w for name, w in weights.database().items() if w}
    for name, values in database_signals(signals, scaled, db_of, n_dbs, list(db_weights)).items():
        db_score += db_weights[name] * values
    if signals.user_db is not None and weights.user:
        closeness = user_closeness(signals.user_db, signals.synthetic_best, weights)
        if weights.user_consensus and signals.user_share is not None:
            closeness = closeness * signals.user_share**weights.user_consensus
        db_score += weights.user * closeness
    pool = table_score + weights.table_database * db_score[db_of]
    return db_score, table_score, pool
