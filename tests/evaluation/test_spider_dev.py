"""On the full Spider dev databases (skipped without ../shared/data/spider): mutations of
every gold query."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import sqlglot

from evaluation import BenchDataset, load_dataset
from evaluation.mutations import mutations

pytestmark = pytest.mark.spider


@pytest.fixture(scope="module")
def dev(spider_dir: Path) -> BenchDataset:
    return load_dataset("spider-dev", spider_dir)


def test_mutations_of_every_gold_query_parse(dev: BenchDataset) -> None:
    rng = random.Random(0)
    produced = 0
    for question in dev.questions:
        db = dev.catalog.database(question.db_id)
        for mutation in mutations(question.sql, db, rng):
            sqlglot.parse_one(mutation.sql, read="sqlite")
            produced += 1
    assert produced > len(dev.questions)
