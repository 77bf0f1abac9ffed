"""Readiness before and after an index exists, and new builds served without a restart and
without a failed request, while clients hammer the server: a build in this process, and one in
another process (the embedded store's folder lock must not get in the way)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fastapi.testclient import TestClient

from schemagraph import Catalog
from store import StoreLocation
from tests.api.conftest import Serve, assert_error, build_store, wait_until

QUESTIONS = [
    "How many singers are from France?",
    "What is the average weight of pets?",
    "List car makers from Japan",
    "Which shops hired employees full time?",
]


@contextmanager
def hammering(client: TestClient, threads: int = 4) -> Iterator[tuple[Counter[int], Counter[str]]]:
    """Clients posting questions back to back until the block ends: statuses and builds seen."""
    statuses: Counter[int] = Counter()
    builds: Counter[str] = Counter()
    lock = threading.Lock()
    stop = threading.Event()

    def run(offset: int) -> None:
        i = offset
        while not stop.is_set():
            response = client.post("/v1/retrieve", json={"question": QUESTIONS[i % 4]})
            with lock:
                statuses[response.status_code] += 1
                builds[response.headers.get("x-schemarag-build", "")] += 1
            i += 1

    workers = [threading.Thread(target=run, args=(n,)) for n in range(threads)]
    for worker in workers:
        worker.start()
    try:
        wait_until(lambda: sum(statuses.values()) >= 20)
        yield statuses, builds
    finally:
        stop.set()
        for worker in workers:
            worker.join()


def served_build(client: TestClient) -> str | None:
    return client.get("/v1/index").json().get("build_id")


def test_not_ready_until_an_index_exists_then_ready_without_restart(
    serve: Serve, tmp_path: Path, catalog: Catalog
) -> None:
    store = tmp_path / "kb"
    with serve(store, ready=False) as client:
        assert client.get("/healthz").json() == {"status": "ok"}
        assert_error(client.get("/readyz"), 503, "not_ready")
        assert_error(client.post("/v1/retrieve", json={"question": "x"}), 503, "not_ready")
        build = build_store(store, catalog)
        wait_until(lambda: client.get("/readyz").status_code == 200)
        assert client.get("/readyz").json() == {"ready": True, "build_id": build}
        assert client.post("/v1/retrieve", json={"question": QUESTIONS[0]}).status_code == 200


def test_a_build_in_this_process_is_served_with_no_failed_request(
    serve: Serve, store_copy: Path, catalog: Catalog
) -> None:
    with serve(store_copy) as client:
        first = served_build(client)
        served = client.app.state.served  # type: ignore[attr-defined]
        old = served.current
        with hammering(client) as (statuses, builds):
            second = build_store(store_copy, catalog, full=True, seed=1)
            wait_until(lambda: served_build(client) == second)
            seen = sum(statuses.values())
            wait_until(lambda: sum(statuses.values()) >= seen + 20)
        assert second != first
        assert set(statuses) == {200}, statuses
        assert builds[first] > 0 and builds[second] > 0
        wait_until(lambda: old.closed)  # closed once its last request finished
        assert served.current.build_id == second


def test_a_build_in_another_process_is_served_with_no_failed_request(
    serve: Serve, store_copy: Path, sample_dir: Path, tmp_path: Path
) -> None:
    command = [
        sys.executable,
        "-m",
        "schemarag",
        "index",
        "build",
        f"spider:{sample_dir}",
        "--store",
        str(store_copy),
        "--embedder",
        "hashing:256",
        "--full",
        "--max-per-database",
        "2",
        "--walks",
        "0",
        "--chains",
        "1",
        "--iterations",
        "0",
        "--no-execute",
        "--no-cache",
    ]
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    with serve(store_copy) as client:
        first = served_build(client)
        with hammering(client) as (statuses, builds):
            done = subprocess.run(
                command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
            )
            assert done.returncode == 0, done.stderr
            second = StoreLocation.parse(store_copy).current()
            assert second != first
            wait_until(lambda: served_build(client) == second)
            seen = sum(statuses.values())
            wait_until(lambda: sum(statuses.values()) >= seen + 20)
        assert set(statuses) == {200}, statuses
        assert builds[first] > 0 and builds[second] > 0
