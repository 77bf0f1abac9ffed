"""The table side of the knowledge base, held in memory: one `TableEntry` per table of the pool.

Entries come from the store's table collection (payload and vector, read once when a retriever
opens) or, for baselines and tests, straight from a catalog with the indexer's `table_document`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from providers import Embedder
from schemagraph import Catalog, DatabaseSample, sample_database
from schemagraph.model import fold
from store.table_documents import VALUES_PER_COLUMN, table_document


@dataclass(frozen=True)
class ForeignKeyRef:
    columns: tuple[str, ...]
    ref_table: str
    ref_columns: tuple[str, ...]


@dataclass(frozen=True)
class TableEntry:
    """One table: where it lives, its document text and what linking needs."""

    db_id: str
    table: str
    text: str
    columns: tuple[str, ...] = ()
    primary_key: tuple[str, ...] = ()
    foreign_keys: tuple[ForeignKeyRef, ...] = ()
    values: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: the text BM25 reads: `text` and the descriptions ("" when it is `text`)
    lexical: str = ""
    #: documentation: the table's description and its columns' (by column name)
    description: str = ""
    descriptions: Mapping[str, str] = field(default_factory=dict)
    #: the name with its dataset, as words read it (`schemagraph.model.Table.qualified_name`;
    #: "" in a store written before table documents carried it)
    qualified: str = ""
    #: the name as the engine qualifies it, dotted (`project.dataset.table`), or "" when
    #: `table` is what the engine calls it or the store predates it
    engine_name: str = ""

    @property
    def word_name(self) -> str:
        """The name that name-matching signals read: `qualified`, else `table`."""
        return self.qualified or self.table

    @property
    def lexical_text(self) -> str:
        return self.lexical or self.text

    @property
    def key(self) -> tuple[str, str]:
        """(folded db id, folded table name): how tables are compared."""
        return fold(self.db_id), fold(self.table)

    @staticmethod
    def from_payload(payload: Mapping[str, Any]) -> TableEntry:
        fks = tuple(
            ForeignKeyRef(
                tuple(fk.get("columns", ())),
                str(fk.get("ref_table", "")),
                tuple(fk.get("ref_columns", ())),
            )
            for fk in payload.get("foreign_keys", ()) or ()
        )
        values = {
            str(col): tuple(str(v) for v in vals)
            for col, vals in (payload.get("values") or {}).items()
        }
        return TableEntry(
            db_id=str(payload["db_id"]),
            table=str(payload["table"]),
            text=str(payload.get("text", payload["table"])),
            columns=tuple(payload.get("columns", ()) or ()),
            primary_key=tuple(payload.get("primary_key", ()) or ()),
            foreign_keys=fks,
            values=values,
            lexical=str(payload.get("lexical") or ""),
            description=str(payload.get("description") or ""),
            descriptions={
                str(col): str(text) for col, text in (payload.get("descriptions") or {}).items()
            },
            qualified=str(payload.get("qualified") or ""),
            engine_name=str(payload.get("engine_name") or ""),
        )


def entries_from_catalog(
    catalog: Catalog,
    *,
    with_values: bool = True,
    max_values: int = VALUES_PER_COLUMN,
    seed: int = 0,
) -> list[TableEntry]:
    """Table entries built as the indexer builds them
    (`store.table_documents.table_document`)."""
    out: list[TableEntry] = []
    for db in catalog:
        sample: DatabaseSample | None = sample_database(db, seed=seed) if with_values else None
        for table in db.tables:
            doc = table_document(db, table, sample, max_values=max_values)
            out.append(TableEntry.from_payload(doc))
    return out


def embed_entries(entries: Sequence[TableEntry], embedder: Embedder) -> npt.NDArray[np.float32]:
    """The document vectors of `entries`, rows in order."""
    return np.asarray(embedder.embed_documents([e.text for e in entries]), dtype=np.float32)


def group_by_database(entries: Iterable[TableEntry]) -> dict[str, list[int]]:
    """Folded db id → indices of its entries, in entry order."""
    groups: dict[str, list[int]] = {}
    for i, entry in enumerate(entries):
        groups.setdefault(fold(entry.db_id), []).append(i)
    return groups
