"""Schemathesis over /openapi.json: requests generated from the published schema, valid ones
and invalid ones, for every route, must never get a 5xx, and every response must match what
the schema documents (status codes, content types, bodies). Generation is live here (the
scripted offline LLM and the sample catalog), so /v1/generate runs the real strategies.

Schemathesis's pytest loader does not run under pytest 9 (it sets `Function._nodeid`), so the
cases are drawn from its Hypothesis strategies in an ordinary `@given` test.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.specs.openapi.checks import positive_data_acceptance

from generator import Models
from providers import ScriptedLLM
from schemagraph import Catalog
from schemarag.api import ApiOptions, Generation, create_app
from schemarag.api.examples import ExampleIntake
from schemarag.settings import Settings
from store import StoreLocation
from tests.api.conftest import EMBEDDER, source_for, wait_until

OPERATIONS = [
    "POST /v1/retrieve",
    "POST /v1/generate",
    "POST /v1/examples",
    "POST /v1/sql/check",
    "GET /v1/index",
    "GET /healthz",
    "GET /readyz",
    "GET /metrics",
]


@pytest.fixture(scope="module")
def api_schema(
    built_store: Path, catalog: Catalog, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    llm = ScriptedLLM("```sql\nSELECT count(*) FROM singer\n```")
    # examples go to a copy of the store (the one served here is shared and read-only)
    examples_store = tmp_path_factory.mktemp("property") / "kb"
    shutil.copytree(built_store, examples_store)
    app = create_app(
        Settings(),
        source_for(built_store),
        options=ApiOptions(reload_interval_s=0.05),
        generation=Generation(catalog, Models((llm,))),
        pool_llm=ScriptedLLM('{"databases": [{"db_id": "pets_1", "tables": ["Pets"]}]}'),
        examples=ExampleIntake(catalog, StoreLocation.parse(examples_store), lambda _: EMBEDDER),
    )
    with TestClient(app) as client:  # runs the lifespan: the index loads once
        wait_until(lambda: client.get("/readyz").status_code == 200)
        yield schemathesis.openapi.from_asgi("/openapi.json", without_lifespan(app))


def without_lifespan(app: Any) -> Any:
    """`app` for schemathesis, whose test client runs the lifespan around every call: the
    fixture's client owns the real one (starting it again would reload the index each time)."""

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "lifespan":
            await app(scope, receive, send)
            return
        while True:
            message = await receive()
            kind = message["type"].rsplit(".", 1)[-1]
            await send({"type": f"lifespan.{kind}.complete"})
            if kind == "shutdown":
                return

    wrapped.app = app  # type: ignore[attr-defined]
    return wrapped


def test_every_operation_is_covered(api_schema: Any) -> None:
    labels = {op.ok().label for op in api_schema.get_all_operations()}
    assert labels == set(OPERATIONS)


CASES = [(label, GenerationMode.POSITIVE) for label in OPERATIONS] + [
    (label, GenerationMode.NEGATIVE) for label in OPERATIONS if label.startswith("POST")
]  # the GET routes take no input to make invalid


@pytest.mark.parametrize(("label", "mode"), CASES)
def test_no_server_errors_and_responses_match_the_schema(
    api_schema: Any, label: str, mode: GenerationMode
) -> None:
    operation = api_schema.find_operation_by_label(label)
    strategy = operation.as_strategy(generation_mode=mode)
    # A schema-valid request may still name a database, tables or a dialect the estate does
    # not have: that is a 422 by design (any question text is answered: the test below).
    named = ("POST /v1/generate", "POST /v1/sql/check", "POST /v1/retrieve")
    excluded = [positive_data_acceptance] if label in named else []

    @given(case=strategy)
    @settings(
        max_examples=25,
        deadline=None,
        database=None,
        # The same cases on every run, so CI does not pass or fail by the draw. A random draw
        # once found a real bug (U+0085 alone: blank to the server, not to the published
        # pattern; test_limits now checks every character); try others with
        # derandomize=False and --hypothesis-seed=N.
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    def check(case: Any) -> None:
        case.call_and_validate(excluded_checks=excluded)

    check()


@given(question=st.text(min_size=1, max_size=300).filter(lambda q: q.strip()))
@settings(max_examples=40, deadline=None, database=None)
def test_any_question_text_is_answered(built_store_client: TestClient, question: str) -> None:
    response = built_store_client.post("/v1/retrieve", json={"question": question})
    assert response.status_code == 200, response.text


@pytest.fixture(scope="module")
def built_store_client(api_schema: Any) -> TestClient:
    return TestClient(api_schema.app.app)
