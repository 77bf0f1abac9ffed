"""Documentation sources: descriptions for databases that other sources load.

docs:PATH   a file a user writes, YAML or JSON: a mapping from `db.table` or `db.table.column`
            to text (keys are matched against the catalog's ids, longest first, see
            `schemagraph.documentation`)
dbt:PATH    a dbt project's `target/manifest.json` (or the project folder): model, seed, snapshot
            and source descriptions and their columns', matched to catalog tables by schema and
            name (the table alone when exactly one database has it)
BIRD's `database/<db>/database_description/<table>.csv` files are read by the spider source
(`describe_from_csvs`).

An overlay never adds tables: keys that match nothing go to `Catalog.problems` (count and the
first few). A file that cannot be read at all is a `SourceError`; a bad description CSV is a
problem line, and the database keeps what the other files said.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from schemagraph.documentation import (
    Described,
    clean,
    describe,
    describe_database,
    resolve_keys,
    unmatched_problem,
)
from schemagraph.errors import SourceError
from schemagraph.model import Catalog, Database, Table, fold

_CSV_ENCODINGS = ("utf-8-sig", "cp1252", "latin-1")
_MANIFEST_TYPES = ("model", "seed", "snapshot", "source")


def apply_overlay(catalog: Catalog, kind: str, path: Path) -> Catalog:
    """`catalog` with the descriptions of the `kind` (docs or dbt) file at `path`."""
    if kind == "docs":
        described, unmatched = resolve_keys(catalog, read_docs_file(path))
    else:
        described, unmatched = _dbt_descriptions(catalog, read_manifest(path))
    problems = [unmatched_problem(f"{kind}:{path}", unmatched)] if unmatched else []
    return describe(catalog, described, problems)


def read_docs_file(path: Path) -> dict[str, str]:
    """A user's descriptions file: `{key: text}` from YAML (.yaml, .yml) or JSON."""
    text = _read_text(path, "docs")
    if path.suffix.lower() in (".yaml", ".yml"):
        data = _yaml(text, path)
    else:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SourceError(
                f"{path}: malformed JSON at line {exc.lineno}: {exc.msg} (docs: takes a JSON "
                "object or a .yaml/.yml file)"
            ) from None
    if not isinstance(data, dict):
        raise SourceError(
            f"{path}: expected a mapping of db.table or db.table.column to text, got "
            f"{type(data).__name__}"
        )
    out: dict[str, str] = {}
    for key, value in data.items():
        if not isinstance(value, str):
            raise SourceError(
                f"{path}: the value of {key!r} is {type(value).__name__}; write the description "
                "as text"
            )
        out[str(key)] = value
    return out


def _yaml(text: str, path: Path) -> Any:
    try:
        import yaml
    except ImportError:
        raise SourceError(
            f"{path}: reading YAML needs PyYAML (pip install 'schemarag[docs]'), or write the "
            "file as JSON"
        ) from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise SourceError(f"{path}: malformed YAML{where}") from None


def _read_text(path: Path, kind: str) -> str:
    if path.is_dir():
        raise SourceError(f"{path}: is a folder; {kind}: takes a file")
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise SourceError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise SourceError(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise SourceError(f"{path}: cannot be read ({exc.strerror})") from None


def read_manifest(path: Path) -> list[dict[str, Any]]:
    """The documented nodes of a dbt `manifest.json` (given, or `target/manifest.json` of a
    project folder): models, seeds, snapshots and sources."""
    file = path / "target" / "manifest.json" if path.is_dir() else path
    try:
        data = json.loads(_read_text(file, "dbt"))
    except json.JSONDecodeError as exc:
        raise SourceError(f"{file}: malformed JSON at line {exc.lineno}: {exc.msg}") from None
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), dict):
        raise SourceError(
            f"{file}: not a dbt manifest (no `nodes` object); run `dbt docs generate` or "
            "`dbt compile` and pass target/manifest.json"
        )
    nodes = [*data["nodes"].values(), *(data.get("sources") or {}).values()]
    return [n for n in nodes if isinstance(n, dict) and n.get("resource_type") in _MANIFEST_TYPES]


def _dbt_descriptions(catalog: Catalog, nodes: list[dict[str, Any]]) -> tuple[Described, list[str]]:
    described: Described = {}
    unmatched: list[str] = []
    for node in nodes:
        schema = str(node.get("schema") or "")
        name = str(node.get("alias") or node.get("identifier") or node.get("name") or "")
        columns = {
            str(c.get("name") or key): clean(c.get("description"))
            for key, c in (node.get("columns") or {}).items()
            if isinstance(c, dict)
        }
        text = clean(node.get("description"))
        if not text and not any(columns.values()):
            continue
        found = _dbt_table(catalog, schema, name)
        if found is None:
            unmatched.append(f"{schema}.{name}")
            continue
        db, table = found
        if text:
            described[(fold(db.id), fold(table.name), "")] = text
        for column, column_text in columns.items():
            if not column_text:
                continue
            if table.has_column(column):
                described[(fold(db.id), fold(table.name), fold(column))] = column_text
            else:
                unmatched.append(f"{schema}.{name}.{column}")
    return described, unmatched


def _dbt_table(catalog: Catalog, schema: str, name: str) -> tuple[Database, Table] | None:
    """The catalog table of a dbt node: in a database that is its schema (a live source's
    schema, or an id equal to or ending in it), else the only database with that table."""
    holders = [db for db in catalog if db.has_table(name)]
    key = fold(schema)
    by_schema = [
        db
        for db in holders
        if fold(db.schema or "") == key or fold(db.id) == key or fold(db.id).endswith("." + key)
    ]
    chosen = by_schema if by_schema else holders
    if len(chosen) != 1:
        return None
    return chosen[0], chosen[0].table(name)


def describe_from_csvs(db: Database, folder: Path) -> tuple[Database, list[str]]:
    """`db` with the descriptions of BIRD's `database_description/<table>.csv` files in
    `folder`, and the problems found (a file that cannot be read, a table or column that is not
    in `db`). Encodings are tried in turn (UTF-8 with or without BOM, cp1252, latin-1)."""
    described: Described = {}
    problems: list[str] = []
    for file in sorted(folder.glob("*.csv")):
        if not db.has_table(file.stem):
            problems.append(f"{file}: {db.id!r} has no table {file.stem!r}; file ignored")
            continue
        table = db.table(file.stem)
        try:
            rows = _csv_rows(file)
        except (OSError, csv.Error, ValueError) as exc:
            problems.append(f"{file}: not a readable description CSV ({exc}); file ignored")
            continue
        missing: list[str] = []
        for row in rows:
            original = clean(row.get("original_column_name"))
            text = _csv_description(row, original)
            if not original or not text:
                continue
            if table.has_column(original):
                described[(fold(db.id), fold(table.name), fold(original))] = text
            else:
                missing.append(original)
        if missing:
            problems.append(
                f"{file}: {db.id}.{table.name} has no column {', '.join(map(repr, missing[:5]))}"
                + (", ..." if len(missing) > 5 else "")
                + "; those descriptions ignored"
            )
    return describe_database(db, described), problems


def _csv_rows(file: Path) -> list[dict[str, str]]:
    data = file.read_bytes()
    for encoding in _CSV_ENCODINGS:
        try:
            text = data.decode(encoding)
            break
        except UnicodeDecodeError:
            continue
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = {clean(h).lower(): h for h in reader.fieldnames or () if h}
    if "original_column_name" not in header:
        raise ValueError("no original_column_name column in the header")
    return [
        {clean(k).lower(): v for k, v in row.items() if isinstance(k, str) and isinstance(v, str)}
        for row in reader
    ]


def _csv_description(row: dict[str, str], original: str) -> str:
    """ "total bilirubin: what it means. Values: ..." from a description CSV row."""
    name = clean(row.get("column_name"))
    meaning = clean(row.get("column_description"))
    values = clean(row.get("value_description"))
    parts = []
    if name and fold(name) != fold(original):
        parts.append(name)
    if meaning and fold(meaning) != fold(name):
        parts.append(meaning)
    text = ": ".join(parts)
    if values:
        text = f"{text}. Values: {values}" if text else values
    return text
