"""On the full Spider dev databases (skipped without ../shared/data/spider): test databases for
every database and mutations of every gold query."""

from __future__ import annotations

import random
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
import sqlglot

from generator import build_test_database
from generator.mutations import mutations
from retriever import BenchDataset, load_dataset

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


def test_mutations_of_every_gold_query_parse(dev: BenchDataset) -> None:
    rng = random.Random(0)
    produced = 0
    for question in dev.questions:
        db = dev.catalog.database(question.db_id)
        for mutation in mutations(question.sql, db, rng):
            sqlglot.parse_one(mutation.sql, read="sqlite")
            produced += 1
    assert produced > len(dev.questions)
