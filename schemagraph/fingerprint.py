"""Stable sha256 fingerprints of tables and databases over their canonical schema.

A fingerprint changes when a table's name, columns (name, type, primary key), foreign keys or
documentation (table and column descriptions) change, and not when the order of foreign keys or
the case of names does; later builds compare them to tell what is new, changed or gone. A table
without descriptions keeps the fingerprint it had before descriptions existed.
"""

from __future__ import annotations

import hashlib
import json

from schemagraph.model import Database, Table, fold


def _canonical_table(table: Table) -> dict[str, object]:
    described = {fold(c.name): c.description for c in table.columns if c.description}
    documentation = (
        {"documentation": [table.description, described]} if table.description or described else {}
    )
    return {
        **documentation,
        "name": fold(table.name),
        "columns": [[fold(c.name), c.type.casefold(), c.primary_key] for c in table.columns],
        "foreign_keys": sorted(
            [
                [fold(c) for c in fk.columns],
                fold(fk.ref_table),
                [fold(c) for c in fk.ref_columns],
            ]
            for fk in table.foreign_keys
        ),
    }


def _digest(value: object) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def table_fingerprint(table: Table) -> str:
    return _digest(_canonical_table(table))


def database_fingerprint(db: Database) -> str:
    return _digest([fold(db.id), sorted(table_fingerprint(t) for t in db.tables)])
