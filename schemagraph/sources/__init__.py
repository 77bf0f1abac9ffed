"""Schema sources: functions returning a `Catalog`, selected by a `KIND:PATH` spec.

spider:DIR        a Spider/BIRD tables.json (file or folder), with database/<db>/<db>.sqlite
sqlite:PATH       one SQLite file or a folder of them, introspected
ddl:PATH          .sql files of CREATE TABLE statements, one database per file; the dialect
                  may follow the kind: ddl[postgres]:PATH (default: inferred per file)
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from schemagraph.errors import SourceError
from schemagraph.model import Catalog
from schemagraph.sources.ddl import load_ddl
from schemagraph.sources.spider import load_spider
from schemagraph.sources.sqlite import load_sqlite

__all__ = ["load_catalog", "load_ddl", "load_source", "load_spider", "load_sqlite"]

KINDS = ("spider", "sqlite", "ddl")
_SPEC = re.compile(r"^(?P<kind>[a-z]+)(?:\[(?P<dialect>[a-z0-9_]+)\])?:(?P<path>.+)$")


def load_source(spec: str) -> Catalog:
    """Load one `KIND:PATH` source."""
    match = _SPEC.match(spec)
    if not match or match["kind"] not in KINDS:
        raise SourceError(
            f"bad source {spec!r}: write KIND:PATH with KIND one of {', '.join(KINDS)} "
            "(e.g. spider:data/spider, sqlite:dbs/, ddl[postgres]:schema.sql)"
        )
    kind, path, dialect = match["kind"], Path(match["path"]), match["dialect"]
    if dialect and kind != "ddl":
        raise SourceError(f"bad source {spec!r}: only ddl takes a dialect")
    if kind == "spider":
        return load_spider(path)
    if kind == "sqlite":
        return load_sqlite(path)
    return load_ddl(path, dialect)


def load_catalog(specs: Iterable[str]) -> Catalog:
    """One catalog from several sources; a database id present twice is an error naming both."""
    specs = list(specs)
    if not specs:
        raise SourceError("no source given: name at least one KIND:PATH (spider:, sqlite:, ddl:)")
    return Catalog.merge(*(load_source(s) for s in specs))
