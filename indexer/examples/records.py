"""Users' examples as knowledge-base records: their keys, payloads, and which ones a build keeps.

A user example enters a build as a point of the question collection like a synthetic record,
with `origin: "user"` in its payload (synthetic records carry `origin: "synthetic"`; older
builds none, which means the same). Its record key (the payload's `traversal_key`, the field
builds delete by) is derived from the example's id, the fingerprints of its tables and the
embedder, so a build plans examples exactly as it plans traversals: a key the served build
lacks is embedded and added, a key that vanished is deleted, the rest is carried over.

`plan_examples` decides which stored examples a build over `catalog` keeps: those whose
database and tables exist and whose tables have the fingerprints they had when the example was
validated. The others are left out with a reason ("table X changed since ..."), as a changed
table's synthetic records are; unlike those they cannot be re-synthesized, so they are reported
and stay in `STORE/examples.sqlite` until removed or validated again.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from indexer.examples.stored import StoredExample
from schemagraph import Catalog, table_fingerprint
from store.records import ORIGIN, USER, USER_SYNTHESIZER

KEY_PREFIX = "user:"

_NAMESPACE = uuid.UUID("0e3b3a52-7f55-4b0c-8d0c-6a1f3c9e2d14")


def example_key(example: StoredExample, embedder_name: str) -> str:
    """The record key of `example` in a build embedded by `embedder_name`."""
    prints = sorted(f"{t}={p}" for t, p in example.fingerprints)
    text = "\x1f".join([example.id, embedder_name, *prints])
    return KEY_PREFIX + hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def example_point_id(key: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, key))


def example_payload(example: StoredExample, key: str, build_id: str) -> dict[str, Any]:
    return {
        "question": example.question,
        "sql": example.sql,
        "db_id": example.db_id,
        "tables": list(example.tables),
        ORIGIN: USER,
        "synthesizer": USER_SYNTHESIZER,
        "example_id": example.id,
        "source": example.source,
        "line": example.line,
        "traversal_key": key,
        "fingerprints": dict(example.fingerprints),
        "build_id": build_id,
    }


@dataclass(frozen=True)
class Dropped:
    """A stored example a build leaves out, and why."""

    id: str
    where: str
    reason: str

    def as_dict(self) -> dict[str, str]:
        return {"id": self.id, "where": self.where, "reason": self.reason}


@dataclass(frozen=True)
class ExamplePlan:
    """`keyed`: the examples a build over the catalog keeps, by record key; `dropped`: the
    others."""

    keyed: dict[str, StoredExample]
    dropped: tuple[Dropped, ...]


def stale_reason(catalog: Catalog, example: StoredExample) -> str | None:
    """Why `example` no longer fits `catalog` (None: it does)."""
    if example.db_id not in catalog:
        return f"database {example.db_id!r} is no longer in the catalog"
    db = catalog.database(example.db_id)
    for table, fingerprint in example.fingerprints:
        if not db.has_table(table):
            return f"table {table!r} of {db.id} is gone"
        if table_fingerprint(db.table(table)) != fingerprint:
            return f"table {table!r} of {db.id} changed since the example was validated"
    return None


def plan_examples(
    catalog: Catalog, examples: Iterable[StoredExample], embedder_name: str
) -> ExamplePlan:
    keyed: dict[str, StoredExample] = {}
    dropped: list[Dropped] = []
    for example in examples:
        reason = stale_reason(catalog, example)
        if reason is None:
            keyed[example_key(example, embedder_name)] = example
        else:
            dropped.append(Dropped(example.id, example.where, reason))
    return ExamplePlan(keyed, tuple(dropped))
