"""BIRD train in a mixed pool: every db_id prefixed `bird_` (so that the pool can hold Spider's
databases too without a clash), the evaluated questions drawn by a seed, and BIRD's column
meanings as a `docs:` file without the database names they spell out.
"""

from __future__ import annotations

import random
import re
from typing import Any

PREFIX = "bird_"


def prefixed_tables(tables: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries of a tables.json with every db_id prefixed."""
    return [{**entry, "db_id": PREFIX + entry["db_id"]} for entry in tables]


def evaluated_questions(rows: list[dict[str, Any]], count: int, seed: int) -> list[dict[str, Any]]:
    """The first `count` of `rows` shuffled by `random.Random(seed)`, db_ids prefixed."""
    shuffled = list(rows)
    random.Random(seed).shuffle(shuffled)
    return [{**row, "db_id": PREFIX + row["db_id"]} for row in shuffled[:count]]


def without_database_name(text: str, db_id: str) -> str:
    """`text` without the phrases that name database `db_id` ("of the 'hockey' database",
    "identified by db id 'address'")."""
    name = re.escape(db_id)
    quoted = rf"['\"`]?{name}['\"`]?"
    text = re.sub(
        rf",?\s*(?:identified (?:by db id|as)|(?:with)?in|of|from|for)\s+(?:the\s+)?{quoted}"
        rf"(?:\s+database)?\b",
        "",
        text,
        flags=re.IGNORECASE,
    )
    text = re.sub(rf"\b(?:the\s+)?{quoted}\s+database\b", "the database", text, flags=re.I)
    return re.sub(r"\s+", " ", text).strip()


def docs_entries(meanings: dict[str, str]) -> dict[str, str]:
    """BIRD's column meanings (`"db|table|column": text`) as a `docs:` file's entries."""
    out: dict[str, str] = {}
    for key, text in meanings.items():
        db_id, table, column = key.split("|", 2)
        out[f"{PREFIX}{db_id}.{table}.{column}"] = without_database_name(text, db_id)
    return out
