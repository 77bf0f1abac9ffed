"""Input limits: JSON that fails validation answers 422, a body that is not JSON 400 and a body
over the size limit 413, each with the standard body naming the field at fault."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from schemarag.api import ApiOptions
from schemarag.api.models import (
    MAX_QUESTION_CHARS,
    MAX_TOP_DATABASES,
    MAX_TOP_TABLES,
    RetrieveRequest,
)
from tests.api.conftest import Serve, assert_error

OK = "How many singers are from France?"


@pytest.fixture
def client(serve: Serve, built_store: Path) -> Iterator[TestClient]:
    with serve(built_store, options=ApiOptions(max_body_bytes=32_768)) as client:
        yield client


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"question": "x" * (MAX_QUESTION_CHARS + 1)}, "question"),
        ({"question": ""}, "question"),
        ({"question": "   \n\t"}, "question"),
        ({"question": " \x1c\x1f "}, "question"),  # white space to Python, not to Unicode
        ({"question": "\x85\u3000"}, "question"),  # white space to Python, not to ECMAScript
        ({"question": 42}, "question"),
        ({}, "question"),
        ({"question": OK, "top_databases": 0}, "top_databases"),
        ({"question": OK, "top_databases": MAX_TOP_DATABASES + 1}, "top_databases"),
        ({"question": OK, "top_databases": "5"}, "top_databases"),
        ({"question": OK, "top_databases": True}, "top_databases"),
        ({"question": OK, "top_tables": 0}, "top_tables"),
        ({"question": OK, "top_tables": MAX_TOP_TABLES + 1}, "top_tables"),
        ({"question": OK, "top_tables": 2.5}, "top_tables"),
        ({"question": OK, "pool": "yes"}, "pool"),
        ({"question": OK, "surprise": 1}, "surprise"),
    ],
)
def test_retrieve_limits_name_the_field(client: TestClient, body: Any, field: str) -> None:
    error = assert_error(client.post("/v1/retrieve", json=body), 422, "invalid_request", field)
    assert error["message"].startswith(f"{field}:")


def test_the_published_blank_pattern_is_python_white_space() -> None:
    """Clients validate with the published schema (ECMAScript regex), the server with pydantic's
    (Rust regex) and `str.strip`: each character is refused by both or by neither. A draw of the
    schema property test sent U+0085 alone, valid by ECMAScript's `\\s` yet refused here."""
    schema = RetrieveRequest.model_json_schema()["properties"]["question"]
    published = jsonschema_rs.validator_for({"type": "string", "pattern": schema["pattern"]})
    for code in [*range(0xD800), *range(0xE000, 0x10000)]:
        char = chr(code)
        try:
            RetrieveRequest.model_validate_json(json.dumps({"question": char}))
            accepted = True
        except ValidationError:
            accepted = False
        assert accepted == published.is_valid(char) == (not char.isspace()), hex(code)


def test_limits_are_inclusive(client: TestClient) -> None:
    body = {
        "question": "y" * MAX_QUESTION_CHARS,
        "top_databases": MAX_TOP_DATABASES,
        "top_tables": MAX_TOP_TABLES,
    }
    assert client.post("/v1/retrieve", json=body).status_code == 200
    smallest = {"question": "?", "top_databases": 1, "top_tables": 1}
    assert client.post("/v1/retrieve", json=smallest).status_code == 200


def test_a_longest_question_fits_the_body_limit_even_fully_escaped(client: TestClient) -> None:
    question = "\U0001f600" * MAX_QUESTION_CHARS  # 12 bytes each as a \\uXXXX surrogate pair
    body = json.dumps({"question": question}, ensure_ascii=True).encode()
    assert len(body) > 24_000
    response = client.post(
        "/v1/retrieve", content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 200, response.text


def test_body_over_the_limit_is_413_naming_body(serve: Serve, built_store: Path) -> None:
    with serve(built_store, options=ApiOptions(max_body_bytes=2048)) as client:
        big = json.dumps({"question": "z" * 3000}).encode()
        response = client.post(
            "/v1/retrieve", content=big, headers={"Content-Type": "application/json"}
        )
        error = assert_error(response, 413, "body_too_large", "body")
        assert "2048 bytes" in error["message"]

        def chunks() -> Iterator[bytes]:  # no Content-Length: counted while reading
            for _ in range(8):
                yield b" " * 400
            yield json.dumps({"question": OK}).encode()

        response = client.post(
            "/v1/retrieve", content=chunks(), headers={"Content-Type": "application/json"}
        )
        assert_error(response, 413, "body_too_large", "body")
        assert client.post("/v1/retrieve", json={"question": OK}).status_code == 200


def test_a_200_kb_body_is_413_and_a_body_not_json_400(client: TestClient) -> None:
    """What clients and proxies expect: 413 for too large, 400 for unparseable JSON, 422 only
    for JSON that fails validation."""
    headers = {"Content-Type": "application/json"}
    big = json.dumps({"question": OK, "pad": "x" * 200_000})
    response = client.post("/v1/retrieve", content=big, headers=headers)
    assert_error(response, 413, "body_too_large", "body")
    response = client.post("/v1/retrieve", content=b"{oops", headers=headers)
    assert_error(response, 400, "invalid_json", "body")
    response = client.post("/v1/retrieve", json={"question": OK, "top_tables": 0})
    assert_error(response, 422, "invalid_request", "top_tables")


@pytest.mark.parametrize(
    ("content", "headers", "status", "code"),
    [
        (b'{"question": "unterminated', {"Content-Type": "application/json"}, 400, "invalid_json"),
        (b"[1, 2, 3]", {"Content-Type": "application/json"}, 422, "invalid_request"),
        (b"[1, 2, 3]", {"Content-Type": "text/plain"}, 422, "invalid_request"),
        (b"", {"Content-Type": "application/json"}, 422, "invalid_request"),
        (b"hello", {}, 400, "invalid_json"),
    ],
)
def test_malformed_bodies_are_400_or_422_naming_body(
    client: TestClient, content: bytes, headers: dict[str, str], status: int, code: str
) -> None:
    """400: the body cannot be read as JSON; 422: it can, and is not the object asked for."""
    response = client.post("/v1/retrieve", content=content, headers=headers)
    assert_error(response, status, code, "body")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"question": "x" * (MAX_QUESTION_CHARS + 1)}, "question"),
        ({"question": OK, "strategy": "guess"}, "strategy"),
        ({"question": OK, "max_rows": 0}, "max_rows"),
        ({"question": OK, "max_rows": 1001}, "max_rows"),
        ({"question": OK, "tables": []}, "tables"),
        ({"question": OK, "tables": [""]}, "tables"),
        ({"question": OK, "db_id": ""}, "db_id"),
        ({"question": OK, "execute": "no"}, "execute"),
    ],
)
def test_generate_limits_name_the_field(client: TestClient, body: Any, field: str) -> None:
    assert_error(client.post("/v1/generate", json=body), 422, "invalid_request", field)


@pytest.mark.parametrize(
    ("content", "words"),
    [
        # valid JSON, 10 KB, nested deeper than the parser goes
        (b"[" * 5000 + b"]" * 5000, "nested too deeply"),
        (b'{"question": ' * 1500 + b"1" + b"}" * 1500, "nested too deeply"),
        ('{"question": "café"}'.encode("latin-1"), "not UTF-8"),
        # a JSON document cut short (by the client, or by a Content-Length shorter than it)
        (b'{"question": "How many', "the JSON is cut short: the body ends after 22 characters"),
        (b'{"question": "x", ', "the JSON is cut short"),
        (b'{"question": "x"} trailing', "at character 18"),
    ],
)
def test_unreadable_bodies_say_what_is_wrong(
    client: TestClient, content: bytes, words: str
) -> None:
    response = client.post(
        "/v1/retrieve", content=content, headers={"Content-Type": "application/json"}
    )
    message = assert_error(response, 400, "invalid_json", "body")["message"]
    assert words in message
    assert "send UTF-8 JSON" not in message or words == "not UTF-8"
    assert "Content-Length" not in message


@pytest.mark.parametrize(
    "headers",
    [
        {},  # no Content-Type at all
        {"Content-Type": "application/x-www-form-urlencoded"},  # what `curl -d` sends
        {"Content-Type": "text/plain; charset=utf-8"},
        {"Content-Type": "application/vnd.api+json"},
    ],
    ids=["none", "curl-d-form", "text-plain", "json-suffix"],
)
def test_a_json_body_is_read_as_json_whatever_the_client_labelled_it(
    client: TestClient, headers: dict[str, str]
) -> None:
    """Before, a body that is a JSON object got 422 "expected a JSON object" without the
    header `Content-Type: application/json`."""
    body = json.dumps({"question": OK, "top_databases": 2}).encode()
    labelled = client.post("/v1/retrieve", content=body, headers=headers)
    assert labelled.status_code == 200, labelled.text
    answer = labelled.json()
    assert len(answer["databases"]) == 2
    as_json = client.post("/v1/retrieve", json={"question": OK, "top_databases": 2}).json()
    assert [d["db_id"] for d in answer["databases"]] == [d["db_id"] for d in as_json["databases"]]
    # the JSON's own mistakes are reported as such, whatever the label
    bad = client.post("/v1/retrieve", content=b'{"question": 42}', headers=headers)
    assert_error(bad, 422, "invalid_request", "question")


@pytest.mark.parametrize(
    ("content", "content_type"),
    [
        (b"question=How+many+singers", "application/x-www-form-urlencoded"),
        (b"How many singers?", "text/plain"),
        (b"<question>How many singers?</question>", "application/xml"),
        (
            b'--x\r\nContent-Disposition: form-data; name="question"\r\n\r\nhi\r\n--x--',
            "multipart/form-data; boundary=x",
        ),
    ],
)
def test_a_body_that_is_not_json_is_415_naming_the_header(
    client: TestClient, content: bytes, content_type: str
) -> None:
    response = client.post("/v1/retrieve", content=content, headers={"Content-Type": content_type})
    message = assert_error(response, 415, "unsupported_media_type", None)["message"]
    assert message.startswith(f"Content-Type: {content_type} is not JSON")
    assert "'Content-Type: application/json'" in message
