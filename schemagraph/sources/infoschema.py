"""Exports of a warehouse's INFORMATION_SCHEMA views: what a warehouse team can hand over
without a live credential.

`infoschema:PATH` reads one file or every `.csv`, `.json`, `.jsonl` and `.ndjson` file (each
maybe gzipped, `.csv.gz`) below a folder: CSV with a header row, JSON lines, or a JSON array of
objects. Each file is one view, recognised by its header (names matched case-insensitively, so
Snowflake's `TABLE_NAME` and Databricks' `table_name` are alike; extra columns are ignored):

  COLUMNS                  table_name, column_name [table_catalog, table_schema,
                           ordinal_position, data_type / full_data_type, comment / description]
                           (BigQuery, Snowflake, Databricks Unity Catalog, Trino, PostgreSQL)
  COLUMN_FIELD_PATHS       table_name, column_name, field_path [data_type, description]
                           (BigQuery: the descriptions, and the fields of RECORD columns)
  TABLES                   table_name [comment / description] (Snowflake, Databricks comments)
  TABLE_OPTIONS            table_name, option_name, option_value (BigQuery; the row whose
                           option_name is `description` describes the table)
  TABLE_CONSTRAINTS        constraint_name, constraint_type, table_name
  KEY_COLUMN_USAGE         constraint_name, table_name, column_name, ordinal_position
  CONSTRAINT_COLUMN_USAGE  constraint_name, table_name, column_name (what a foreign key
                           references, BigQuery) or REFERENTIAL_CONSTRAINTS (constraint_name,
                           unique_constraint_name: PostgreSQL, Databricks)

One database per catalog (BigQuery project, Snowflake or Databricks database, Trino catalog):
its id is the catalog's name. When a catalog's tables span several schemas (datasets), table
names are `schema__table` (Spider 2.0's convention: `dataset__table`, `SCHEMA__TABLE`); with
one schema they are the table names. `per_schema=True` (`infoschema[schema]:PATH`) makes one
database per schema instead, `catalog.schema` (the ids of live sources), tables named as they
are. An export without `table_catalog` is one catalog named after PATH (its stem).

The nested fields of BigQuery RECORD (STRUCT) columns, listed by COLUMN_FIELD_PATHS and not by
COLUMNS, become columns named by their path (`totals.pageviews`, `hits.product.productSKU`),
right after their RECORD column, with their own type and description: a question names the
field, and every signal that reads columns (documents, linking, prompts) then reads it like any
other column; the path is also how BigQuery SQL writes it. Composite types are cut to their
kind (`STRUCT<visits INT64, ...>` is `STRUCT`, `ARRAY<STRUCT<...>>` is `ARRAY<STRUCT>`), which
the fields themselves spell out.

Descriptions (column comments, COLUMN_FIELD_PATHS descriptions, table comments, TABLE_OPTIONS
descriptions) are attached the way documentation overlays attach theirs
(`documentation.describe_database`), so everything downstream reads them. Primary and foreign
keys come from KEY_COLUMN_USAGE with TABLE_CONSTRAINTS (warehouses mostly declare none).

System schemas (`information_schema`, `pg_catalog`, `pg_toast`) and BigQuery's system-defined
pseudo-columns (`_PARTITIONTIME`) are not read. Columns keep their ordinal positions (the
file's order without them; nested fields keep the file's order); tables are sorted by name.

A file that is not CSV or JSON, lacks the columns of every view, or is empty is a `SourceError`;
rows that cannot be used (no table or column name, a column listed twice, a key to a table or
column the export does not have) are counted in `Catalog.problems`, one line per file and kind.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path

import sqlglot
from sqlglot.errors import SqlglotError
from sqlglot.tokens import TokenType

from schemagraph.counted import counted
from schemagraph.documentation import clean
from schemagraph.errors import SourceError
from schemagraph.model import Catalog, Column, Database, ForeignKey, Table, fold, validate_database
from schemagraph.sources.export_dialect import vote
from schemagraph.sources.infoschema_files import (
    HELP,
    SUFFIXES,
    ExportFile,
    View,
    read_export,
    stem_of,
    suffix_of,
)

SYSTEM_SCHEMAS = frozenset({"information_schema", "pg_catalog", "pg_toast"})
#: where a view keeps a description, in order of preference
COLUMN_TEXT = ("description", "comment", "column_comment", "remarks")
TABLE_TEXT = ("description", "comment", "table_comment", "remarks")
_NULL = frozenset({"", "null", "none", "\\n"})
_COLUMN_VIEWS = frozenset({"COLUMNS", "COLUMN_FIELD_PATHS"})
#: the longest CSV field read (a BigQuery table's DDL can be megabytes)
_COMPOSITE = re.compile(r"\b(struct|record|row)\s*[<(]", re.IGNORECASE)


def load_infoschema(path: str | Path, per_schema: bool = False) -> Catalog:
    """The databases of the INFORMATION_SCHEMA export at `path` (a file or a folder of files):
    one per catalog, or per catalog and schema when `per_schema`."""
    path = Path(path)
    if not path.exists():
        raise SourceError(
            f"{path}: no such file or directory (infoschema: expects an export of "
            "INFORMATION_SCHEMA.COLUMNS as CSV or JSON lines, or a folder of them)"
        )
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and suffix_of(p) in SUFFIXES)
        if not files:
            raise SourceError(
                f"{path}: no {', '.join(SUFFIXES)} files found; {HELP}, one file per view"
            )
    else:
        files = [path]
    export = _Export(default_catalog=stem_of(path), per_schema=per_schema)
    with _bulk():
        for file in files:
            export.add(file, read_export(file))
        if not export.tables:
            found = export.problems.lines()
            raise SourceError(
                f"{path}: no columns in the export ({counted(len(files), 'file')} read"
                + (f"; {found[0]}" if found else "")
                + "); export the rows of INFORMATION_SCHEMA.COLUMNS (or BigQuery's "
                "COLUMN_FIELD_PATHS) too"
            )
        return export.catalog(str(path))


@contextmanager
def _bulk() -> Iterator[None]:
    """Without the cyclic garbage collector: an export makes millions of objects that live on
    (rows, columns), none in a cycle, and each collection would walk them all again."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


# -- assembling ------------------------------------------------------------------------------


def _value(row: Mapping[str, str], *keys: str) -> str:
    """The first of `keys` the row has a (non-null) value for, trimmed."""
    for key in keys:
        text = (row.get(key) or "").strip()
        if fold(text) not in _NULL:
            return text
    return ""


def _null(text: str) -> str:
    """`text` trimmed, or "" when it is empty or says null."""
    text = text.strip()
    return "" if len(text) <= 4 and text.casefold() in _NULL else text


def _clean(text: str) -> str:
    """`documentation.clean`, without its regular expression where the text has no run of
    blanks and no blank but the space (most descriptions)."""
    if text.isprintable() and "  " not in text:
        return text.strip()
    return clean(text)


def _places(header: list[str]) -> Callable[..., int]:
    """Where in a row (`ExportFile.rows`) the first of some keys is; past the header (the row's
    last value, "") when the header has none of them."""

    def place(*keys: str) -> int:
        return next((header.index(k) for k in keys if k in header), len(header))

    return place


def _getter(header: list[str], *keys: str) -> Callable[[list[str]], str]:
    """What `_value` reads, for rows as lists under `header`: the first of `keys` with a
    (non-null) value, trimmed."""
    places = [header.index(key) for key in keys if key in header]
    if not places:
        return lambda row: ""
    if len(places) == 1:
        place = places[0]

        def one(row: list[str]) -> str:
            text = row[place].strip()
            return "" if len(text) <= 4 and text.casefold() in _NULL else text

        return one

    def first(row: list[str]) -> str:
        for place in places:
            text = row[place].strip()
            if not (len(text) <= 4 and text.casefold() in _NULL):
                return text
        return ""

    return first


def _type(text: str) -> str:
    """A column's type, composite types cut to their kind (`ARRAY<STRUCT<a INT64>>` is
    `ARRAY<STRUCT>`)."""
    out: list[str] = []
    start = 0
    while match := _COMPOSITE.search(text, start):
        out.append(text[start : match.start()] + match.group(1))
        depth, end = 1, match.end()
        while end < len(text) and depth:
            depth += (text[end] in "<(") - (text[end] in ">)")
            end += 1
        start = end
    out.append(text[start:])
    return clean("".join(out))


def _unquote(text: str) -> str:
    """A BigQuery option value as text: `"Sessions of the web shop"` without its quotes."""
    text = text.strip()
    for quote in ('"""', "'''", '"', "'"):
        if len(text) >= 2 * len(quote) and text.startswith(quote) and text.endswith(quote):
            inner = text[len(quote) : -len(quote)]
            return re.sub(
                r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m[1], m[1]), inner, flags=re.S
            )
    return text


#: what the table-level OPTIONS of a BigQuery DDL is found among: strings, quoted names and
#: comments (skipped whole), parentheses (counted) and the word OPTIONS before one
_DDL_TOKENS = re.compile(
    "|".join(
        (
            r'[rb]{0,2}(?:"{3}(?:\\.|[^\\])*?"{3}' + r"|'{3}(?:\\.|[^\\])*?'{3}",
            r'"(?:\\.|[^"\\\n])*"' + r"|'(?:\\.|[^'\\\n])*')",
            r"`[^`]*`",
            r"--[^\n]*",
            r"/\*.*?\*/",
            r"\bOPTIONS\s*\(",
            r"[()]",
        )
    ),
    re.IGNORECASE | re.DOTALL,
)


def ddl_description(ddl: str) -> str:
    """The table description in a BigQuery `CREATE TABLE ... OPTIONS(description="...")`
    statement (INFORMATION_SCHEMA.TABLES' `ddl` column): the OPTIONS after the column list,
    not a column's own; "" when it has none."""
    depth, start, end = 0, -1, -1
    for match in _DDL_TOKENS.finditer(ddl):
        text = match.group(0)
        if text == "(":
            depth += 1
        elif text == ")":
            depth -= 1
            if depth == 0 and start >= 0 and end < start:
                end = match.start()
        elif text[-1] == "(" and text[0] in "oO":
            if depth == 0:
                start = match.end()
            depth += 1
    if start < 0 or end < start:
        return ""
    try:
        tokens = sqlglot.Dialect.get_or_raise("bigquery").tokenize(ddl[start:end])
    except SqlglotError:
        return ""
    depth = 0
    for i, token in enumerate(tokens):
        kind = token.token_type
        depth += kind in _OPEN
        depth -= kind in _CLOSE
        if (
            depth == 0
            and fold(token.text) == "description"
            and i + 2 < len(tokens)
            and tokens[i + 1].token_type == TokenType.EQ
            and tokens[i + 2].token_type in (TokenType.STRING, TokenType.RAW_STRING)
        ):
            return tokens[i + 2].text
    return ""


_OPEN = frozenset({TokenType.L_PAREN, TokenType.L_BRACKET, TokenType.L_BRACE})
_CLOSE = frozenset({TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.R_BRACE})


_TableKey = tuple[str, str, str]  # folded catalog, schema, table
_ConstraintKey = tuple[str, str, str]  # folded catalog, schema, constraint name


@dataclass
class _Column:
    name: str
    type: str
    ordinal: float | None
    seq: int
    description: str = ""
    primary_key: bool = False
    listed: bool = False  # read from COLUMNS


@dataclass
class _Table:
    catalog: str
    schema: str
    name: str
    columns: dict[str, _Column] = field(default_factory=dict)
    #: nested fields by folded parent column
    fields: dict[str, dict[str, _Column]] = field(default_factory=dict)
    description: str = ""
    #: (columns, referenced table, referenced columns)
    foreign_keys: list[tuple[tuple[str, ...], _TableKey, tuple[str, ...]]] = field(
        default_factory=list
    )


@dataclass
class _KeyPart:
    table: _TableKey
    column: str
    ordinal: float
    unique_position: float | None


class _Problems:
    """Counted problems, one line per file and kind, with the first example."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str], list[str]] = {}

    def add(self, origin: str, kind: str, example: str) -> None:
        self._seen.setdefault((origin, kind), []).append(example)

    def lines(self) -> list[str]:
        return [
            f"{origin}: {kind} ({len(examples):,}; first: {examples[0]})"
            if len(examples) > 1
            else f"{origin}: {kind} ({examples[0]})"
            for (origin, kind), examples in self._seen.items()
        ]


@dataclass(frozen=True)
class _ForeignKeyRows:
    """A foreign key's rows: where they were read, its constraint, its table, its columns."""

    origin: str
    constraint: _ConstraintKey
    table: _TableKey
    parts: list[_KeyPart]


def _constraint(
    row: Mapping[str, str], where: tuple[str, str, str], prefix: str = ""
) -> _ConstraintKey:
    """The constraint a row names (in its table's catalog and schema when it names none)."""
    catalog, schema, _ = where
    return (
        fold(_value(row, f"{prefix}constraint_catalog") or catalog),
        fold(_value(row, f"{prefix}constraint_schema") or schema),
        fold(_value(row, f"{prefix}constraint_name")),
    )


@dataclass
class _Keys:
    """The export's key constraints, as read, until `resolve` puts them on the tables."""

    constraint_types: dict[tuple[_ConstraintKey, _TableKey], str] = field(default_factory=dict)
    key_parts: dict[tuple[_ConstraintKey, _TableKey], list[_KeyPart]] = field(default_factory=dict)
    usage: dict[_ConstraintKey, list[tuple[_TableKey, str]]] = field(default_factory=dict)
    referenced: dict[_ConstraintKey, _ConstraintKey] = field(default_factory=dict)
    key_files: list[str] = field(default_factory=list)

    def add(
        self,
        origin: str,
        number: int,
        view: View,
        key: _TableKey,
        row: Mapping[str, str],
        where: tuple[str, str, str],
        seq: int,
        problems: _Problems,
    ) -> None:
        """A row of TABLE_CONSTRAINTS, KEY_COLUMN_USAGE or CONSTRAINT_COLUMN_USAGE (`where`:
        its catalog, schema and table; `seq`: its place among all rows read)."""
        constraint = _constraint(row, where)
        if not constraint[2]:
            problems.add(origin, "rows without a constraint_name left out", f"row {number}")
            return
        if origin not in self.key_files:
            self.key_files.append(origin)
        if view.name == "TABLE_CONSTRAINTS":
            self.constraint_types[constraint, key] = fold(_value(row, "constraint_type"))
            return
        column = _value(row, "column_name")
        if not column:
            problems.add(origin, "rows without a column_name left out", f"row {number}")
        elif view.name == "KEY_COLUMN_USAGE":
            part = _KeyPart(
                key,
                column,
                _number(_value(row, "ordinal_position")) or float(seq),
                _number(_value(row, "position_in_unique_constraint")),
            )
            self.key_parts.setdefault((constraint, key), []).append(part)
        else:
            self.usage.setdefault(constraint, []).append((key, column))

    def referential(self, row: Mapping[str, str], where: tuple[str, str, str]) -> None:
        """A row of REFERENTIAL_CONSTRAINTS: which unique constraint a foreign key refers to."""
        if _value(row, "constraint_name") and _value(row, "unique_constraint_name"):
            self.referenced[_constraint(row, where)] = _constraint(row, where, "unique_")

    def resolve(
        self,
        tables: Mapping[_TableKey, _Table],
        problems: _Problems,
        database_key: Callable[[_TableKey], tuple[str, ...]],
    ) -> None:
        """Marks the primary keys' columns in `tables` and adds their foreign keys (to tables of
        the same `database_key`); what cannot be resolved goes to `problems`."""
        if not self.key_parts:
            return
        if not self.constraint_types:
            problems.add(
                self.key_files[0],
                "KEY_COLUMN_USAGE without TABLE_CONSTRAINTS: keys left out",
                "export INFORMATION_SCHEMA.TABLE_CONSTRAINTS too",
            )
            return
        origin = self.key_files[0]
        primary: dict[_TableKey, list[str]] = {}
        by_name: dict[_ConstraintKey, list[_KeyPart]] = {}
        for (constraint, key), parts in sorted(self.key_parts.items()):
            parts.sort(key=lambda p: p.ordinal)
            by_name.setdefault(constraint, []).extend(parts)
            kind = self.constraint_types.get((constraint, key), "")
            table = tables.get(key)
            if kind != "primary key" or table is None:
                continue
            for part in parts:
                column = table.columns.get(fold(part.column))
                if column is None:
                    problems.add(
                        origin,
                        "primary keys on missing columns left out",
                        f"{table.name}.{part.column}",
                    )
                else:
                    column.primary_key = True
                    primary.setdefault(key, []).append(part.column)
        for (constraint, key), kind in sorted(self.constraint_types.items()):
            if kind == "foreign key" and (own := self.key_parts.get((constraint, key))):
                fk = _ForeignKeyRows(origin, constraint, key, own)
                self._foreign_key(fk, tables, problems, database_key, primary, by_name)

    def _foreign_key(
        self,
        fk: _ForeignKeyRows,
        tables: Mapping[_TableKey, _Table],
        problems: _Problems,
        database_key: Callable[[_TableKey], tuple[str, ...]],
        primary: dict[_TableKey, list[str]],
        by_name: dict[_ConstraintKey, list[_KeyPart]],
    ) -> None:
        origin, constraint, key, parts = fk.origin, fk.constraint, fk.table, fk.parts
        label = f"{key[2]}({', '.join(p.column for p in parts)})"
        ref_key: _TableKey | None = None
        ref_columns: list[str] = []
        if (unique := self.referenced.get(constraint)) and (target := by_name.get(unique)):
            ref_key = target[0].table
            ref_columns = [p.column for p in target]
        elif used := self.usage.get(constraint):
            ref_key = used[0][0]
            ref_columns = [c for k, c in used if k == ref_key]
            pk = primary.get(ref_key, [])
            if {fold(c) for c in pk} == {fold(c) for c in ref_columns}:
                ref_columns = pk
        if ref_key is None:
            problems.add(
                origin,
                "foreign keys whose referenced table the export does not say left out (export "
                "CONSTRAINT_COLUMN_USAGE or REFERENTIAL_CONSTRAINTS too)",
                label,
            )
            return
        positions = [p.unique_position for p in parts]
        if all(p is not None and 0 < p <= len(ref_columns) for p in positions):
            ref_columns = [ref_columns[int(p) - 1] for p in positions if p is not None]
        source, target_table = tables.get(key), tables.get(ref_key)
        if source is None or target_table is None:
            problems.add(origin, "foreign keys on tables without columns left out", label)
            return
        if database_key(key) != database_key(ref_key):
            problems.add(origin, "foreign keys to a table of another database left out", label)
            return
        missing = [
            f"{t.name}.{c}"
            for t, cols in ((source, [p.column for p in parts]), (target_table, ref_columns))
            for c in cols
            if fold(c) not in t.columns
        ]
        if missing or len(ref_columns) != len(parts):
            problems.add(
                origin,
                "foreign keys on missing columns left out",
                f"{label}: {', '.join(missing) or 'column counts differ'}",
            )
            return
        source.foreign_keys.append(
            (
                tuple(source.columns[fold(p.column)].name for p in parts),
                ref_key,
                tuple(target_table.columns[fold(c)].name for c in ref_columns),
            )
        )


@dataclass
class _Export:
    default_catalog: str
    per_schema: bool
    tables: dict[_TableKey, _Table] = field(default_factory=dict)
    table_text: dict[_TableKey, str] = field(default_factory=dict)
    listed: dict[_TableKey, str] = field(default_factory=dict)  # TABLES rows → origin
    keys: _Keys = field(default_factory=_Keys)
    problems: _Problems = field(default_factory=_Problems)
    seq: int = 0
    #: per folded catalog, the dialect of each file that has rows of it
    dialects: dict[str, list[str]] = field(default_factory=dict)
    #: folded catalogs the export names (in `table_catalog`), not defaulted to PATH's stem
    named: set[str] = field(default_factory=set)
    #: each type as written (untrimmed), cut to its kind
    types: dict[str, str] = field(default_factory=dict)

    def _where(self, row: Mapping[str, str]) -> tuple[str, str, str]:
        catalog = _value(row, "table_catalog") or self.default_catalog
        return catalog, _value(row, "table_schema"), _value(row, "table_name")

    def add(self, file: Path, read: ExportFile) -> None:
        origin = str(file)
        view, header = read.view, read.header
        for kind, example in read.problems:
            self.problems.add(origin, kind, example)
        if view.name in _COLUMN_VIEWS:
            self._add_columns(origin, read)
            return
        catalogs: set[str] = set()
        get_catalog = _getter(header, "table_catalog")
        get_schema = _getter(header, "table_schema")
        get_table = _getter(header, "table_name")
        for number, row in enumerate(read.rows, start=read.first):
            self.seq += 1
            given = get_catalog(row)
            catalog, schema = given or self.default_catalog, get_schema(row)
            key = (fold(catalog), fold(schema), fold(get_table(row)))
            if key[1] in SYSTEM_SCHEMAS:
                continue
            catalogs.add(catalog)
            if given:
                self.named.add(key[0])
            self._other(origin, number, view, key, dict(zip(header, row, strict=False)))
        for catalog in catalogs:
            self.dialects.setdefault(fold(catalog), []).append(read.dialect)

    def _add_columns(self, origin: str, read: ExportFile) -> None:
        """The rows of COLUMNS or COLUMN_FIELD_PATHS: hundreds of thousands in a warehouse's
        export, so each value is taken by position and each table's names folded once."""
        header = read.header
        place = _places(header)
        read_row = itemgetter(
            place("table_catalog"),
            place("table_schema"),
            place("table_name"),
            place("column_name"),
            place("full_data_type", "data_type"),
            place(*COLUMN_TEXT),
            place("field_path"),
            place("is_system_defined"),
            place("ordinal_position"),
        )
        # where a second key may hold what the first leaves empty
        type_keys = [k for k in ("full_data_type", "data_type") if k in header]
        text_keys = [k for k in COLUMN_TEXT if k in header]
        is_columns = read.view.name == "COLUMNS"
        catalogs: set[str] = set()
        last: tuple[str, str, str] | None = None
        where: tuple[str, str, str] = ("", "", "")
        key: _TableKey = ("", "", "")
        table: _Table | None = None
        skip = False
        for number, row in enumerate(read.rows, start=read.first):
            self.seq += 1
            catalog, schema, name, column, type_text, text, path, system, ordinal = read_row(row)
            if (catalog, schema, name) != last:  # a table's rows come together
                last = (catalog, schema, name)
                given = _null(catalog)
                where = (given or self.default_catalog, _null(schema), _null(name))
                key = (fold(where[0]), fold(where[1]), fold(where[2]))
                skip = key[1] in SYSTEM_SCHEMAS
                table = None
                if not skip:
                    catalogs.add(where[0])
                    if given:
                        self.named.add(key[0])
            if skip:
                continue
            if not where[2]:
                self.problems.add(origin, "rows without a table_name left out", f"row {number}")
                continue
            column = _null(column)
            if not column:
                self.problems.add(origin, "rows without a column_name left out", f"row {number}")
                continue
            if system and fold(system.strip()) == "yes":
                continue
            if text:
                text = _null(text)
            if not text and len(text_keys) > 1:
                text = _value(dict(zip(header, row, strict=False)), *text_keys)
            cut = self.types.get(type_text)
            if cut is None:
                raw = _null(type_text)
                if not raw and len(type_keys) > 1:
                    raw = _value(dict(zip(header, row, strict=False)), *type_keys)
                cut = _type(raw)
                if raw == type_text:
                    self.types[type_text] = cut
            if table is None:
                table = self._table(key, where)
            if is_columns:
                self._column(origin, number, table, column, cut, text, _number(ordinal))
            else:
                self._field_path(table, column, _null(path) or column, cut, text)
        for catalog in catalogs:
            self.dialects.setdefault(fold(catalog), []).append(read.dialect)

    def _other(
        self, origin: str, number: int, view: View, key: _TableKey, row: Mapping[str, str]
    ) -> None:
        """A row of a view other than COLUMNS and COLUMN_FIELD_PATHS."""
        if view.name == "REFERENTIAL_CONSTRAINTS":
            self.keys.referential(row, self._where(row))
            return
        if not key[2]:
            self.problems.add(origin, "rows without a table_name left out", f"row {number}")
        elif view.name == "TABLES":
            self.listed.setdefault(key, origin)
            text = clean(_value(row, *TABLE_TEXT)) or clean(ddl_description(_value(row, "ddl")))
            if text:
                self.table_text.setdefault(key, text)
        elif view.name == "TABLE_OPTIONS":
            text = clean(_unquote(_value(row, "option_value")))
            if fold(_value(row, "option_name")) == "description" and text:
                self.table_text[key] = text
        else:
            self.keys.add(origin, number, view, key, row, self._where(row), self.seq, self.problems)

    def _table(self, key: _TableKey, where: tuple[str, str, str]) -> _Table:
        table = self.tables.get(key)
        if table is None:
            table = self.tables[key] = _Table(*where)
        return table

    def _column(
        self,
        origin: str,
        number: int,
        table: _Table,
        name: str,
        type_text: str,
        text: str,
        ordinal: float | None,
    ) -> None:
        folded = name.casefold()  # fold(), inline: once per row
        column = table.columns.get(folded)
        if column is not None and column.listed:
            self.problems.add(
                origin,
                "columns listed twice, the first kept",
                f"{table.name}.{name} at row {number}",
            )
            return
        description = _clean(text) if text else ""
        if column is None:
            table.columns[folded] = _Column(
                name, type_text, ordinal, self.seq, description, listed=True
            )
        else:  # first read from COLUMN_FIELD_PATHS, which has no ordinal position
            column.ordinal, column.listed = ordinal, True
            column.type = type_text or column.type
            column.description = column.description or description

    def _field_path(self, table: _Table, name: str, path: str, type_text: str, text: str) -> None:
        description = _clean(text) if text else ""
        folded = name.casefold()  # fold(), inline: once per row
        folded_path = path.casefold()
        if folded_path == folded:
            column = table.columns.get(folded)
            if column is None:
                table.columns[folded] = _Column(name, type_text, None, self.seq, description)
            elif description:
                column.description = description
            return
        fields = table.fields.setdefault(folded, {})
        if folded_path not in fields:
            fields[folded_path] = _Column(path, type_text, None, self.seq, description)

    # -- databases --

    def _database_key(self, key: _TableKey) -> tuple[str, ...]:
        return (key[0], key[1]) if self.per_schema else (key[0],)

    def catalog(self, origin: str) -> Catalog:
        self.keys.resolve(self.tables, self.problems, self._database_key)
        for key, listed_in in sorted(self.listed.items()):
            if key not in self.tables:
                self.problems.add(
                    listed_in, "tables without columns in the export left out", key[2]
                )
        groups: dict[tuple[str, ...], list[_Table]] = {}
        for key in sorted(self.tables):
            groups.setdefault(self._database_key(key), []).append(self.tables[key])
        databases = [self._database(group, origin) for _, group in sorted(groups.items())]
        for key in self.table_text:
            if key not in self.tables and key not in self.listed:
                self.problems.add(origin, "table descriptions of tables not in the export", key[2])
        return Catalog(tuple(databases), tuple(self.problems.lines()))

    def _database(self, tables: list[_Table], origin: str) -> Database:
        first = tables[0]
        schemas = sorted({fold(t.schema) for t in tables})
        prefixed = len(schemas) > 1
        db_id = (
            f"{first.catalog}.{first.schema}" if self.per_schema and first.schema else first.catalog
        )
        names = {
            (fold(t.schema), fold(t.name)): f"{t.schema}__{t.name}" if prefixed else t.name
            for t in tables
        }
        dialect = vote(self.dialects.get(fold(first.catalog), ()))
        built: list[Table] = []
        seen: set[str] = set()
        for tab in tables:
            name = names[fold(tab.schema), fold(tab.name)]
            if fold(name) in seen:
                self.problems.add(
                    origin, "tables whose names differ only in case left out", f"{db_id}.{name}"
                )
                continue
            seen.add(fold(name))
            key = (fold(tab.catalog), fold(tab.schema), fold(tab.name))
            columns = list(self._columns(tab, db_id))
            fks = tuple(
                ForeignKey(name, columns, names[ref[1], ref[2]], ref_columns)
                for columns, ref, ref_columns in tab.foreign_keys
            )
            built.append(
                Table(
                    name,
                    tuple(Column(c.name, c.type, c.primary_key, c.description) for c in columns),
                    fks,
                    description=self.table_text.get(key, ""),
                    engine_name=self._engine_name(tab, dialect),
                )
            )
        db = Database(
            db_id,
            tuple(sorted(built, key=lambda t: (fold(t.name), t.name))),
            origin=origin,
            schema=first.schema if len(schemas) == 1 and first.schema else None,
            dialect=dialect,
        )
        # names are unique by construction (tables and columns are kept by folded name); what
        # is left to check is the keys, which most warehouse exports do not have
        if any(t.foreign_keys for t in built):
            validate_database(db)
        return db

    def _engine_name(self, table: _Table, dialect: str) -> tuple[str, ...]:
        """The table's name as its engine qualifies it: BigQuery's project, dataset and table,
        Snowflake's database, schema and table (as the export writes them); elsewhere schema
        and table; () when the export names no schema."""
        if dialect in ("bigquery", "snowflake") and fold(table.catalog) in self.named:
            return (table.catalog, table.schema, table.name) if table.schema else ()
        return (table.schema, table.name) if table.schema else ()

    def _columns(self, table: _Table, db_id: str) -> Iterator[_Column]:
        ordered = sorted(
            table.columns.items(),
            key=lambda item: (item[1].ordinal is None, item[1].ordinal or 0.0, item[1].seq),
        )
        taken = set(table.columns)
        for folded, column in ordered:
            yield column
            # a RECORD's fields, in the file's order (the order they were added in)
            for folded_path, path in table.fields.get(folded, {}).items():
                if folded_path not in taken:
                    taken.add(folded_path)
                    yield path
        for parent, nested in table.fields.items():
            if parent not in table.columns:
                self.problems.add(
                    db_id,
                    "nested fields of columns the export does not list left out",
                    f"{table.name}.{next(iter(nested.values())).name}",
                )


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None
