"""Fixtures for the generator: the bundled sample catalog and scripted-LLM helpers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from generator.execution import Candidate, Executed, Runner, sqlite_runner
from schemagraph import Catalog, Database, load_spider


@pytest.fixture(scope="session")
def catalog(sample_dir: Path) -> Catalog:
    return load_spider(sample_dir)


@pytest.fixture(scope="session")
def concert(catalog: Catalog) -> Database:
    return catalog.database("concert_singer")


@pytest.fixture(scope="session")
def pets(catalog: Catalog) -> Database:
    return catalog.database("pets_1")


@pytest.fixture(scope="session")
def concert_runner(concert: Database) -> Runner:
    assert concert.path is not None
    return sqlite_runner(concert.path)


@pytest.fixture
def run_all(concert_runner: Runner) -> Callable[..., list[Executed]]:
    """Executed candidates on concert_singer from (sql, llm) pairs or plain SQL."""

    def make(*items: str | tuple[str | None, str] | None) -> list[Executed]:
        out = []
        for index, item in enumerate(items):
            sql, llm = item if isinstance(item, tuple) else (item, "scripted:m")
            candidate = Candidate(index=index, sql=sql, llm=llm)
            out.append(Executed(candidate, concert_runner(sql) if sql is not None else None))
        return out

    return make
