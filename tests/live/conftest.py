"""The warehouse fixture of the live-source tests: tests/fixtures/live/warehouse.sql loaded once
per session into the throwaway PostgreSQL cluster (tests/pgcluster.py)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.pgcluster import PostgresCluster

WAREHOUSE_SQL = Path(__file__).resolve().parent.parent / "fixtures" / "live" / "warehouse.sql"
READER_PASSWORD = "S3cr3t-p@ss/word"


@dataclass(frozen=True)
class Warehouse:
    cluster: PostgresCluster
    database: str

    @property
    def url(self) -> str:
        """The read-only role's URL, with its password."""
        return self.cluster.url(self.database, user="reader", password=READER_PASSWORD)

    @property
    def admin_url(self) -> str:
        return self.cluster.url(self.database)

    def wait_for_clients(self, timeout_s: float = 10.0) -> None:
        """Until no other session is connected: a session flushes its statistics on exit."""
        deadline = time.monotonic() + timeout_s
        while self.cluster.backends(self.database) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not self.cluster.backends(self.database), "a client is still connected"


@pytest.fixture(scope="session")
def warehouse(postgres_cluster: PostgresCluster) -> Warehouse:
    postgres_cluster.create_database("warehouse", WAREHOUSE_SQL)
    return Warehouse(postgres_cluster, "warehouse")
