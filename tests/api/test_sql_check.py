"""POST /v1/sql/check: a query verified against the server's catalog, run nowhere."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from schemagraph import load_catalog
from schemarag.api.examples import ExampleIntake
from store import StoreLocation
from tests.api.conftest import API_KEY, EMBEDDER, Serve, assert_error, wait_until

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "check"


def intake(store: Path) -> ExampleIntake:
    catalog = load_catalog([f"infoschema:{FIXTURES}/bigquery", f"infoschema:{FIXTURES}/snowflake"])
    return ExampleIntake(catalog, StoreLocation.parse(store), lambda spec: EMBEDDER)


def test_check_answers_ok_or_the_problems(serve: Serve, built_store: Path) -> None:
    with serve(built_store, api_key=API_KEY, examples=intake(built_store)) as client:
        good = client.post(
            "/v1/sql/check",
            json={
                "database": "shop-analytics",
                "sql": "SELECT p.productRevenue FROM `shop-analytics.web.ga_sessions_*`, "
                "UNNEST(hits) AS h, UNNEST(h.product) AS p",
            },
        )
        assert good.status_code == 200, good.text
        assert good.json() == {
            "ok": True,
            "database": "shop-analytics",
            "dialect": "bigquery",
            "problems": [],
            "tables": ["web__ga_sessions_*"],
        }
        bad = client.post(
            "/v1/sql/check",
            json={
                "database": "patents_demo",
                "sql": "SELECT c.valu FROM PATENTS.PUBLICATIONS p, "
                'LATERAL FLATTEN(input => p."cpc") c',
            },
        )
        assert bad.status_code == 200, bad.text
        body = bad.json()
        assert (body["ok"], body["database"], body["dialect"]) == (
            False,
            "PATENTS_DEMO",
            "snowflake",
        )
        assert body["problems"] == [
            {
                "kind": "unknown_column",
                "message": "no column `valu` in `c` (FLATTEN); nearest: `c.value`",
                "name": "c.valu",
                "suggestions": ["`c.value`"],
            }
        ]
        refused = client.post(
            "/v1/sql/check", json={"database": "shop-analytics", "sql": "DELETE FROM ref.products"}
        ).json()
        assert [(p["kind"], p["name"]) for p in refused["problems"]] == [("refused", "write")]
        denied = client.post(
            "/v1/sql/check",
            json={"database": "shop-analytics", "sql": "SELECT 1"},
            headers={"Authorization": ""},
        )
        assert_error(denied, 401, "unauthorized")


def test_bad_requests_are_422_naming_the_field(serve: Serve, built_store: Path) -> None:
    with serve(built_store, examples=intake(built_store)) as client:
        unknown = client.post("/v1/sql/check", json={"database": "nowhere", "sql": "SELECT 1"})
        assert "nowhere" in assert_error(unknown, 422, "invalid_request", "database")["message"]
        blank = client.post("/v1/sql/check", json={"database": "shop-analytics", "sql": " "})
        assert_error(blank, 422, "invalid_request", "sql")
        extra = client.post(
            "/v1/sql/check", json={"database": "shop-analytics", "sql": "SELECT 1", "run": True}
        )
        assert extra.status_code == 422


def test_without_a_catalog_the_route_says_what_to_configure(
    serve: Serve, built_store: Path
) -> None:
    with serve(built_store) as client:
        answer = client.post("/v1/sql/check", json={"database": "x", "sql": "SELECT 1"})
        assert "--source" in assert_error(answer, 501, "not_configured")["message"]


def test_the_schema_documents_the_route(serve: Serve, built_store: Path) -> None:
    with serve(built_store) as client:
        schema = client.get("/openapi.json").json()
    operation = schema["paths"]["/v1/sql/check"]["post"]
    assert set(operation["responses"]) == {
        *("200", "400", "401", "408", "413", "415", "422", "501", "503")
    }
    problem = schema["components"]["schemas"]["SqlProblemOut"]["properties"]["kind"]
    assert problem["enum"] == ["refused", "unknown_table", "unknown_column", "not_unnested"]


def test_while_the_catalog_loads_check_answers_503_then_the_check(
    serve: Serve, built_store: Path, monkeypatch: Any
) -> None:
    """`serve --store S` reads the sources the store remembers after its index: a check asked
    meanwhile waits a while, then says to retry; once the catalog is in, it answers."""
    import threading

    import schemarag.api.examples as examples_module
    from schemarag.pending_catalog import PendingCatalog

    monkeypatch.setattr(examples_module, "CATALOG_WAIT_S", 0.1)
    monkeypatch.setattr("schemarag.api.routes.CATALOG_WAIT_S", 0.1)
    release = threading.Event()
    pending = PendingCatalog(lambda: intake(built_store).catalog, after=release.is_set)
    pending.start()
    loading = ExampleIntake(pending, StoreLocation.parse(built_store), lambda spec: EMBEDDER)
    ask = {"database": "shop-analytics", "sql": "SELECT 1 FROM `shop-analytics.web.ga_sessions_*`"}
    with serve(built_store, examples=loading) as client:
        early = client.post("/v1/sql/check", json=ask)
        release.set()
        wait_until(lambda: pending.now() is not None)
        late = client.post("/v1/sql/check", json=ask)
    assert "still loading" in assert_error(early, 503, "not_ready")["message"]
    assert early.headers["retry-after"] == "2"
    assert late.status_code == 200 and late.json()["ok"] is True, late.text
