"""The API key: every route but the health checks needs `Authorization: Bearer KEY` when a key
is configured, compared in constant time; without a key configured, nothing is asked."""

from __future__ import annotations

import hmac
from pathlib import Path
from typing import Any

import pytest

from tests.api.conftest import API_KEY, Serve, assert_error

QUESTION = {"question": "How many singers are from France?"}
PROTECTED = [
    ("POST", "/v1/retrieve", QUESTION),
    ("POST", "/v1/generate", QUESTION),
    ("GET", "/v1/index", None),
    ("GET", "/metrics", None),
    ("GET", "/openapi.json", None),
    ("GET", "/docs", None),
    ("GET", "/no/such/route", None),
]


@pytest.mark.parametrize(("method", "path", "body"), PROTECTED)
def test_missing_key_is_401_on_every_protected_route(
    serve: Serve, built_store: Path, method: str, path: str, body: Any
) -> None:
    with serve(built_store, api_key=API_KEY) as client:
        response = client.request(method, path, json=body, headers={"Authorization": ""})
        error = assert_error(response, 401, "unauthorized")
    assert "missing API key" in error["message"]
    assert response.headers["www-authenticate"] == "Bearer"


def test_wrong_and_malformed_keys_are_401(serve: Serve, built_store: Path) -> None:
    with serve(built_store, api_key=API_KEY) as client:
        for header, words in [
            (f"Bearer {API_KEY}x", "invalid API key"),
            ("Bearer wrong", "invalid API key"),
            (f"Basic {API_KEY}", "malformed"),
            ("Bearer ", "malformed"),
            (API_KEY, "malformed"),
        ]:
            response = client.post("/v1/retrieve", json=QUESTION, headers={"Authorization": header})
            assert words in assert_error(response, 401, "unauthorized")["message"]


def test_right_key_is_served(serve: Serve, built_store: Path) -> None:
    with serve(built_store, api_key=API_KEY) as client:  # the client sends the key
        assert client.post("/v1/retrieve", json=QUESTION).status_code == 200
        assert client.get("/v1/index").status_code == 200
        assert client.get("/metrics").status_code == 200
        assert client.get("/openapi.json").status_code == 200
        lower = client.get("/v1/index", headers={"Authorization": f"bearer {API_KEY}"})
        assert lower.status_code == 200


def test_health_checks_need_no_key(serve: Serve, built_store: Path) -> None:
    with serve(built_store, api_key=API_KEY) as client:
        for path in ("/healthz", "/readyz"):
            assert client.get(path, headers={"Authorization": ""}).status_code == 200


def test_key_is_compared_in_constant_time(
    serve: Serve, built_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a: Any, b: Any) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    with serve(built_store, api_key=API_KEY) as client:
        client.get("/v1/index", headers={"Authorization": "Bearer nope"})
    assert (b"nope", API_KEY.encode()) in calls


def test_without_a_configured_key_nothing_is_asked(serve: Serve, built_store: Path) -> None:
    with serve(built_store) as client:
        assert client.post("/v1/retrieve", json=QUESTION).status_code == 200
        response = client.get("/v1/index", headers={"Authorization": "Bearer anything"})
        assert response.status_code == 200
