"""Shared fixtures. Tests that need the full Spider data are marked `spider` and skip (saying
so) when ../shared/data/spider is absent; everything else runs on files shipped in the repo."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from schemarag.samples import SPIDER_SAMPLE
from tests.pgcluster import PostgresCluster
from tests.pgcluster import start_cluster as start_postgres
from tests.pgcluster import unavailable as postgres_unavailable

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SPIDER_DIR = Path(os.environ.get("SCHEMARAG_SPIDER_DIR", REPO.parent / "shared/data/spider"))

# Hypothesis' 200 ms deadline per example times the machine, not the code: on a loaded machine
# a property test failed for it alone. Tests assert behaviour; speed is for the benchmarks.
settings.register_profile("schemarag", deadline=None)
settings.load_profile("schemarag")


@pytest.fixture(scope="session")
def sample_dir() -> Path:
    """The bundled Spider sample: tables.json and database/<db>/<db>.sqlite for eight DBs."""
    return SPIDER_SAMPLE


@pytest.fixture
def sample_copy(tmp_path: Path) -> Path:
    """A writable copy of the bundled sample, for tests that change files."""
    target = tmp_path / "spider"
    shutil.copytree(SPIDER_SAMPLE, target)
    return target


@pytest.fixture(scope="session")
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture(scope="session")
def spider_dir() -> Path:
    if not (SPIDER_DIR / "tables.json").exists():
        pytest.skip(f"full Spider data not found at {SPIDER_DIR} (set SCHEMARAG_SPIDER_DIR)")
    return SPIDER_DIR


# A real PostgreSQL server for the live-source and live-engine tests (tests/pgcluster.py): one
# throwaway cluster per session, skipped, saying why, where the server binaries are absent.


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    """A running throwaway cluster: `.url(database)`, `.create_database(name, sql)`,
    `.execute(sql, database)`, `.query(sql, database)`, `.load_sql(path, database)`."""
    reason = postgres_unavailable()
    if reason:
        pytest.skip(reason)
    cluster = start_postgres()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def postgres_url(postgres_cluster: PostgresCluster) -> str:
    """The superuser's URL to the `postgres` database (for setup: CREATE DATABASE, roles)."""
    return postgres_cluster.url()
