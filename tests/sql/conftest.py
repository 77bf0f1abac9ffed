"""Fixtures for the SQL toolkit tests: writable copies of bundled sample databases."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


@pytest.fixture
def concert_db(tmp_path: Path, sample_dir: Path) -> Path:
    """A private copy of concert_singer.sqlite (tests hash it before and after)."""
    target = tmp_path / "concert_singer.sqlite"
    shutil.copyfile(sample_dir / "database" / "concert_singer" / "concert_singer.sqlite", target)
    return target


@pytest.fixture
def tiny_db(tmp_path: Path) -> Path:
    """A small database built here: NULLs, floats, duplicates, text and a blob."""
    import sqlite3

    path = tmp_path / "tiny.sqlite"
    with sqlite3.connect(path) as connection:
        connection.executescript(
            """
            CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, score REAL, note TEXT, data BLOB);
            INSERT INTO t VALUES (1, 'a', 1.5, NULL, x'00ff');
            INSERT INTO t VALUES (2, 'b', 2.0, 'x', NULL);
            INSERT INTO t VALUES (3, 'b', NULL, 'y', NULL);
            INSERT INTO t VALUES (4, 'c', 0.1, NULL, NULL);
            """
        )
    connection.close()
    return path
