"""From a question's signals to its ranking: fusion (`retriever.fusion`), the exact dense scores
of the candidates when the table signal is estimated by cells, twins told apart and related
copies grouped (`retriever.twins`), each database's chosen tables and bridges, the pool-wide
table list, and the confidence. `Ranker` holds what these steps read of the estate, built once
per retriever; every constant it uses is a field of `RetrieverConfig`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from retriever.completion import fk_adjacency, join_paths
from retriever.config import RetrieverConfig
from retriever.errors import RetrieverError
from retriever.fusion import (
    Array,
    FusionWeights,
    Signals,
    best_first,
    fuse,
    scaled_tables,
    shift_dense,
)
from retriever.knowledge import QuestionHit
from retriever.question_index import Cells
from retriever.result import RankedDatabase, RankedTable
from retriever.tables import TableEntry
from retriever.twins import AlsoIn, TwinNote, TwinSeparator, relations_in
from schemagraph.model import fold
from store.manifest import Manifest


@dataclass(frozen=True)
class Ranked:
    """A question's ranking: its databases (best first, twins and copies ordered), the
    pool-wide table list, the confidence, the twins note and the copies that also answer it;
    `best`: the first database's position among the retriever's databases."""

    databases: tuple[RankedDatabase, ...]
    tables: tuple[tuple[str, str], ...]
    confidence: float
    twins: TwinNote | None
    also_in: tuple[AlsoIn, ...]
    best: int


class Ranker:
    """Ranks a retriever's databases and tables from a question's signals.

    `entries`/`vectors`: the table documents and their embeddings; `members[d]`: the entry
    positions of database `d` (`db_ids[d]`), `db_of[i]`: the database of entry `i`;
    `table_cells`: the cells that estimate the dense signal (None: it is exact); `manifest`:
    the build's, whose families of sharded tables (the build indexes a family once, as its
    newest member: `schemagraph.families`) and twins and containment it reads (None: twins
    are found here, `retriever.twins.TwinSeparator`)."""

    def __init__(
        self,
        entries: Sequence[TableEntry],
        vectors: npt.NDArray[np.float32],
        db_ids: Sequence[str],
        members: Sequence[npt.NDArray[np.int64]],
        db_of: npt.NDArray[np.int64],
        *,
        config: RetrieverConfig,
        weights: FusionWeights,
        table_cells: Cells | None,
        manifest: Manifest | None,
    ) -> None:
        self.entries = entries
        self.vectors = vectors
        self.db_ids = db_ids
        self._db_members = members
        self._db_of = db_of
        self.config = config
        self.weights = weights
        self.table_cells = table_cells
        #: (folded db, folded table) -> the family of sharded tables that table stands for
        self.families = {
            (fold(f.database), fold(f.last)): f.to_json()
            for f in (manifest.families if manifest is not None else [])
        }
        #: database id -> the dialect its SQL is written in, as the build recorded it
        self.dialects = manifest.dialects if manifest is not None else {}
        self._in_dialect: dict[str, npt.NDArray[np.bool_]] = {}
        self._keys = [e.key for e in entries]
        self._fk = [fk_adjacency([entries[i] for i in idx]) for idx in members]
        self.twins = TwinSeparator(entries, relations_in(manifest) if manifest else None)

    def rank(
        self,
        question: str,
        signals: Signals,
        hits: Sequence[QuestionHit],
        top_databases: int,
        top_tables: int,
        dialect: str | None = None,
    ) -> Ranked:
        """`dialect`: rank only the databases whose SQL is written in it (`in_dialect`), as a
        caller that knows which engine it is connected to would."""
        allowed = None
        if dialect is not None:  # remembered: at 10,000 databases the flags take 2 ms
            allowed = self._in_dialect.get(dialect)
            if allowed is None:
                allowed = in_dialect(self.dialects, self.db_ids, dialect)
                self._in_dialect[dialect] = allowed
        dense = signals.table["dense"]
        median = float(np.median(dense)) if dense.size else 0.0
        scaled = scaled_tables(signals, len(self.entries), median)
        db_score, table_score, pool_score = self._only(
            allowed,
            *fuse(signals, self._db_of, len(self.db_ids), self.weights, scaled),
        )
        if allowed is not None:
            top_databases = min(top_databases, int(allowed.sum()))
        if self.table_cells is not None and signals.vector is not None:
            # The dense signal was estimated away from the question: exact for the candidates,
            # shifted by the same median (of the estimates: a few rows more barely move it).
            candidates = best_first(
                db_score, max(top_databases, self.config.refined_databases)
            ).tolist()
            rows = np.concatenate([self._db_members[d] for d in candidates])
            dense[rows] = self.vectors[rows] @ signals.vector
            scaled["dense"] = shift_dense(dense, median)
            db_score, table_score, pool_score = self._only(
                allowed,
                *fuse(signals, self._db_of, len(self.db_ids), self.weights, scaled),
            )
        order = best_first(db_score, top_databases)
        moved, twins = self.twins.separate(question, [self.db_ids[int(d)] for d in order])
        order = order[moved]
        databases = [self._rank_database(int(d), db_score, table_score, top_tables) for d in order]
        grouped, also_in = self.twins.group(
            [d.db_id for d in databases], databases[0].chosen_tables
        )
        order = order[grouped]
        databases = [databases[i] for i in grouped]
        flat = self._pool_ranking(databases[0], pool_score, max(20, top_tables))
        confidence = self.confidence(signals, hits, int(order[0]))
        if twins is not None and twins.told_apart_by is None:
            confidence /= len(twins.members)
        return Ranked(
            tuple(databases), tuple(flat), confidence, twins, tuple(also_in), int(order[0])
        )

    def _only(
        self, allowed: npt.NDArray[np.bool_] | None, db: Array, table: Array, pool: Array
    ) -> tuple[Array, Array, Array]:
        """The fused scores with the databases `allowed` does not flag, and their tables, last
        (-inf) in every ranking."""
        if allowed is not None:
            db[~allowed] = -np.inf
            pool[~allowed[self._db_of]] = -np.inf
        return db, table, pool

    def confidence(self, signals: Signals, hits: Sequence[QuestionHit], db: int) -> float:
        """How well the best database fits, in [0, 1]: the cosine of its nearest synthetic
        question and of its best table document, averaged (only the latter without a question
        collection), plus a bonus for matched cell values or table names."""
        members = self._db_members[db]
        if signals.vector is None or self.table_cells is None:
            dense = float(signals.table["dense"][members].max())
        else:  # exact, not a cell's estimate
            dense = float((self.vectors[members] @ signals.vector).max())
        db_key = fold(self.db_ids[db])
        nearest = max((h.score for h in hits if fold(h.db_id) == db_key), default=None)
        base = dense if nearest is None else (dense + nearest) / 2
        lexical = signals.table["values"][members].max() + signals.table["names"][members].max()
        bonus = self.config.lexical_bonus if lexical > 0 else 0.0
        return float(min(1.0, max(0.0, base + bonus)))

    def _rank_database(
        self,
        db: int,
        db_score: npt.NDArray[np.float64],
        table_score: npt.NDArray[np.float64],
        top: int,
    ) -> RankedDatabase:
        """The database's `top` best tables, the chosen ones among them (a prefix of the
        ranking), and the bridges that join the chosen ones beyond those `top`."""
        members = self._db_members[db]
        ranked = members[np.lexsort((members, -table_score[members]))].tolist()
        best = table_score[ranked[0]]
        chosen = [
            i
            for i in ranked[: min(self.config.max_chosen, top)]
            if best > 0 and table_score[i] >= self.config.choose_ratio * best
        ] or ranked[:1]
        by_name = {self._keys[i][1]: i for i in ranked}
        paths = join_paths(self._fk[db], [self._keys[i][1] for i in chosen])
        joins = {by_name[name]: pair for name, pair in paths}
        shown = ranked[:top]

        def spelled(name: str) -> str:
            return self.entries[by_name[name]].table

        def table(i: int) -> RankedTable:
            pair = joins.get(i)
            return RankedTable(
                self.entries[i].table,
                round(float(table_score[i]), 4),
                chosen=i in joins and pair is None,
                bridge=pair is not None,
                family=self.families.get(self._keys[i]),
                joins=None if pair is None else (spelled(pair[0]), spelled(pair[1])),
            )

        on_top = set(shown)
        return RankedDatabase(
            self.db_ids[db],
            round(float(db_score[db]), 4),
            tuple(table(i) for i in shown),
            tuple(table(by_name[n]) for n, pair in paths if pair and by_name[n] not in on_top),
            tuple(spelled(n) for n, _ in paths),
        )

    def _pool_ranking(
        self, best: RankedDatabase, pool_score: npt.NDArray[np.float64], size: int
    ) -> list[tuple[str, str]]:
        """Pool-wide ranking: the best database's chosen tables and bridges first, then every
        other table by pool score."""
        head = [(best.db_id, t) for t in best.chosen_tables]
        seen = {(fold(d), fold(t)) for d, t in head}
        out = list(head)
        for i in best_first(pool_score, size + len(head)).tolist():
            if pool_score[i] == -np.inf:
                break
            if self._keys[i] not in seen:
                out.append((self.entries[i].db_id, self.entries[i].table))
            if len(out) >= size:
                break
        return out


def in_dialect(
    dialects: Mapping[str, str], db_ids: Sequence[str], dialect: str
) -> npt.NDArray[np.bool_]:
    """One flag per database of `db_ids`: whether its SQL is written in `dialect` (any case), as
    `dialects` (the build's `Manifest.dialects`) says; a `RetrieverError` naming the estate's
    dialects when none is (`schemagraph.dialects.sql_dialect`: `bigquery`, `snowflake`, ...)."""
    by_db = {fold(db): d for db, d in dialects.items()}
    wanted = dialect.strip().lower()
    flags = np.array([by_db.get(fold(db)) == wanted for db in db_ids], dtype=bool)
    if not flags.any():
        known = ", ".join(sorted(set(by_db.values()))) or "none recorded (rebuild the index)"
        raise RetrieverError(f"no database of dialect {dialect!r}; this estate has: {known}")
    return flags
