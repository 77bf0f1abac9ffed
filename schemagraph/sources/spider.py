"""Spider/BIRD-style `tables.json` (plus `database/<db>/<db>.sqlite` and BIRD's
`database/<db>/database_description/*.csv` when present)."""

from __future__ import annotations

import functools
import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from schemagraph.dialects import known_dialect
from schemagraph.errors import SourceError
from schemagraph.model import (
    Catalog,
    Column,
    Database,
    ForeignKey,
    Table,
    fold,
    validate_database,
)
from schemagraph.name_words import name_parts
from schemagraph.readonly import connect_readonly
from schemagraph.sources.docs import describe_from_csvs

_REQUIRED = ("db_id", "table_names_original", "column_names_original")


def load_spider(path: str | Path) -> Catalog:
    """Read a Spider or BIRD `tables.json`.

    `path` is the file or the folder holding it. SQLite files are looked up next to it under
    `database/<db_id>/<db_id>.sqlite` (Spider and BIRD layouts); databases without one have a
    schema but no data. A file SQLite cannot read is reported in `Catalog.problems` and its
    database kept from tables.json alone, as if it had no file: one damaged file must not stop
    a build of thousands. The readable names of `table_names` and `column_names` describe the
    tables and columns they rename ("total credits" for `tot_cred`); BIRD's
    `database/<db_id>/database_description/<table>.csv` files, when present, give column
    descriptions instead (`sources.docs.describe_from_csvs`).

    An entry's optional `engine` key (Spider 2.0: bigquery, snowflake, sqlite) is the
    database's dialect; without it the database is SQLite's. Where a BigQuery or Snowflake
    database's tables are all named `dataset__table` (`SCHEMA__TABLE`), each table's engine
    name is (database, dataset, table); Spider 2.0 appends `_SF` to a Snowflake id that would
    fold onto a BigQuery one (AUSTIN_SF next to austin), which the engine's database name
    drops (`engine_database`).
    """
    path = Path(path)
    file = path / "tables.json" if path.is_dir() else path
    if not file.exists():
        raise SourceError(f"{file}: no such file (spider: expects a tables.json or its folder)")
    try:
        entries = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise SourceError(f"{file}: malformed JSON at line {exc.lineno}: {exc.msg}") from None
    except UnicodeDecodeError:
        raise SourceError(f"{file}: not UTF-8 text") from None
    if not isinstance(entries, list):
        raise SourceError(
            f"{file}: expected a JSON list of databases, got {type(entries).__name__}"
        )
    db_dir = file.parent / "database"
    problems: list[str] = []
    ids = {fold(str(e["db_id"])) for e in entries if isinstance(e, dict) and "db_id" in e}
    databases = tuple(
        _database(entry, i, file, db_dir, problems, ids) for i, entry in enumerate(entries)
    )
    return Catalog(databases, problems=tuple(problems))


def _database(
    entry: Any, position: int, file: Path, db_dir: Path, problems: list[str], ids: set[str]
) -> Database:
    where = f"{file}: database #{position}"
    if not isinstance(entry, dict) or any(k not in entry for k in _REQUIRED):
        raise SourceError(f"{where}: missing one of the keys {', '.join(_REQUIRED)}")
    db_id = str(entry["db_id"])
    where = f"{file}: database {db_id!r}"
    try:
        table_names = [str(t) for t in entry["table_names_original"]]
        columns = [(int(t), str(c)) for t, c in entry["column_names_original"]]
        types = [str(t) for t in entry.get("column_types", [""] * len(columns))]
        primary = _flatten(entry.get("primary_keys", []))
        foreign = [(int(a), int(b)) for a, b in entry.get("foreign_keys", [])]
    except (TypeError, ValueError) as exc:
        raise SourceError(f"{where}: malformed entry ({exc})") from None
    if len(types) != len(columns):
        raise SourceError(f"{where}: column_types and column_names_original differ in length")
    for index in [*primary, *(i for pair in foreign for i in pair)]:
        if not 0 < index < len(columns) or columns[index][0] < 0:
            raise SourceError(f"{where}: key refers to column #{index}, which does not exist")
    for table_index, name in columns:
        if table_index >= len(table_names):
            raise SourceError(f"{where}: column {name!r} belongs to missing table #{table_index}")

    pk = set(primary)
    fks: dict[int, list[ForeignKey]] = {}
    for src, ref in foreign:
        (src_table, src_col), (ref_table, ref_col) = columns[src], columns[ref]
        fk = ForeignKey(table_names[src_table], (src_col,), table_names[ref_table], (ref_col,))
        if fk not in fks.setdefault(src_table, []):
            fks[src_table].append(fk)
    table_labels = _labels(entry.get("table_names"), table_names)
    column_labels = _labels(entry.get("column_names"), [c for _, c in columns])
    by_table: dict[int, list[Column]] = {}
    for i, (t, col) in enumerate(columns):
        by_table.setdefault(t, []).append(Column(col, types[i], i in pk, column_labels[i]))
    dialect = _dialect(entry.get("engine"), where)
    qualified = dialect in ("bigquery", "snowflake") and all("__" in n for n in table_names)
    database = engine_database(db_id, dialect, ids) if qualified else ""
    tables = tuple(
        Table(
            name=name,
            columns=tuple(by_table.get(table_index, ())),
            foreign_keys=tuple(fks.get(table_index, ())),
            description=table_labels[table_index],
            engine_name=_engine_name(database, name) if qualified else (),
        )
        for table_index, name in enumerate(table_names)
    )
    sqlite = db_dir / db_id / f"{db_id}.sqlite"
    data = sqlite if sqlite.exists() else None
    if data and (problem := _unreadable(data)):
        problems.append(f"{data}: {problem}; {db_id!r} is kept from {file.name} without data")
        data = None
    db = Database(db_id, tables, origin=str(file), path=data, dialect=dialect)
    validate_database(db)
    described = db_dir / db_id / "database_description"
    if described.is_dir():
        db, found = describe_from_csvs(db, described)
        problems.extend(found)
    return db


#: `engine` values that name a sqlglot dialect otherwise
ENGINE_DIALECTS = {"postgresql": "postgres", "sqlserver": "tsql", "mssql": "tsql"}
#: what Spider 2.0 appends to a Snowflake id that case-folds onto a BigQuery one
SNOWFLAKE_SUFFIX = "_SF"


def _dialect(engine: Any, where: str) -> str:
    """The sqlglot dialect an entry's `engine` names; "" without one (SQLite)."""
    if engine is None or engine == "":
        return ""
    if not isinstance(engine, str):
        raise SourceError(f"{where}: engine must be a string (bigquery, snowflake, sqlite...)")
    name = ENGINE_DIALECTS.get(engine.strip().lower(), engine.strip().lower())
    if not known_dialect(name):
        raise SourceError(
            f"{where}: unknown engine {engine!r}; write a sqlglot dialect name "
            "(bigquery, snowflake, postgres, duckdb, sqlite...)"
        )
    return name


def _engine_name(database: str, table: str) -> tuple[str, ...]:
    """(database, dataset, table) for a BigQuery or Snowflake table named `dataset__table` in a
    database whose tables all are (the caller checks); () when a part is empty."""
    schema, _, name = table.partition("__")
    if not schema or not name:
        return ()
    return (database, schema, name)


def engine_database(db_id: str, dialect: str, ids: set[str]) -> str:
    """The engine's name of a database: `db_id` without the `_SF` Spider 2.0 appends to a
    Snowflake id whose plain form is another database's id (`ids`, folded), else `db_id`."""
    if dialect != "snowflake" or not db_id.upper().endswith(SNOWFLAKE_SUFFIX):
        return db_id
    plain = db_id[: -len(SNOWFLAKE_SUFFIX)]
    return plain if plain and fold(plain) in ids else db_id


def _labels(readable: Any, names: list[str]) -> list[str]:
    """Per name, the readable name `tables.json` gives it (`table_names`; `column_names`, as
    [table, name] pairs: "total credits" for `tot_cred`, "Final-time Home-team Goals" for
    `FTHG`) when its words differ from the name's own, else "". Such a label is the name's
    description unless BIRD's description files give one; a list of another length is
    ignored."""
    if not isinstance(readable, list) or len(readable) != len(names):
        return [""] * len(names)
    labels = [r[1] if isinstance(r, list) and len(r) == 2 else r for r in readable]
    return [
        label if isinstance(label, str) and _words(label) != _words(name) else ""
        for label, name in zip(labels, names, strict=True)
    ]


@functools.lru_cache(maxsize=1 << 16)
def _words(name: str) -> tuple[str, ...]:
    """Lower-case words of a name: `HomeTeam`, `home_team` and "home team" are alike
    (remembered: a warehouse repeats its names across hundreds of shards)."""
    return tuple(w.lower() for w in name_parts(name))


def _unreadable(sqlite: Path) -> str | None:
    """Why SQLite cannot read `sqlite` (not a database, damaged, unreadable), or None."""
    try:
        with closing(connect_readonly(sqlite)) as conn:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as exc:
        return f"not a readable SQLite database ({exc})"
    return None


def _flatten(keys: Any) -> list[int]:
    """Spider lists primary keys as ints; BIRD nests composite keys as lists."""
    out: list[int] = []
    for key in keys:
        out.extend(int(k) for k in (key if isinstance(key, list) else [key]))
    return out
