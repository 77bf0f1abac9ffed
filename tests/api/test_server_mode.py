"""Qdrant server mode: the probe resolves the questions alias (checked here against an
in-memory Qdrant, which implements aliases) and the state folder's CURRENT; the whole
serve-rebuild-reload cycle runs against a real server when QDRANT_URL is set."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from qdrant_client import QdrantClient, models

from indexer import StoreLocation
from indexer.store import QUESTIONS, TABLES
from providers import make_embedder
from retriever import StoreNotReadyError
from schemagraph import Catalog
from schemarag.api import ApiOptions, StoreSource, create_app
from schemarag.settings import Settings
from tests.api.conftest import EMBEDDER, build_config, wait_until

URL = "http://qdrant.invalid:6333"


def point_alias(client: QdrantClient, location: StoreLocation, build_id: str) -> None:
    params = models.VectorParams(size=4, distance=models.Distance.COSINE)
    actions: list[object] = []
    existing = {a.alias_name for a in client.get_aliases().aliases}
    for kind in (QUESTIONS, TABLES):
        name = location.collection_name(kind, build_id)
        if not client.collection_exists(name):
            client.create_collection(name, vectors_config=params)
        alias = location.alias(kind)
        if alias in existing:
            actions.append(
                models.DeleteAliasOperation(delete_alias=models.DeleteAlias(alias_name=alias))
            )
        actions.append(
            models.CreateAliasOperation(
                create_alias=models.CreateAlias(collection_name=name, alias_name=alias)
            )
        )
    client.update_collection_aliases(change_aliases_operations=actions)  # type: ignore[arg-type]


def test_probe_follows_the_alias_and_the_state_pointer(tmp_path: Path) -> None:
    location = StoreLocation.parse(URL, state_dir=tmp_path / "state")
    client = QdrantClient(":memory:")
    source = StoreSource(location, make_embedder=make_embedder, client=client)
    assert source.probe() is None  # nothing built
    point_alias(client, location, "20261121T010000000000Z-aaaa")
    assert source.probe() == "20261121T010000000000Z-aaaa|-"
    (location.root).mkdir(parents=True)
    (location.root / "CURRENT").write_text("20261121T010000000000Z-aaaa")
    assert source.probe() == "20261121T010000000000Z-aaaa|20261121T010000000000Z-aaaa"
    point_alias(client, location, "20261122T010000000000Z-bbbb")
    # The alias moved first (as a build publishes): the token changes at once, and again
    # when the state pointer catches up, so the server reloads until both agree.
    assert source.probe() == "20261122T010000000000Z-bbbb|20261121T010000000000Z-aaaa"
    assert source.latest_build() == "20261122T010000000000Z-bbbb"
    source.close()
    client.close()


def test_a_server_without_the_state_folder_says_so(tmp_path: Path) -> None:
    location = StoreLocation.parse(URL, state_dir=tmp_path / "state")
    source = StoreSource(location, make_embedder=make_embedder, client=QdrantClient(":memory:"))
    with pytest.raises(StoreNotReadyError, match="state folder"):
        source.open()


@pytest.fixture
def qdrant_url() -> str:
    url = os.environ.get("QDRANT_URL", "").strip()
    if not url:
        pytest.skip("QDRANT_URL is not set: no Qdrant server to run server mode against")
    return url


def test_serve_and_reload_against_a_real_server(
    qdrant_url: str, tmp_path: Path, catalog: Catalog
) -> None:
    from fastapi.testclient import TestClient

    from indexer import (
        BuildServices,
        build_index,
        make_chain_runner,
        make_feedback,
        make_synthesizer,
    )

    collection = f"apitest{os.getpid()}"
    location = StoreLocation.parse(
        qdrant_url,
        collection=collection,
        api_key=os.environ.get("QDRANT_API_KEY") or None,
        state_dir=tmp_path / "state",
    )
    services = BuildServices(
        make_chain_runner(
            make_synthesizer("template", None), make_feedback("rule", None), chains=1, iterations=0
        ),
        "template",
        EMBEDDER,
    )
    build_index(catalog, location, services, build_config())
    first = location.current()
    source = StoreSource(location, make_embedder=make_embedder)
    app = create_app(Settings(), source, options=ApiOptions(reload_interval_s=0.1))
    with TestClient(app) as client:
        wait_until(lambda: client.get("/readyz").status_code == 200, timeout=60)
        assert client.get("/v1/index").json()["build_id"] == first
        build_index(catalog, location, services, build_config(full=True, seed=1))
        second = location.current()
        assert second != first
        wait_until(lambda: client.get("/v1/index").json()["build_id"] == second, timeout=60)
        response = client.post("/v1/retrieve", json={"question": "How many singers?"})
        assert response.status_code == 200
        assert response.headers["x-schemarag-build"] == second
    cleanup = QdrantClient(url=qdrant_url, api_key=location.api_key)
    for item in cleanup.get_collections().collections:
        if item.name.startswith(collection):
            cleanup.delete_collection(item.name)
    cleanup.close()
