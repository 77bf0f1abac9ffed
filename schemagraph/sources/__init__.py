"""Schema sources: functions returning a `Catalog`, selected by a `KIND:PATH` spec or a URL
(the kinds, with a line each, are in `schemagraph.source_kinds`).

spider:DIR        a Spider/BIRD tables.json (file or folder), with database/<db>/<db>.sqlite
sqlite:PATH       one SQLite file or a folder of them, introspected
ddl:PATH          .sql files of CREATE TABLE statements, one database per file; the dialect
                  may follow the kind: ddl[postgres]:PATH (default: inferred per file)
infoschema:PATH   exports of INFORMATION_SCHEMA views (COLUMNS, COLUMN_FIELD_PATHS, TABLES, ...)
                  as CSV or JSON lines, a file or a folder: one database per catalog, or per
                  catalog and schema with infoschema[schema]:PATH, see `sources.infoschema`
SCHEME://...      a live database server through a SQLAlchemy URL (postgresql://user@host/db,
                  duckdb:///file.duckdb, ...): one database per schema, see `sources.live`
env:NAME          the URL held by environment variable NAME (so no password is on a command
                  line); the caller passes the environment (`environ=os.environ`)
docs:PATH         descriptions for the databases the other sources load (YAML or JSON keyed
dbt:PATH          db.table[.column]; a dbt manifest): overlays, see `sources.docs`
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from schemagraph.connect import is_url, masked
from schemagraph.errors import SourceError
from schemagraph.model import Catalog, fold
from schemagraph.source_kinds import FILE_KINDS, OVERLAYS
from schemagraph.sources.ddl import load_ddl
from schemagraph.sources.docs import apply_overlay
from schemagraph.sources.infoschema import load_infoschema
from schemagraph.sources.live import load_live
from schemagraph.sources.spider import engine_database, load_spider
from schemagraph.sources.sqlite import load_sqlite

__all__ = [
    "apply_overlay",
    "load_catalog",
    "load_ddl",
    "load_infoschema",
    "load_live",
    "load_source",
    "load_spider",
    "load_sqlite",
    "resolve_url",
]

KINDS = FILE_KINDS
#: what the brackets after a kind may say: ddl[DIALECT], infoschema[catalog|schema]
_INFOSCHEMA_SPLITS = ("catalog", "schema")
_SPEC = re.compile(r"^(?P<kind>[a-z]+)(?:\[(?P<dialect>[a-z0-9_]+)\])?:(?P<path>.+)$")
_ENV = re.compile(r"^env:(?P<name>[A-Za-z_][A-Za-z0-9_]*)$")


def load_source(
    spec: str,
    *,
    schemas: Sequence[str] = (),
    exclude: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
) -> Catalog:
    """Load one `KIND:PATH` source, database URL, or `env:NAME` (a URL read from `environ`).

    `schemas`/`exclude` are glob patterns choosing the schemas of a URL source."""
    url = _url_of(spec, environ)
    if url is not None:
        return load_live(url, schemas=schemas, exclude=exclude)
    if schemas or exclude:
        raise SourceError(
            f"{spec}: --schemas and --exclude choose schemas of a database URL, and this source "
            "is not one"
        )
    match = _SPEC.match(spec)
    if match and match["kind"] in OVERLAYS:
        raise SourceError(
            f"{spec}: {match['kind']}: adds descriptions to databases that other sources load; "
            "name them on the same command line (e.g. spider:data/spider docs:notes.yaml)"
        )
    if not match or match["kind"] not in KINDS:
        raise SourceError(
            f"bad source {spec!r}: write KIND:PATH with KIND one of {', '.join(KINDS)} "
            "(e.g. spider:data/spider, sqlite:dbs/, ddl[postgres]:schema.sql, "
            "infoschema:columns.csv), a database URL "
            "(postgresql://user@host/db) or env:NAME"
        )
    kind, path, dialect = match["kind"], Path(match["path"]), match["dialect"]
    if kind == "infoschema":
        if dialect and dialect not in _INFOSCHEMA_SPLITS:
            raise SourceError(
                f"bad source {spec!r}: infoschema[...] says what one database is: "
                "infoschema[catalog]:PATH (the default) or infoschema[schema]:PATH"
            )
        return load_infoschema(path, per_schema=dialect == "schema")
    if dialect and kind != "ddl":
        raise SourceError(
            f"bad source {spec!r}: only ddl (a dialect) and infoschema (catalog or schema) take "
            "brackets"
        )
    if kind == "spider":
        return load_spider(path)
    if kind == "sqlite":
        return load_sqlite(path)
    return load_ddl(path, dialect)


def resolve_url(spec: str, environ: Mapping[str, str] | None = None) -> str:
    """The database URL `spec` is, or holds (`env:NAME`); SourceError when it is neither (the
    message never shows the URL's password)."""
    url = _url_of(spec, environ)
    if url is None:
        raise SourceError(
            f"{masked(spec)}: not a database URL; write DIALECT[+DRIVER]://USER@HOST/DATABASE "
            "(e.g. postgresql://reader@db.internal/warehouse, duckdb:///data/shop.duckdb) or "
            "env:NAME"
        )
    return url


def _url_of(spec: str, environ: Mapping[str, str] | None) -> str | None:
    if is_url(spec):
        return spec
    match = _ENV.match(spec)
    if not match:
        return None
    name = match["name"]
    if environ is None:
        raise SourceError(f"{spec}: env: sources need the environment (pass environ=os.environ)")
    value = environ.get(name, "").strip()
    if not value:
        raise SourceError(
            f"{spec}: environment variable {name} is not set; set it to a database URL "
            "(e.g. postgresql://reader:PASSWORD@host/warehouse)"
        )
    if not is_url(value):  # the value may be a secret: never shown
        raise SourceError(
            f"{spec}: environment variable {name} does not hold a database URL (scheme://...)"
        )
    return value


def load_catalog(
    specs: Iterable[str],
    *,
    schemas: Sequence[str] = (),
    exclude: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
) -> Catalog:
    """One catalog from several sources; a database id present twice is an error naming both.
    Overlays (`docs:`, `dbt:`) then add their descriptions, in the order given.

    `schemas`/`exclude` apply to every URL source, and are an error when there is none."""
    specs = list(specs)
    overlays = [(m["kind"], Path(m["path"])) for m in map(_overlay, specs) if m]
    specs = [s for s in specs if not _overlay(s)]
    if overlays and not specs:
        raise SourceError(
            "docs: and dbt: add descriptions to databases that other sources load; name at "
            "least one KIND:PATH (spider:, sqlite:, ddl:, infoschema:) or a database URL too"
        )
    if not specs:
        raise SourceError(
            "no source given: name at least one KIND:PATH (spider:, sqlite:, ddl:, infoschema:) or "
            "a database URL"
        )
    live = [s for s in specs if _url_of(s, environ) is not None]
    if (schemas or exclude) and not live:
        raise SourceError(
            "--schemas and --exclude choose schemas of a database URL, and no source is one"
        )
    catalog = Catalog.merge(
        *(
            load_source(
                s,
                schemas=schemas if s in live else (),
                exclude=exclude if s in live else (),
                environ=environ,
            )
            for s in specs
        )
    )
    catalog = _unsuffixed_twins(catalog)
    for kind, path in overlays:
        catalog = apply_overlay(catalog, kind, path)
    return catalog


def _unsuffixed_twins(catalog: Catalog) -> Catalog:
    """Snowflake tables named by their engine without the `_SF` that Spider 2.0 appends to a
    database id whose plain form another source's database has (`AUSTIN_SF` is Snowflake's
    AUSTIN, next to BigQuery's austin), whichever source each came from."""
    ids = {fold(db.id) for db in catalog}
    changed = False
    databases = []
    for db in catalog:
        name = engine_database(db.id, db.dialect, ids)
        if name != db.id:
            tables = tuple(
                replace(t, engine_name=(name, *t.engine_name[1:]))
                if len(t.engine_name) == 3 and t.engine_name[0] == db.id
                else t
                for t in db.tables
            )
            if tables != db.tables:
                db, changed = replace(db, tables=tables), True
        databases.append(db)
    return Catalog(tuple(databases), catalog.problems) if changed else catalog


def _overlay(spec: str) -> re.Match[str] | None:
    match = _SPEC.match(spec)
    return match if match and match["kind"] in OVERLAYS and not match["dialect"] else None
