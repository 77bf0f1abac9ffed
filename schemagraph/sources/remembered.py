"""What a store remembers of the sources it was built from, so that `serve`, `mcp` and `ask`
load the same catalog without being told (`--source` overrides).

A build's manifest records each source as `{"kind", "spec"}` (`source_records`): the spec as the
command line gave it, with its path made absolute (`remembered_spec`), so it loads the same from
any folder; a database URL never with its password or a secret query value (the password comes
from the environment at load time: libpq's PGPASSWORD or ~/.pgpass, or `env:NAME`).
`moved_source` says when a remembered file or folder is not there any more.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from schemagraph.connect import is_url
from schemagraph.source_kinds import FILE_KINDS, OVERLAYS
from schemagraph.sources import _ENV, _SPEC

__all__ = ["moved_source", "remembered_spec", "source_records"]

#: a URL's user part with a password (`scheme://user:secret@`, as SQLAlchemy's URL pattern reads
#: it), and its query values that are secrets (a Snowflake key passphrase, tokens): never
#: remembered
_PASSWORD = re.compile(r"^(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://[^:/]*):[^@]*@")
_SECRET_PARAM = re.compile(r"pass|secret|token|key|credential", re.IGNORECASE)
#: a SQLite or DuckDB file URL with a relative path (three slashes; four make it absolute)
_FILE_URL = re.compile(r"^(?:sqlite|duckdb)[A-Za-z0-9+.\-]*:///(?P<path>[^?#]+)")
_RELATIVE_FILE_URL = re.compile(
    r"^(?P<scheme>(?:sqlite|duckdb)[A-Za-z0-9+.\-]*):///(?P<path>[^/?#][^?#]*)(?P<rest>[?#].*)?$"
)


def remembered_spec(spec: str) -> str:
    """`spec` as a store remembers it, to load the same catalog later from any folder:
    `KIND:PATH` with its path made absolute (`ddl[postgres]:` and `infoschema[schema]:` keep
    their brackets), a database URL without its password or secret query values (a SQLite or
    DuckDB file's path made absolute), `env:NAME` as it is (the URL stays in the environment).
    Anything else is returned unchanged (`load_source` says what is wrong with it)."""
    if is_url(spec):
        return _without_secrets(spec)
    match = _SPEC.match(spec)
    if match is None or (match["kind"] not in FILE_KINDS and match["kind"] not in OVERLAYS):
        return spec
    brackets = f"[{match['dialect']}]" if match["dialect"] else ""
    return f"{match['kind']}{brackets}:{os.path.abspath(match['path'])}"


def _without_secrets(url: str) -> str:
    """`url` without what SQLAlchemy reads as its password and without secret query values;
    a SQLite or DuckDB file's relative path made absolute."""
    url = _PASSWORD.sub(lambda m: m["head"] + ("" if m["head"].endswith("/") else "@"), url, 1)
    base, mark, query = url.partition("?")
    if mark:
        kept = [p for p in query.split("&") if p and not _SECRET_PARAM.search(p.split("=")[0])]
        url = base + ("?" + "&".join(kept) if kept else "")
    relative = _RELATIVE_FILE_URL.match(url)
    if relative and relative["path"] != ":memory:":
        path = os.path.abspath(relative["path"])
        url = f"{relative['scheme']}:///{path}{relative['rest'] or ''}"
    return url


def source_records(
    specs: Iterable[str], *, schemas: Sequence[str] = (), exclude: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """What a build's manifest records of the sources it was built from: per source its kind
    (the word before the colon; a URL's dialect, `postgresql`) and `remembered_spec`; a URL
    or `env:` source also the schemas chosen (`schemas`, `exclude`) when any were. Never a
    password (`remembered_spec`)."""
    records: list[dict[str, Any]] = []
    for spec in specs:
        record: dict[str, Any] = {"kind": _kind_of(spec), "spec": remembered_spec(spec)}
        if (is_url(spec) or _ENV.match(spec)) and (schemas or exclude):
            record |= {"schemas": list(schemas), "exclude": list(exclude)}
        records.append(record)
    return records


def _kind_of(spec: str) -> str:
    if is_url(spec):
        return spec.split(":", 1)[0].split("+", 1)[0].lower()
    match = _SPEC.match(spec)
    return match["kind"] if match else spec.split(":", 1)[0]


def moved_source(spec: str) -> Path | None:
    """The file or folder a `KIND:PATH` (or SQLite/DuckDB file URL) names when it is not there
    any more; None when it is, or when `spec` names no local path."""
    if is_url(spec):
        file_url = _FILE_URL.match(spec)
        if file_url is None or file_url["path"] == ":memory:":
            return None
        path = Path(file_url["path"])
    else:
        match = _SPEC.match(spec)
        if match is None or (match["kind"] not in FILE_KINDS and match["kind"] not in OVERLAYS):
            return None
        path = Path(match["path"])
    return None if path.exists() else path
