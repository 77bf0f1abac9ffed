"""Qdrant server mode: the probe resolves the questions alias (checked here against an
in-memory Qdrant, which implements aliases) and the state folder's CURRENT; the whole
serve-rebuild-reload cycle runs against a real server when QDRANT_URL is set."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest
from qdrant_client import QdrantClient, models

from indexer import BuildServices, build_index, make_chain_runner, make_feedback, make_synthesizer
from providers import make_embedder
from retriever import KnowledgeBase, StoreNotReadyError
from schemagraph import Catalog
from schemarag.api import ApiOptions, StoreSource, create_app
from schemarag.settings import Settings
from store import CollectionLayout, StoreLocation
from store.location import QUESTIONS, TABLES
from tests.api.conftest import EMBEDDER, build_config, wait_until

URL = "http://qdrant.invalid:6333"
#: the in-memory Qdrant warns that payload indexes (made in server mode) do nothing there
LOCAL_PAYLOAD_INDEX = pytest.mark.filterwarnings("ignore:Payload indexes have no effect")


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


def template_services() -> BuildServices:
    runner = make_chain_runner(
        make_synthesizer("template", None), make_feedback("rule", None), chains=1, iterations=0
    )
    return BuildServices(runner, "template", EMBEDDER)


class SharedQdrant(QdrantClient):
    """One in-memory Qdrant standing in for a server: every `QdrantClient(url=...)` made in the
    code under test gets it, and closing a client leaves it running."""

    def close(self, grpc_grace: float | None = None, **kwargs: object) -> None:
        pass


@pytest.fixture
def fake_server(monkeypatch: pytest.MonkeyPatch) -> QdrantClient:
    import qdrant_client

    server = SharedQdrant(":memory:")
    monkeypatch.setattr(qdrant_client, "QdrantClient", lambda *args, **kwargs: server)
    return server


@LOCAL_PAYLOAD_INDEX
def test_a_server_retriever_reads_the_build_it_loaded_while_aliases_move(
    fake_server: QdrantClient, tmp_path: Path, catalog: Catalog
) -> None:
    location = StoreLocation.parse(URL, state_dir=tmp_path / "state")
    services = template_services()
    config = build_config()
    build_index(catalog, location, services, config)
    first = location.current()
    assert first is not None
    kb = KnowledgeBase.open(location)
    assert kb.questions_collection == location.collection_name(QUESTIONS, first)
    assert kb.tables_collection == location.collection_name(TABLES, first)

    # the next build moves the aliases; even keeping one build, the one served stays
    one = dataclasses.replace(build_config(full=True, seed=1), keep_builds=1)
    build_index(catalog, location, services, one)
    second = location.current()
    assert second != first
    aliases = {a.alias_name: a.collection_name for a in fake_server.get_aliases().aliases}
    assert aliases[location.alias(QUESTIONS)] == location.collection_name(QUESTIONS, second)
    hits = kb.client.query_points(
        kb.questions_collection, query=EMBEDDER.embed_query("singers"), limit=5, with_payload=True
    ).points
    assert hits and {h.payload["build_id"] for h in hits} == {first}  # type: ignore[index]
    assert first in location.builds()

    # a third build retires the first
    build_index(catalog, location, services, build_config(full=True, seed=2))
    assert first not in location.builds()
    assert not fake_server.collection_exists(location.collection_name(QUESTIONS, first))


@LOCAL_PAYLOAD_INDEX
def test_a_server_layout_reaches_the_collections_qdrant_creates(
    fake_server: QdrantClient,
    tmp_path: Path,
    catalog: Catalog,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    created: dict[str, dict[str, object]] = {}
    create = fake_server.create_collection

    def record(name: str, **options: object) -> bool:
        created[name] = options
        return create(name, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(fake_server, "create_collection", record)
    location = StoreLocation.parse(URL, state_dir=tmp_path / "state")
    layout = CollectionLayout(shards=6, replicas=2, on_disk=True, quantize=True)
    services = template_services()
    build_index(catalog, location, services, dataclasses.replace(build_config(), layout=layout))
    build = location.current()
    assert build is not None
    questions = created[location.collection_name(QUESTIONS, build)]
    tables = created[location.collection_name(TABLES, build)]
    assert questions["shard_number"] == 6 and questions["replication_factor"] == 2
    assert "shard_number" not in tables and tables["replication_factor"] == 2
    for options in (questions, tables):
        assert options["vectors_config"].on_disk is True  # type: ignore[attr-defined]
        assert options["on_disk_payload"] is True
        scalar = options["quantization_config"].scalar  # type: ignore[attr-defined]
        assert scalar.type == models.ScalarType.INT8 and scalar.always_ram


def test_a_state_folder_out_of_step_with_the_server_is_named(
    fake_server: QdrantClient, tmp_path: Path
) -> None:
    location = StoreLocation.parse(URL, state_dir=tmp_path / "state")
    location.root.mkdir(parents=True)
    (location.root / "CURRENT").write_text("20261121T010000000000Z-aaaa")
    (location.build_dir("20261121T010000000000Z-aaaa")).mkdir(parents=True)
    (location.build_dir("20261121T010000000000Z-aaaa") / "manifest.json").write_text("{}")
    with pytest.raises(StoreNotReadyError, match="no collection schemarag_questions__2026"):
        KnowledgeBase.open(location)


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

    collection = f"apitest{os.getpid()}"
    location = StoreLocation.parse(
        qdrant_url,
        collection=collection,
        api_key=os.environ.get("QDRANT_API_KEY") or None,
        state_dir=tmp_path / "state",
    )
    services = template_services()
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
