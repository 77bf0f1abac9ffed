"""Knowledge-base documents other than synthetic questions: one document per table.

The table document is what the dense and BM25 table baselines and the retriever's table signal
search: the table's name (with its dataset: `Table.qualified_name`) and columns in words, the
tables it links to, and sampled text values.
Descriptions go in two ways. `text`, which is embedded, shows a described name with the
description's short phrase only ("t bil (total bilirubin)"): on BIRD train, whole descriptions
in the embedded text took MiniLM's database recall@1 from 43.0 to 25.1 (docs/BENCHMARKS.md).
`lexical`, which BM25 reads, is `text` followed by the descriptions themselves (their first
`LEXICAL_WORDS` words each): every word of a description is a term a question may use.

A wide table's `text` names each of its column families once, after its other columns
("m1 revenue to m52 revenue": `schemagraph.families.column_families`), so that the columns that
make the table what it is come first and fit in what the embedder reads. `lexical` keeps every
column name.
"""

from __future__ import annotations

from typing import Any

from schemagraph import Database, DatabaseSample, Table
from schemagraph.documentation import phrase, summary
from schemagraph.families import column_families
from schemagraph.model import fold
from schemagraph.name_words import spaced_words
from schemagraph.samples import DISTINCT_VALUES

#: raised when what a table document says changes, so that the next build rewrites them all
#: (2: column families of wide tables; 3: a warehouse table named with its dataset; 4: the
#: engine's name of a warehouse table)
DOCUMENT_VERSION = 4
#: words of each description in the `lexical` text
LEXICAL_WORDS = 60
#: distinct text values kept per column, for the retriever's value index: all that the sample
#: reads (50, chosen against 20 and 200 on Spider and Spider-Syn train: the decision log of
#: docs/BENCHMARKS.md)
VALUES_PER_COLUMN = DISTINCT_VALUES


def table_document(
    db: Database,
    table: Table,
    sample: DatabaseSample | None = None,
    max_values: int = VALUES_PER_COLUMN,
) -> dict[str, Any]:
    """The payload (with `text` to embed) describing one table."""
    values: dict[str, list[str]] = {}
    table_sample = sample.table(table.name) if sample else None
    if table_sample:
        values = {c: list(v[:max_values]) for c, v in table_sample.text_values.items()}
    split = column_families(table)
    text = _text(
        table,
        [_named(spaced_words(c.name), c.description) for c in split.singles]
        + [f"{spaced_words(f[0].name)} to {spaced_words(f[-1].name)}" for f in split.families],
    )
    if split.families:  # BM25 reads every column's name
        head = _text(table, [_named(spaced_words(c.name), c.description) for c in table.columns])
    else:
        head = text
    described = [(table.name, table.description)] + [(c.name, c.description) for c in table.columns]
    notes = ". ".join(
        f"{spaced_words(name)}: {summary(note, LEXICAL_WORDS)}" for name, note in described if note
    )
    return {
        "db_id": db.id,
        "table": table.name,
        "qualified": table.qualified_name,
        "engine_name": ".".join(table.engine_name),
        "text": text,
        "lexical": f"{head}. {notes}" if notes else head,
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


def _text(table: Table, columns: list[str]) -> str:
    """The table's name, `columns` and the tables it links to, as words."""
    text = f"{_named(spaced_words(table.qualified_name), table.description)}: {', '.join(columns)}"
    joins = sorted(
        {fk.ref_table for fk in table.foreign_keys if fold(fk.ref_table) != fold(table.name)}
    )
    if joins:
        text += f". linked to {', '.join(spaced_words(j) for j in joins)}"
    return text


def _named(name: str, description: str) -> str:
    """`name`, followed by the description's short phrase when it has one."""
    short = phrase(description)
    return f"{name} ({short})" if short and short.lower() != name.lower() else name
