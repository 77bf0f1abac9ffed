"""What the 503 of /readyz and /v1/retrieve says while no build is served: the build that is
loading when there is one, the build that failed and why, an unreachable store, and the advice
to build one only when the store is empty."""

from __future__ import annotations

import threading
from pathlib import Path

from fastapi.testclient import TestClient

from retriever import Retriever, StoreNotReadyError
from schemarag.api import StoreSource
from tests.api.conftest import Serve, assert_error, source_for, wait_until

QUESTION = {"question": "How many singers are from France?"}


class SlowSource:
    """The real store, whose `open` waits for the test to let it finish (a big build
    loading), or fails, or whose probe cannot reach the store."""

    def __init__(self, inner: StoreSource) -> None:
        self.inner = inner
        self.where = inner.where
        self.release = threading.Event()
        self.opening = threading.Event()
        self.fail_open = False
        self.fail_probe = False

    def probe(self) -> str | None:
        if self.fail_probe:
            raise ConnectionError("connection refused by qdrant:6333")
        return self.inner.probe()

    def latest_build(self) -> str | None:
        return self.inner.latest_build()

    def open(self) -> Retriever:
        self.opening.set()
        if self.fail_open:
            raise StoreNotReadyError("built with embedder cohere:embed-english-v3.0, not installed")
        self.release.wait(30)
        return self.inner.open()

    def close(self) -> None:
        self.release.set()
        self.inner.close()


def not_ready_messages(client: TestClient) -> list[str]:
    """The 503 message of /readyz and of /v1/retrieve (they say the same)."""
    messages = []
    for response in (client.get("/readyz"), client.post("/v1/retrieve", json=QUESTION)):
        messages.append(assert_error(response, 503, "not_ready")["message"])
        assert int(response.headers["retry-after"]) >= 1
    assert messages[0] == messages[1]
    return messages


def test_while_a_build_loads_the_503_says_so_and_names_the_build(
    serve: Serve, built_store: Path
) -> None:
    source = SlowSource(source_for(built_store))
    build = source.inner.latest_build()
    assert build
    with serve(built_store, source=source, ready=False) as client:
        assert source.opening.wait(15)
        message = not_ready_messages(client)[0]
        assert message.startswith("the index is loading")
        assert build in message and str(built_store) in message
        assert "index build" not in message  # there is a build: no advice to make one
        source.release.set()
        wait_until(lambda: client.get("/readyz").status_code == 200)
        assert client.post("/v1/retrieve", json=QUESTION).status_code == 200


def test_an_empty_store_keeps_the_advice_to_build_one(serve: Serve, tmp_path: Path) -> None:
    source = SlowSource(source_for(tmp_path / "empty"))
    with serve(tmp_path / "empty", source=source, ready=False) as client:
        wait_until(lambda: "has no build" in client.get("/readyz").text)
        message = not_ready_messages(client)[0]
    assert "schemarag index build" in message and str(tmp_path / "empty") in message
    assert not source.opening.is_set()


def test_a_build_that_fails_to_load_is_named_with_its_error(
    serve: Serve, built_store: Path
) -> None:
    source = SlowSource(source_for(built_store))
    source.fail_open = True
    build = source.inner.latest_build()
    assert build
    with serve(built_store, source=source, ready=False) as client:
        wait_until(lambda: "failed to load" in client.get("/readyz").text)
        message = not_ready_messages(client)[0]
    assert build in message and "cohere:embed-english-v3.0" in message
    assert "next try" in message and "index build" not in message


def test_an_unreachable_store_is_named(serve: Serve, built_store: Path) -> None:
    source = SlowSource(source_for(built_store))
    source.fail_probe = True
    with serve(built_store, source=source, ready=False) as client:
        wait_until(lambda: "cannot reach" in client.get("/readyz").text)
        message = not_ready_messages(client)[0]
    assert "connection refused" in message and "index build" not in message
