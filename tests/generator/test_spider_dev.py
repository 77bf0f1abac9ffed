"""On the full Spider dev databases (skipped without ../shared/data/spider): test databases for
every database."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from evaluation import BenchDataset, load_dataset
from generator import build_test_database

pytestmark = pytest.mark.spider


@pytest.fixture(scope="module")
def dev(spider_dir: Path) -> BenchDataset:
    return load_dataset("spider-dev", spider_dir)


def test_test_databases_build_for_every_dev_database(dev: BenchDataset, tmp_path: Path) -> None:
    ids = sorted({q.db_id for q in dev.questions})
    built = 0
    for db_id in ids:
        db = dev.catalog.database(db_id)
        if db.path is None:
            continue
        for method in ("random", "fuzz"):
            test = build_test_database(db, tmp_path, method, seed=1)
            assert test.row_count > 0, (db_id, method)
            with closing(sqlite3.connect(test.path)) as conn:
                assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            built += 1
    assert built >= 38
