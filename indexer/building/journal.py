"""The build journal: one SQLite file per build that records finished traversals and their
records (with vectors), committed per batch.

It is what makes a build resumable: after a crash (even `kill -9`) the next run reopens the
journal, skips every traversal it lists, and loads the knowledge base from it, so there are no
duplicate and no missing records.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from providers import Vectors


@dataclass(frozen=True)
class JournalRecord:
    point_id: str
    traversal_key: str
    payload: dict[str, Any]
    vector: Vectors


class Journal:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.executescript(
            """
            CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS done (traversal_key TEXT PRIMARY KEY, stats TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS records (
                point_id TEXT PRIMARY KEY, traversal_key TEXT NOT NULL,
                payload TEXT NOT NULL, vector BLOB NOT NULL);
            """
        )

    def close(self) -> None:
        self._conn.close()

    def get_meta(self, key: str) -> str | None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        with self._lock:
            self._conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def done_keys(self) -> set[str]:
        return {r[0] for r in self._conn.execute("SELECT traversal_key FROM done")}

    def stats(self) -> Iterator[dict[str, Any]]:
        for (text,) in self._conn.execute("SELECT stats FROM done"):
            yield json.loads(text)

    def commit(
        self, finished: list[tuple[str, dict[str, Any]]], records: list[JournalRecord]
    ) -> None:
        """Record finished traversals and their records in one transaction."""
        with self._lock:
            self._conn.execute("BEGIN")
            try:
                self._conn.executemany(
                    "INSERT OR REPLACE INTO records VALUES (?, ?, ?, ?)",
                    [
                        (
                            r.point_id,
                            r.traversal_key,
                            json.dumps(r.payload, ensure_ascii=False),
                            np.asarray(r.vector, dtype=np.float32).tobytes(),
                        )
                        for r in records
                    ],
                )
                self._conn.executemany(
                    "INSERT OR REPLACE INTO done VALUES (?, ?)",
                    [(key, json.dumps(stats)) for key, stats in finished],
                )
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def records(self, batch: int = 512) -> Iterator[list[JournalRecord]]:
        cursor = self._conn.execute(
            "SELECT point_id, traversal_key, payload, vector FROM records ORDER BY point_id"
        )
        while rows := cursor.fetchmany(batch):
            yield [
                JournalRecord(p, k, json.loads(payload), np.frombuffer(v, dtype=np.float32))
                for p, k, payload, v in rows
            ]

    def point_ids(self) -> set[str]:
        return {r[0] for r in self._conn.execute("SELECT point_id FROM records")}

    def record_count(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM records").fetchone()[0])
