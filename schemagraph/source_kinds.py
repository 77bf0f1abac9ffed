"""Every kind of schema source, as a command line writes it and with what it reads.

One table for the loaders (`schemagraph.sources` takes its kinds from here) and for the help of
the commands that take sources (`sources_help`). Imports nothing: the CLI reads it to print a
command's help before any loader is imported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["FILE_KINDS", "OVERLAYS", "SOURCE_KINDS", "SourceKind", "sources_help"]


@dataclass(frozen=True)
class SourceKind:
    """`kind`: the word before the colon ("" for a URL); `specs`: how it is written; `reads`:
    what it reads, one line; `role`: ``file`` (a catalog from files), ``url`` (a live
    database) or ``overlay`` (descriptions for the databases other sources load)."""

    kind: str
    specs: tuple[str, ...]
    reads: str
    role: Literal["file", "url", "overlay"]


SOURCE_KINDS: tuple[SourceKind, ...] = (
    SourceKind(
        "spider",
        ("spider:DIR",),
        "a Spider/BIRD tables.json (file or folder), with database/<db>/<db>.sqlite",
        "file",
    ),
    SourceKind("sqlite", ("sqlite:PATH",), "one SQLite file or every one below a folder", "file"),
    SourceKind(
        "ddl",
        ("ddl:PATH", "ddl[DIALECT]:PATH"),
        ".sql files of CREATE TABLE statements, one database per file, in any sqlglot dialect",
        "file",
    ),
    SourceKind(
        "infoschema",
        ("infoschema:PATH", "infoschema[schema]:PATH"),
        "exports of INFORMATION_SCHEMA views (CSV or JSON lines); [schema]: a database per schema",
        "file",
    ),
    SourceKind(
        "",
        ("postgresql://USER@HOST/DB", "duckdb:///FILE"),
        "a live database through a SQLAlchemy URL: one database per schema",
        "url",
    ),
    SourceKind("env", ("env:NAME",), "the database URL held by environment variable NAME", "url"),
    SourceKind(
        "docs",
        ("docs:PATH",),
        "overlay: descriptions of tables and columns (YAML or JSON keyed db.table[.column])",
        "overlay",
    ),
    SourceKind(
        "dbt",
        ("dbt:PATH",),
        "overlay: descriptions from a dbt project's target/manifest.json (or its folder)",
        "overlay",
    ),
)

#: the kinds that load a catalog from files (`KIND:PATH`)
FILE_KINDS = tuple(k.kind for k in SOURCE_KINDS if k.role == "file")
#: the kinds that describe databases other sources load
OVERLAYS = tuple(k.kind for k in SOURCE_KINDS if k.role == "overlay")


def sources_help(intro: str = "sources (several combine; overlays need another source):") -> str:
    """The source kinds as a command's help lists them (for `RawDescriptionHelpFormatter`)."""
    lines = [intro]
    for kind in SOURCE_KINDS:
        lines.append(f"  {', '.join(kind.specs)}")
        lines.append(f"      {kind.reads}")
    return "\n".join(lines)
