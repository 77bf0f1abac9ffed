"""Read-only SQLite connections for introspection and sampling.

The engine enforces it (`mode=ro` URI): nothing read through here can write to a user's file.
Executing untrusted SQL has stricter rules; see `schemagraph.sql`.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path


def connect_readonly(path: str | Path) -> sqlite3.Connection:
    """A connection to an existing SQLite file that the engine refuses to write through."""
    uri = Path(path).resolve().as_uri() + "?mode=ro"
    return sqlite3.connect(uri, uri=True, check_same_thread=False)


def quote_identifier(name: str) -> str:
    """`name` as a double-quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'
