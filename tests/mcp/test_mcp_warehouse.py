"""The MCP server on a warehouse estate (a hand-written BigQuery COLUMN_FIELD_PATHS export and a
Snowflake COLUMNS export), spoken to in-process by the SDK's own client: the agent reads each
database's dialect, real table names and nested fields, and checks SQL where nothing runs."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import Client

from schemarag.cli import main

WAREHOUSE = Path(__file__).resolve().parents[1] / "fixtures" / "warehouse"
SOURCES = [f"infoschema:{WAREHOUSE / 'bigquery'}", f"infoschema:{WAREHOUSE / 'snowflake'}"]


@pytest.fixture(scope="module")
def estate(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """An `Estate` over a store built from the two exports (hashing embedder: fast)."""
    from retriever import RetrieverConfig
    from schemagraph.sources import load_catalog
    from schemarag.api import ServedIndex, StoreSource
    from schemarag.mcp.estate import Estate
    from schemarag.settings import Settings
    from store import StoreLocation

    root = tmp_path_factory.mktemp("warehouse")
    patch = pytest.MonkeyPatch()
    patch.setenv("SCHEMARAG_CACHE", str(root / "cache.sqlite"))
    store = root / "store"
    argv = ["index", "build", *SOURCES, "--store", str(store), "--embedder", "hashing:64"]
    assert main([*argv, "--no-cache", "--chains", "1"]) == 0
    settings = Settings.from_env()
    source = StoreSource(
        StoreLocation.parse(str(store)),
        make_embedder=settings.embedder,
        config=RetrieverConfig(abstain_below=0.0),  # the hashing embedder is never confident
    )
    served = ServedIndex(source)
    served.start()
    yield Estate(served, load_catalog(SOURCES))
    served.stop()
    source.close()
    patch.undo()


def run(estate: Any, session: Callable[[Client], Awaitable[Any]]) -> Any:
    from schemarag.mcp.server import create_server

    async def go() -> Any:
        async with Client(create_server(estate)) as client:
            return await session(client)

    return anyio.run(go)


def text(result: Any) -> str:
    return "".join(block.text for block in result.content)


def test_the_instructions_name_each_dialect_and_do_not_ask_to_run_queries(estate: Any) -> None:
    async def session(client: Client) -> Any:
        return client.instructions, client.server_info, (await client.list_tools()).tools

    instructions, info, tools = run(estate, session)
    assert "BigQuery: 1 (acme-retail-prod)" in instructions
    assert "Snowflake: 1 (SHOP_DB)" in instructions
    assert "SQLite SELECT" not in instructions and "check_sql" in instructions
    assert "No database has a connection here" in instructions
    assert 'pass its dialect to find_tables (dialect="bigquery")' in instructions
    assert {"find_tables", "describe_tables", "check_sql", "run_sql"} <= {t.name for t in tools}
    assert info.version and info.version[0].isdigit()


def test_find_then_describe_in_real_names_then_check_catches_a_wrong_field(estate: Any) -> None:
    question = "Which products brought the most revenue in January 2024 sessions?"

    async def session(client: Client) -> dict[str, Any]:
        found = json.loads(text(await client.call_tool("find_tables", {"question": question})))
        bq = next(d for d in found["databases"] if d["db_id"] == "acme-retail-prod")
        described = text(
            await client.call_tool(
                "describe_tables",
                {"database": bq["db_id"], "tables": [bq["tables"][0]["name"]]},
            )
        )
        wrong = "SELECT productRevenue FROM `acme-retail-prod.web_analytics.ga_sessions_*`"
        fixed = (
            "SELECT product.v2ProductName, SUM(product.productRevenue) / 1e6 AS revenue "
            "FROM `acme-retail-prod.web_analytics.ga_sessions_*`, UNNEST(hits) AS hits, "
            "UNNEST(hits.product) AS product "
            "WHERE _TABLE_SUFFIX BETWEEN '20240101' AND '20240131' "
            "GROUP BY 1 ORDER BY revenue DESC LIMIT 10"
        )
        checks = {
            name: await client.call_tool("check_sql", {"database": bq["db_id"], "sql": sql})
            for name, sql in (("wrong", wrong), ("fixed", fixed))
        }
        ran = await client.call_tool("run_sql", {"database": bq["db_id"], "sql": fixed})
        return {"found": bq, "described": described, "checks": checks, "ran": ran}

    answers = run(estate, session)
    bq = answers["found"]
    assert bq["dialect"] == "bigquery"
    assert all(t["name"].startswith("acme-retail-prod.") for t in bq["tables"])
    families = [t["family"] for t in bq["tables"] if "family" in t]
    assert families[0]["wildcard"] == "`acme-retail-prod.web_analytics.ga_sessions_*`"
    assert families[0]["last"] == "acme-retail-prod.web_analytics.ga_sessions_20240103"
    described = answers["described"]
    assert "(BigQuery SQL)" in described
    assert "CREATE TABLE `acme-retail-prod.web_analytics.ga_sessions_" in described
    assert "hits ARRAY<STRUCT< -- REPEATED: UNNEST(hits)" in described
    assert "web_analytics__" not in described
    assert "through the wildcard `acme-retail-prod.web_analytics.ga_sessions_*`" in described
    wrong = json.loads(text(answers["checks"]["wrong"]))
    assert wrong["ok"] is False and "productRevenue" in json.dumps(wrong["problems"])
    assert "hits.product.productRevenue" in json.dumps(wrong["problems"])
    fixed = json.loads(text(answers["checks"]["fixed"]))
    assert fixed["ok"] is True, fixed
    assert fixed["tables"] == ["acme-retail-prod.web_analytics.ga_sessions_*"]
    assert answers["ran"].is_error and "check_sql" in text(answers["ran"])


def test_snowflake_tables_are_described_as_database_schema_table(estate: Any) -> None:
    async def session(client: Client) -> str:
        return text(
            await client.call_tool(
                "describe_tables", {"database": "SHOP_DB", "tables": ["SHOP_DB.SALES.ORDERS"]}
            )
        )

    described = run(estate, session)
    assert "(Snowflake SQL)" in described and "CREATE TABLE SHOP_DB.SALES.ORDERS (" in described


def test_find_tables_ranks_the_databases_of_the_agents_dialect_only(estate: Any) -> None:
    question = "Which products brought the most revenue?"

    async def session(client: Client) -> dict[str, Any]:
        return {
            dialect: await client.call_tool(
                "find_tables", {"question": question, "top_databases": 5, "dialect": dialect}
            )
            for dialect in ("snowflake", "bigquery", "oracle")
        }

    answers = run(estate, session)
    for dialect, db in (("snowflake", "SHOP_DB"), ("bigquery", "acme-retail-prod")):
        assert not answers[dialect].is_error, text(answers[dialect])
        assert [d["db_id"] for d in json.loads(text(answers[dialect]))["databases"]] == [db]
    assert answers["oracle"].is_error
    assert text(answers["oracle"]).endswith(
        ": no database of dialect 'oracle'; this estate has: bigquery, snowflake"
    )


def test_an_argument_error_is_one_line_in_schemaragss_words(estate: Any) -> None:
    async def session(client: Client) -> Any:
        return await client.call_tool("find_tables", {"question": "x", "top_databases": 500})

    answer = run(estate, session)
    assert answer.is_error
    message = text(answer)
    assert message == (
        "find_tables: `top_databases` should be less than or equal to 20; see the tool's "
        "input schema"
    )


class _Held:
    """An index source whose `open` waits until `release` is set: an index still loading."""

    def __init__(self, inner: Any) -> None:
        import threading

        self.inner = inner
        self.release = threading.Event()

    @property
    def where(self) -> str:
        return str(self.inner.where)

    def probe(self) -> str | None:
        return self.inner.probe()  # type: ignore[no-any-return]

    def open(self) -> Any:
        self.release.wait(30)
        return self.inner.open()

    def latest_build(self) -> str | None:
        return self.inner.latest_build()  # type: ignore[no-any-return]

    def close(self) -> None:
        self.release.set()


def test_catalog_tools_answer_while_the_index_loads_and_find_tables_reports_progress(
    estate: Any,
) -> None:
    import time

    from schemarag.api import ServedIndex
    from schemarag.mcp.estate import Estate

    held = _Held(estate.served.source)
    served = ServedIndex(held)
    served.start()
    loading = Estate(served, estate.catalog, ready_timeout_s=2.5)
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async def session(client: Client) -> dict[str, Any]:
        started = time.monotonic()
        out = {
            "list": await client.call_tool("list_databases", {}),
            "describe": await client.call_tool(
                "describe_tables", {"database": "SHOP_DB", "tables": ["ORDERS"]}
            ),
            "check": await client.call_tool(
                "check_sql", {"database": "SHOP_DB", "sql": "SELECT ORDER_ID FROM ORDERS"}
            ),
        }
        out["catalog_s"] = time.monotonic() - started
        out["waiting"] = await client.call_tool(
            "find_tables", {"question": "orders by status"}, progress_callback=on_progress
        )
        held.release.set()
        out["found"] = await client.call_tool(
            "find_tables", {"question": "orders by status"}, progress_callback=on_progress
        )
        return out

    try:
        answers = run(loading, session)
    finally:
        held.release.set()
        served.stop()
    assert answers["catalog_s"] < 2.0  # none of them waited for the index
    listed = json.loads(text(answers["list"]))
    assert listed["total"] == 2 and "still loading" in listed["note"]
    assert {d["dialect"] for d in listed["databases"]} == {"bigquery", "snowflake"}
    assert "CREATE TABLE SHOP_DB.SALES.ORDERS" in text(answers["describe"])
    assert json.loads(text(answers["check"]))["ok"] is True
    assert answers["waiting"].is_error and "still loading" in text(answers["waiting"])
    assert len(progress) >= 2 and all(total == 2.5 for _, total, _ in progress)
    assert "loading the index" in str(progress[-1][2])
    assert not answers["found"].is_error
    assert json.loads(text(answers["found"]))["databases"]


def test_an_abstained_answer_says_so_first_and_lists_only_candidates(estate: Any) -> None:
    from retriever import RetrieverConfig
    from schemarag.api import ServedIndex, StoreSource
    from schemarag.mcp.estate import Estate
    from schemarag.settings import Settings

    inner = estate.served.source
    source = StoreSource(
        inner.location,
        make_embedder=Settings.from_env().embedder,
        config=RetrieverConfig(abstain_below=1.0),  # nothing is trusted
    )
    served = ServedIndex(source)
    served.start()

    async def session(client: Client) -> str:
        found = await client.call_tool("find_tables", {"question": "weather on Mars by month"})
        return text(found)

    try:
        answer = run(Estate(served, estate.catalog), session)
    finally:
        served.stop()
        source.close()
    assert answer.startswith('{"abstained":true,"note":"no database seems to fit')
    data = json.loads(answer)
    assert set(data) == {"abstained", "note", "confidence", "build", "candidates"}
    assert set(data["candidates"][0]) == {"db_id", "score", "dialect", "tables"}
    assert all(isinstance(t, str) for c in data["candidates"] for t in c["tables"])


def test_before_the_catalog_loads_the_store_names_each_dialect_and_real_table(estate: Any) -> None:
    """The index answers first (the catalog of a real warehouse takes seconds more): its
    manifest's dialects and its table documents' engine names make the same answers."""
    from schemarag.mcp.estate import Estate
    from schemarag.pending_catalog import PendingCatalog

    release = __import__("threading").Event()
    pending = PendingCatalog(lambda: estate.catalog, after=release.is_set)
    early = Estate(estate.served, pending, manifest=estate.served.current.manifest)
    early.ready_timeout_s = 0.2
    question = "Which products brought the most revenue in January 2024 sessions?"

    async def session(client: Client) -> dict[str, Any]:
        ask = {"question": question, "top_databases": 2}
        found = await client.call_tool("find_tables", ask)
        listed = await client.call_tool("list_databases", {})
        waiting = await client.call_tool("describe_tables", {"database": "SHOP_DB"})
        return {
            "instructions": client.instructions,
            "found": json.loads(text(found)),
            "listed": json.loads(text(listed)),
            "waiting": text(waiting),
        }

    pending.start()
    before = run(early, session)
    release.set()
    early.ready_timeout_s = 30.0
    after = run(early, session)
    assert before["found"] == after["found"]
    bq = next(d for d in before["found"]["databases"] if d["db_id"] == "acme-retail-prod")
    assert bq["dialect"] == "bigquery"
    assert all(t["name"].startswith("acme-retail-prod.") for t in bq["tables"])
    family = next(t["family"] for t in bq["tables"] if "family" in t)
    assert family["wildcard"] == "`acme-retail-prod.web_analytics.ga_sessions_*`"
    assert family["first"] == "acme-retail-prod.web_analytics.ga_sessions_20240101"
    assert "BigQuery: 1 (acme-retail-prod)" in before["instructions"]
    assert before["instructions"] == after["instructions"]
    counts = {d["db_id"]: d["tables"] for d in after["listed"]["databases"]}
    assert {d["db_id"]: d["tables"] for d in before["listed"]["databases"]} == counts
    shop = next(d for d in before["listed"]["databases"] if d["db_id"] == "SHOP_DB")
    assert shop["dialect"] == "snowflake"
    assert "SHOP_DB.SALES.ORDERS" in shop["table_names"]
    assert "the catalog is still loading" in before["waiting"]
    assert after["waiting"].startswith("-- database SHOP_DB (Snowflake SQL)")


def test_a_catalog_that_fails_to_load_is_said_by_each_tool_that_needs_it(estate: Any) -> None:
    from schemagraph.errors import SourceError
    from schemarag.mcp.estate import Estate, EstateError
    from schemarag.pending_catalog import PendingCatalog

    def broken() -> Any:
        raise SourceError("exports/COLUMNS.csv: cut short inside a quoted field")

    pending = PendingCatalog(broken)
    pending.start()
    failing = Estate(estate.served, pending)
    with pytest.raises(EstateError, match=r"could not be loaded: exports/COLUMNS\.csv: cut short"):
        failing.describe_tables("SHOP_DB")
    with pytest.raises(EstateError, match="could not be loaded"):
        failing.check_sql("SHOP_DB", "SELECT 1")
    assert failing.find_tables("orders by status")["build"]
