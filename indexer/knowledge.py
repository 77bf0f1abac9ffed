"""Knowledge-base documents other than synthetic questions: one document per table.

The table document is what the dense and BM25 table baselines and the retriever's table signal
search: the table's name and columns in words, each followed by the start of its description
when it has one ("t bil (total bilirubin)"), the tables it links to, and sampled text values.
"""

from __future__ import annotations

import re
from typing import Any

from schemagraph import Database, DatabaseSample, Table
from schemagraph.documentation import summary
from schemagraph.model import fold

#: words of a description kept in a table document: MiniLM reads 256 word pieces of a document
TABLE_SUMMARY_WORDS = 24
COLUMN_SUMMARY_WORDS = 12

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def words(name: str) -> str:
    """`StuID` → "stu id", `cars_data` → "cars data": a name as words, lower case."""
    spaced = _CAMEL.sub(" ", name).replace("_", " ").replace("-", " ")
    return " ".join(spaced.lower().split())


def table_document(
    db: Database, table: Table, sample: DatabaseSample | None = None, max_values: int = 20
) -> dict[str, Any]:
    """The payload (with `text` to embed) describing one table."""
    values: dict[str, list[str]] = {}
    table_sample = sample.table(table.name) if sample else None
    if table_sample:
        values = {c: list(v[:max_values]) for c, v in table_sample.text_values.items()}
    column_words = ", ".join(
        _described(words(c.name), c.description, COLUMN_SUMMARY_WORDS) for c in table.columns
    )
    joins = sorted(
        {fk.ref_table for fk in table.foreign_keys if fold(fk.ref_table) != fold(table.name)}
    )
    name = _described(words(table.name), table.description, TABLE_SUMMARY_WORDS)
    text = f"{name}: {column_words}"
    if joins:
        text += f". linked to {', '.join(words(j) for j in joins)}"
    return {
        "db_id": db.id,
        "table": table.name,
        "text": text,
        "columns": [c.name for c in table.columns],
        "primary_key": list(table.primary_key),
        "foreign_keys": [
            {
                "columns": list(fk.columns),
                "ref_table": fk.ref_table,
                "ref_columns": list(fk.ref_columns),
            }
            for fk in table.foreign_keys
        ],
        "values": values,
        "description": table.description,
        "descriptions": {c.name: c.description for c in table.columns if c.description},
    }


def _described(name: str, description: str, max_words: int) -> str:
    return f"{name} ({summary(description, max_words)})" if description else name
