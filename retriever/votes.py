"""The questions nearest to a question, as votes: each hit (a synthetic record or a user's
example) votes for its database and its tables (`retriever.fusion.question_votes`), and users'
examples also count apart (`retriever.fusion.user_nearest`). `QuestionVotes` maps a hit's
database and tables to the retriever's positions once per record: the same records come back
query after query."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from retriever.fusion import question_votes, user_nearest
from retriever.knowledge import QuestionHit
from schemagraph.model import fold
from store.records import USER

Array = npt.NDArray[np.float64]

#: records whose positions are remembered, at most
REMEMBERED = 1_000_000


@dataclass(frozen=True)
class Votes:
    """The `retriever.fusion.Signals` fields the hits give."""

    db_votes: Array
    table_votes: Array
    user_db: Array | None
    user_table: Array | None
    user_share: Array | None
    synthetic_best: float


class QuestionVotes:
    """Votes over `databases` databases and `tables` tables; `db_pos`: folded database id ->
    position; `entry_pos`: (folded database id, folded table) -> table position."""

    def __init__(
        self,
        databases: int,
        tables: int,
        db_pos: Mapping[str, int],
        entry_pos: Mapping[tuple[str, str], int],
        temperature: float,
    ) -> None:
        self.databases = databases
        self.tables = tables
        self._db_pos = db_pos
        self._entry_pos = entry_pos
        self.temperature = temperature
        self._positions: dict[tuple[str, tuple[str, ...]], tuple[int, list[int]]] = {}

    def of(self, hits: Sequence[QuestionHit]) -> Votes:
        db_index: list[int] = []
        table_index: list[list[int]] = []
        for hit in hits:
            db, tables = self.positions(hit.db_id, hit.tables)
            db_index.append(db)
            table_index.append(tables)
        db_votes, table_votes = question_votes(
            [h.score for h in hits],
            db_index,
            table_index,
            self.databases,
            self.tables,
            self.temperature,
        )
        users = [i for i, h in enumerate(hits) if h.origin == USER]
        user_db = user_table = user_share = None
        if users:
            user_db, user_table, user_share = user_nearest(
                [hits[i].score for i in users],
                [db_index[i] for i in users],
                [table_index[i] for i in users],
                self.databases,
                self.tables,
                self.temperature,
            )
        return Votes(
            db_votes,
            table_votes,
            user_db,
            user_table,
            user_share,
            synthetic_best=max((h.score for h in hits if h.origin != USER), default=0.0),
        )

    def positions(self, db_id: str, tables: tuple[str, ...]) -> tuple[int, list[int]]:
        """The database position (-1: not in the pool) and the table positions of a record's
        tables."""
        found = self._positions.get((db_id, tables))
        if found is None:
            db_key = fold(db_id)
            rows = [self._entry_pos.get((db_key, fold(t))) for t in tables]
            found = (self._db_pos.get(db_key, -1), [r for r in rows if r is not None])
            if len(self._positions) < REMEMBERED:
                self._positions[(db_id, tables)] = found
        return found
