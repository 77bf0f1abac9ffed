"""Store locations, the atomic pointer and alias switch, pruning and the journal."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from qdrant_client import QdrantClient, models

from indexer.building.journal import Journal, JournalRecord
from indexer.building.status import index_status
from schemarag.cli import main
from store.errors import StoreError
from store.location import QUESTIONS, TABLES, StoreLocation


def test_parse_path_and_url(tmp_path: Path) -> None:
    local = StoreLocation.parse(tmp_path / "kb")
    assert local.embedded and local.root == tmp_path / "kb"
    assert local.collection_name(QUESTIONS, "b1") == "schemarag_questions"
    server = StoreLocation.parse(
        "http://qdrant:6333", collection="acme", api_key="k", state_dir=tmp_path
    )
    assert not server.embedded and server.root == tmp_path / "acme"
    assert server.collection_name(QUESTIONS, "b1") == "acme_questions__b1"
    assert server.alias(TABLES) == "acme_tables"
    with pytest.raises(StoreError, match="collection name"):
        StoreLocation.parse(tmp_path, collection="bad name!")


def test_a_server_store_is_shown_without_its_secrets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    url = "https://admin:s3cret@qdrant.example:6333/?api_key=k3y&timeout=5"
    location = StoreLocation.parse(url, state_dir=tmp_path)
    assert location.where == "https://admin:***@qdrant.example:6333/?api_key=***&timeout=5"
    assert index_status(location)["store"] == location.where
    assert StoreLocation.parse(tmp_path / "kb").where == str(tmp_path / "kb")
    monkeypatch.chdir(tmp_path)  # the server store's state folder: .schemarag/state/<collection>
    code = main(["retrieve", "q", "--store", url])
    err = capsys.readouterr().err
    assert code == 2 and "s3cret" not in err and "k3y" not in err and "admin:***@" in err


def test_embedded_publish_switches_the_pointer_atomically(tmp_path: Path) -> None:
    location = StoreLocation.parse(tmp_path)
    assert location.current() is None
    location.set_pending("b1")
    location.publish("b1", None)
    assert location.current() == "b1"
    assert not list(tmp_path.glob(".CURRENT.*")), "no temporary file is left behind"
    location.set_pending(None)
    assert location.pending() is None


def test_server_publish_moves_both_aliases_in_one_call() -> None:
    client = QdrantClient(":memory:")
    location = StoreLocation.parse("http://localhost:6333", collection="kb")
    vectors = models.VectorParams(size=4, distance=models.Distance.COSINE)
    for build in ("b1", "b2"):
        for kind in (QUESTIONS, TABLES):
            client.create_collection(location.collection_name(kind, build), vectors_config=vectors)
    location.publish("b1", client)
    location.publish("b2", client)
    aliases = {a.alias_name: a.collection_name for a in client.get_aliases().aliases}
    assert aliases == {"kb_questions": "kb_questions__b2", "kb_tables": "kb_tables__b2"}


def test_prune_keeps_current_and_newest(tmp_path: Path) -> None:
    location = StoreLocation.parse(tmp_path)
    for build in ("b1", "b2", "b3", "b4"):
        location.build_dir(build).mkdir(parents=True)
        (location.build_dir(build) / "manifest.json").write_text("{}")
    location.publish("b1", None)  # an old build can be the served one (a rollback)
    assert location.prune(keep=2) == ["b2"]
    assert location.builds() == ["b1", "b3", "b4"]


def test_status_of_an_empty_store(tmp_path: Path) -> None:
    assert index_status(StoreLocation.parse(tmp_path))["build_id"] is None


def test_missing_manifest_is_a_clear_error(tmp_path: Path) -> None:
    location = StoreLocation.parse(tmp_path)
    location.publish("b9", None)
    with pytest.raises(StoreError, match="has no manifest; rebuild with --full"):
        location.manifest("b9")


def test_journal_survives_reopen_and_commits_atomically(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    journal = Journal(path)
    record = JournalRecord("p1", "k1", {"question": "q?"}, np.ones(3, dtype=np.float32))
    journal.commit([("k1", {"records": 1})], [record])
    with pytest.raises(TypeError):  # a bad record rolls the whole commit back
        bad = JournalRecord("p2", "k2", {"x": object()}, record.vector)
        journal.commit([("k2", {"records": 1})], [bad])
    journal.close()
    again = Journal(path)
    assert again.done_keys() == {"k1"}
    (batch,) = list(again.records())
    assert batch[0].payload == {"question": "q?"}
    assert batch[0].vector.tolist() == [1.0, 1.0, 1.0]
    again.close()
