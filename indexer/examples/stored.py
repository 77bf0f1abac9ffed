"""Where users' examples live between builds: `STORE/examples.sqlite`, their source of truth.

Builds come and go (a folder per build, the old ones pruned); the examples people gave must not.
Each validated example is kept here with what it was validated against: its id (the same pair on
the same database is one example, whichever file brought it), where it came from (the file's
absolute path or a label such as `http`) and its line, the tables its SQL uses and those
tables' fingerprints at validation time. Every build reads this file: an example whose tables
still have those fingerprints becomes a knowledge-base record; one whose table changed (or
went) is left out of that build and reported, and stays here until it is removed or validated
again (adding its file again re-validates it against the current catalog).

For a Qdrant server store the file is in the state folder, next to the journals and manifests.
Writers hold the store's build lock (`store.location.build_lock`); readers need no lock
(SQLite's own locking and WAL keep a reader consistent).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from store.location import StoreLocation

FILE = "examples.sqlite"


@dataclass(frozen=True)
class StoredExample:
    """A validated example: the pair, the tables its SQL uses (as the catalog names them) and
    their fingerprints (table → sha256) when it was validated."""

    id: str
    question: str
    sql: str
    db_id: str
    tables: tuple[str, ...]
    fingerprints: tuple[tuple[str, str], ...]
    source: str
    line: int | None = None
    added_at: str = ""

    @property
    def where(self) -> str:
        return f"{self.source}:{self.line}" if self.line is not None else self.source


class ExampleStore:
    """The examples of one store (see the module docstring). `ExampleStore.of(location)`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(path, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.executescript(
            """
            CREATE TABLE IF NOT EXISTS examples (
                id TEXT PRIMARY KEY, question TEXT NOT NULL, sql TEXT NOT NULL,
                db_id TEXT NOT NULL, tables TEXT NOT NULL, fingerprints TEXT NOT NULL,
                source TEXT NOT NULL, line INTEGER, added_at TEXT NOT NULL);
            CREATE INDEX IF NOT EXISTS examples_source ON examples (source);
            """
        )

    @staticmethod
    def of(location: StoreLocation) -> ExampleStore:
        return ExampleStore(location.root / FILE)

    @staticmethod
    def read(location: StoreLocation) -> list[StoredExample]:
        """Every example of the store at `location` (none when it never had any)."""
        path = location.root / FILE
        if not path.exists():
            return []
        store = ExampleStore(path)
        try:
            return store.all()
        finally:
            store.close()

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> ExampleStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def all(self) -> list[StoredExample]:
        rows = self._conn.execute(
            "SELECT id, question, sql, db_id, tables, fingerprints, source, line, added_at "
            "FROM examples ORDER BY source, line, id"
        )
        return [
            StoredExample(
                id=i,
                question=q,
                sql=s,
                db_id=d,
                tables=tuple(json.loads(t)),
                fingerprints=tuple((k, v) for k, v in json.loads(f)),
                source=src,
                line=line,
                added_at=added,
            )
            for i, q, s, d, t, f, src, line, added in rows
        ]

    def count(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM examples").fetchone()[0])

    def put(self, examples: Iterable[StoredExample]) -> None:
        """Add `examples`, replacing those with the same id (re-validated, maybe from another
        file), in one transaction."""
        now = datetime.now(UTC).isoformat(timespec="seconds")
        rows = [
            (
                e.id,
                e.question,
                e.sql,
                e.db_id,
                json.dumps(list(e.tables)),
                json.dumps([list(p) for p in e.fingerprints]),
                e.source,
                e.line,
                e.added_at or now,
            )
            for e in examples
        ]
        self._conn.execute("BEGIN")
        try:
            self._conn.executemany(
                "INSERT OR REPLACE INTO examples VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows
            )
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise

    def ids_of_source(self, source: str) -> list[str]:
        return [
            r[0] for r in self._conn.execute("SELECT id FROM examples WHERE source = ?", (source,))
        ]

    def known(self, ids: Collection[str]) -> list[str]:
        """Those of `ids` that are here."""
        found: list[str] = []
        unique = list(dict.fromkeys(ids))
        for start in range(0, len(unique), 500):
            part = unique[start : start + 500]
            marks = ",".join("?" * len(part))
            found += [
                r[0]
                for r in self._conn.execute(f"SELECT id FROM examples WHERE id IN ({marks})", part)
            ]
        return found

    def delete(self, ids: Collection[str]) -> int:
        """Remove the examples `ids`; how many there were."""
        unique = list(dict.fromkeys(ids))
        removed = 0
        self._conn.execute("BEGIN")
        try:
            for start in range(0, len(unique), 500):
                part = unique[start : start + 500]
                marks = ",".join("?" * len(part))
                cursor = self._conn.execute(f"DELETE FROM examples WHERE id IN ({marks})", part)
                removed += cursor.rowcount
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        return removed
