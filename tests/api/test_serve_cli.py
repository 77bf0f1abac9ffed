"""`schemarag serve`: refuses a non-loopback address without an API key and a store path that is
a file (one line, exit 2), and otherwise hands uvicorn a working app built from the settings
and flags."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from schemarag.cli import main
from schemarag.cli.serve import is_loopback
from tests.api.conftest import API_KEY, wait_until

ENV = ("SCHEMARAG_API_KEY", "SCHEMARAG_LLM", "SCHEMARAG_LOG_QUESTIONS", "SCHEMARAG_STORE")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No server settings from the environment; the logging `serve` sets up is undone."""
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    access, api = logging.getLogger("schemarag.api.access"), logging.getLogger("schemarag.api")
    saved = (access.propagate, list(access.handlers), access.level, api.level)
    yield
    access.propagate, access.handlers[:] = saved[0], saved[1]
    access.setLevel(saved[2])
    api.setLevel(saved[3])


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """uvicorn.run replaced by a recorder: the app and the arguments it would have served."""
    import uvicorn

    seen: dict[str, Any] = {}

    def run(app: Any, **kwargs: Any) -> None:
        seen["app"] = app
        seen.update(kwargs)

    monkeypatch.setattr(uvicorn, "run", run)
    return seen


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "example.com", ""])
def test_non_loopback_without_a_key_is_refused_in_one_line(
    host: str, captured: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "--host", host]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("schemarag: error: refusing to listen on")
    assert "SCHEMARAG_API_KEY" in err
    assert captured == {}


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.8.0.1", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("LOCALHOST", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.0.0.1", False),
        ("myhost", False),
    ],
)
def test_loopback_addresses(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_non_loopback_with_a_key_serves_with_auth(
    built_store: Path, captured: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCHEMARAG_API_KEY", API_KEY)
    code = main(["serve", "--host", "0.0.0.0", "--port", "9123", "--store", str(built_store)])
    assert code == 0
    assert (captured["host"], captured["port"]) == ("0.0.0.0", 9123)
    with TestClient(captured["app"]) as client:
        wait_until(lambda: client.get("/readyz").status_code == 200)
        assert client.get("/v1/index").status_code == 401
        auth = {"Authorization": f"Bearer {API_KEY}"}
        response = client.post("/v1/retrieve", json={"question": "singers?"}, headers=auth)
        assert response.status_code == 200


def test_loopback_default_serves_without_a_key_and_wires_generation(
    built_store: Path,
    sample_dir: Path,
    captured: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SCHEMARAG_LLM", "scripted:SELECT count(*) FROM singer")
    argv = ["serve", "--store", str(built_store), "--source", f"spider:{sample_dir}"]
    assert main([*argv, "--log-questions", "--no-access-log"]) == 0
    assert (captured["host"], captured["port"]) == ("127.0.0.1", 8000)
    app = captured["app"]
    assert app.state.options.log_questions is True
    with TestClient(app) as client:
        wait_until(lambda: client.get("/readyz").status_code == 200)
        body = {"question": "How many singers?", "db_id": "concert_singer", "strategy": "single"}
        response = client.post("/v1/generate", json=body)
        assert response.status_code == 200, response.text
        assert response.json()["sql"].lower().startswith("select count(*) from singer")


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_store_that_is_a_file_is_refused_in_one_line(
    tmp_path: Path, workers: str, captured: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "kb.tar"
    store.write_text("not a store")
    assert main(["serve", "--store", str(store), "--workers", workers]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"schemarag: error: {store}: the store must be a folder and is a file")
    assert captured == {}  # refused before uvicorn starts


def test_a_store_under_a_file_or_from_the_environment_is_refused(
    tmp_path: Path,
    captured: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    file = tmp_path / "file"
    file.write_text("x")
    assert main(["serve", "--store", str(file / "kb")]) == 2
    assert f"cannot be made: {file} is a file" in capsys.readouterr().err
    monkeypatch.setenv("SCHEMARAG_STORE", str(file))
    assert main(["serve"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{file}: the store must be a folder and is a file" in err
    assert captured == {}


def test_a_store_folder_that_does_not_exist_yet_is_served(
    tmp_path: Path, captured: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from schemarag.cli import serve

    monkeypatch.setenv("SCHEMARAG_CACHE", str(tmp_path / "cache.sqlite"))
    try:
        assert main(["serve", "--store", str(tmp_path / "new" / "kb"), "--no-access-log"]) == 0
        source = captured["app"].state.served.source
        assert source.where == str(tmp_path / "new" / "kb")
        source.close()
    finally:
        for limiter in serve._BLAS_LIMIT:
            limiter.restore_original_limits()  # type: ignore[attr-defined]
        serve._BLAS_LIMIT.clear()


def test_bad_port_is_one_line(capsys: pytest.CaptureFixture[str], captured: dict[str, Any]) -> None:
    assert main(["serve", "--port", "70000"]) == 2
    assert "--port must be in 1..65535" in capsys.readouterr().err


def test_serve_limits_blas_to_one_thread(built_store: Path, captured: dict[str, Any]) -> None:
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from schemarag.cli import serve

    try:
        assert main(["serve", "--store", str(built_store), "--no-access-log"]) == 0
        blas = [p for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"]
        assert blas and all(p["num_threads"] == 1 for p in blas)
    finally:
        for limiter in serve._BLAS_LIMIT:
            limiter.restore_original_limits()  # type: ignore[attr-defined]
        serve._BLAS_LIMIT.clear()


def test_workers_run_the_app_factory_with_the_options_in_the_environment(
    built_store: Path, captured: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from schemarag.cli import serve

    monkeypatch.delenv(serve.ARGS_ENV, raising=False)
    argv = ["serve", "--store", str(built_store), "--workers", "2", "--examples", "1"]
    assert main([*argv, "--no-access-log"]) == 0
    assert captured["app"] == "schemarag.cli.serve:worker_app"
    assert (captured["factory"], captured["workers"], captured["port"]) == (True, 2, 8000)

    app = serve.worker_app()  # what each worker process runs, from SCHEMARAG_SERVE_ARGS
    try:
        with TestClient(app) as client:
            wait_until(lambda: client.get("/readyz").status_code == 200)
            response = client.post("/v1/retrieve", json={"question": "How many singers?"})
            assert response.status_code == 200
            assert len(response.json()["examples"]) == 1
    finally:
        for limiter in serve._BLAS_LIMIT:
            limiter.restore_original_limits()  # type: ignore[attr-defined]
        serve._BLAS_LIMIT.clear()


def test_bad_workers_and_bad_worker_options_are_one_line(
    capsys: pytest.CaptureFixture[str], captured: dict[str, Any]
) -> None:
    assert main(["serve", "--workers", "0"]) == 2
    assert "--workers must be in 1..64" in capsys.readouterr().err
    assert main(["serve", "--workers", "2", "--pool", "nosuchprovider:model"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nosuchprovider" in err
    assert captured == {}
