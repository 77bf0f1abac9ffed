"""Fixtures for the HTTP API: tiny knowledge bases built by the real indexer into tmp folders
(template synthesis, the dependency-free hashing embedder: about a second each), and a factory
that serves one through `create_app` inside a `TestClient` (lifespan included)."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from indexer import (
    BuildConfig,
    BuildServices,
    build_index,
    make_chain_runner,
    make_feedback,
    make_synthesizer,
)
from providers import HashingEmbedder, make_embedder
from retriever import RetrievalResult, Retriever
from schemagraph import Catalog, TraversalConfig, load_catalog
from schemarag.api import ApiOptions, Generation, StoreSource, create_app
from schemarag.settings import Settings
from store import StoreLocation

API_KEY = "test-key-0123456789"
EMBEDDER = HashingEmbedder(256)


def build_config(*, full: bool = False, seed: int = 0) -> BuildConfig:
    return BuildConfig(
        traversal=TraversalConfig(max_per_database=2, walks=0, seed=seed),
        chains=1,
        iterations=0,
        seed=seed,
        full=full,
        execute_sql=False,
    )


def build_store(store: Path, catalog: Catalog, *, full: bool = False, seed: int = 0) -> str:
    """Build (or rebuild with `full`) `catalog` into `store`; the published build id."""
    services = BuildServices(
        synthesize=make_chain_runner(
            make_synthesizer("template", None),
            make_feedback("rule", None),
            chains=1,
            iterations=0,
            execute_sql=False,
        ),
        synthesizer_name="template",
        embedder=EMBEDDER,
    )
    build_index(catalog, StoreLocation.parse(store), services, build_config(full=full, seed=seed))
    current = StoreLocation.parse(store).current()
    assert current is not None
    return current


def source_for(store: Path) -> StoreSource:
    return StoreSource(StoreLocation.parse(store), make_embedder=lambda spec: make_embedder(spec))


class FailingSource:
    """A real store whose retriever raises `error` for one `question` and answers the others."""

    def __init__(self, inner: StoreSource, question: str, error: BaseException) -> None:
        self.inner = inner
        self.where = inner.where
        self.question = question
        self.error = error

    def probe(self) -> str | None:
        return self.inner.probe()

    def latest_build(self) -> str | None:
        return self.inner.latest_build()

    def close(self) -> None:
        self.inner.close()

    def open(self) -> Retriever:
        retriever = self.inner.open()
        real = retriever.retrieve

        def retrieve(question: str, *args: Any, **kwargs: Any) -> RetrievalResult:
            if question == self.question:
                raise self.error
            return real(question, *args, **kwargs)

        retriever.retrieve = retrieve  # type: ignore[method-assign]
        return retriever


def wait_until(condition: Callable[[], bool], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.02)


@pytest.fixture(scope="session")
def catalog(sample_dir: Path) -> Catalog:
    return load_catalog([f"spider:{sample_dir}"])


@pytest.fixture(scope="session")
def built_store(tmp_path_factory: pytest.TempPathFactory, catalog: Catalog) -> Path:
    """One build of the bundled sample. Read-only: copy it before building into it."""
    store = tmp_path_factory.mktemp("api") / "kb"
    build_store(store, catalog)
    return store


@pytest.fixture
def store_copy(built_store: Path, tmp_path: Path) -> Path:
    target = tmp_path / "kb"
    shutil.copytree(built_store, target)
    return target


Serve = Callable[..., AbstractContextManager[TestClient]]


@pytest.fixture
def serve() -> Serve:
    """`with serve(store, api_key=..., ready=True) as client:` an app over `store`."""

    @contextmanager
    def serving(
        store: Path,
        *,
        api_key: str | None = None,
        ready: bool = True,
        options: ApiOptions | None = None,
        generation: Generation | None = None,
        source: Any = None,
        raise_server_exceptions: bool = True,
        **kwargs: Any,
    ) -> Iterator[TestClient]:
        app = create_app(
            Settings(api_key=api_key),
            source or source_for(store),
            options=options or ApiOptions(reload_interval_s=0.05),
            generation=generation,
            **kwargs,
        )
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        with TestClient(
            app, headers=headers, raise_server_exceptions=raise_server_exceptions
        ) as client:
            if ready:
                wait_until(lambda: client.get("/readyz").status_code == 200)
            yield client

    return serving


def assert_error(response: Any, status: int, code: str, field: str | None = None) -> dict[str, Any]:
    """The response is the standard error body with this status, code and field."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "field"}
    assert body["error"]["code"] == code
    assert body["error"]["field"] == field
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return dict(body["error"])


@pytest.fixture
def check_error() -> Callable[..., dict[str, Any]]:
    return assert_error
