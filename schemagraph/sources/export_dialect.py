"""Which engine wrote an INFORMATION_SCHEMA export, told from one file's layout.

Each engine exports its views with its own header and its own type names:

- BigQuery: COLUMN_FIELD_PATHS and TABLE_OPTIONS exist nowhere else; its COLUMNS header is in
  lower case with `is_partitioning_column`, `clustering_ordinal_position`, `is_system_defined`;
  its TABLES has a `ddl` column; its types are `INT64`, `FLOAT64`, `STRING`, `STRUCT<...>`,
  `ARRAY<...>`.
- Snowflake: TABLES with `TABLE_OWNER`, `IS_TRANSIENT`; the full COLUMNS with
  `IDENTITY_ORDERED`, `SCHEMA_EVOLUTION_RECORD`; types `NUMBER`, `TEXT`, `VARIANT`, `OBJECT`,
  `TIMESTAMP_NTZ` (the 16-column COLUMNS of older accounts says it by its types alone).
- Databricks (Unity Catalog): `full_data_type`.
- PostgreSQL: `udt_name`, `dtd_identifier`; types `character varying`, `... without time zone`.
- MySQL: `COLUMN_TYPE`, `COLUMN_KEY`; Trino: `extra_info`, types `row(...)`; SQL Server: types
  `nvarchar`, `datetime2`, `uniqueidentifier`.

`file_dialect` gives the sqlglot dialect name, or "" when the file does not say.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

#: header names (folded) only one engine writes, in order of precedence. Snowflake's full
#: COLUMNS repeats the standard's names that PostgreSQL writes (UDT_NAME, DTD_IDENTIFIER), with
#: names of its own (IDENTITY_ORDERED, SCHEMA_EVOLUTION_RECORD): its marks are tried first.
#: Headers are matched whatever their case (a tool may fold them).
HEADER_MARKS: tuple[tuple[str, frozenset[str]], ...] = (
    ("databricks", frozenset({"full_data_type", "partition_index"})),
    (
        "bigquery",
        frozenset(
            {
                "field_path",
                "option_type",
                "is_partitioning_column",
                "clustering_ordinal_position",
                "is_system_defined",
                "rounding_mode",
                "ddl",
            }
        ),
    ),
    ("mysql", frozenset({"column_key", "column_type", "privileges", "column_comment"})),
    (
        "snowflake",
        frozenset(
            {
                "is_transient",
                "table_owner",
                "clustering_key",
                "auto_clustering_on",
                "identity_ordered",
                "schema_evolution_record",
            }
        ),
    ),
    ("postgres", frozenset({"udt_name", "udt_schema", "dtd_identifier", "is_self_referencing"})),
    ("trino", frozenset({"extra_info"})),
)
#: the views only BigQuery has
BIGQUERY_VIEWS = frozenset({"COLUMN_FIELD_PATHS", "TABLE_OPTIONS"})

#: type names only one engine writes (upper case, before any `(`, `<` or space)
TYPE_MARKS: Mapping[str, str] = {
    **dict.fromkeys(("INT64", "FLOAT64", "BIGNUMERIC", "BYTES", "BOOL", "STRING"), "bigquery"),
    **dict.fromkeys(
        ("NUMBER", "TEXT", "VARIANT", "OBJECT", "TIMESTAMP_NTZ", "TIMESTAMP_LTZ", "TIMESTAMP_TZ"),
        "snowflake",
    ),
    **dict.fromkeys(("CHARACTER VARYING", "JSONB", "USER-DEFINED", "BYTEA"), "postgres"),
    "ROW": "trino",
    **dict.fromkeys(("NVARCHAR", "DATETIME2", "DATETIMEOFFSET", "UNIQUEIDENTIFIER"), "tsql"),
}
_COMPOSITE = re.compile(r"^(STRUCT|ARRAY)\s*<", re.IGNORECASE)
_HEAD = re.compile(r"^[A-Z0-9_ -]+?(?=\s*(?:[(<]|$))")
#: rows read for their types
TYPE_SAMPLE = 5000


def file_dialect(view: str, header: Sequence[str], types: Iterable[str]) -> str:
    """The dialect of the engine that wrote one exported file: `view` is the view it holds,
    `header` its column names (folded), `types` its data types (the first `TYPE_SAMPLE` are
    read)."""
    if view in BIGQUERY_VIEWS:
        return "bigquery"
    names = set(header)
    for dialect, marks in HEADER_MARKS:
        if names & marks:
            return dialect
    votes: Counter[str] = Counter()
    for n, text in enumerate(types):
        if n >= TYPE_SAMPLE:
            break
        votes[type_dialect(text)] += 1
    votes.pop("", None)
    if votes:
        return votes.most_common(1)[0][0]
    return ""


def type_dialect(text: str) -> str:
    """The engine a type name belongs to, "" when several write it (`INTEGER`, `DATE`)."""
    text = text.strip()
    if _COMPOSITE.match(text):  # STRUCT<...>, ARRAY<...>: BigQuery (Databricks has its mark)
        return "bigquery"
    upper = text.upper()
    if "WITHOUT TIME ZONE" in upper:
        return "postgres"
    head = _HEAD.match(upper)
    return TYPE_MARKS.get(head.group(0).strip() if head else upper, "")


def vote(dialects: Iterable[str]) -> str:
    """The dialect most files say, ties to the first said; "" when none says one."""
    counts = Counter(d for d in dialects if d)
    if not counts:
        return ""
    best = max(counts.values())
    return next(d for d in counts if counts[d] == best)
