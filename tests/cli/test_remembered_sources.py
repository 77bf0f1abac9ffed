"""A store remembers the sources it was built from: `index build` records them in the build's
manifest (paths absolute, never a password), and `mcp`, `serve` and `ask` load them when given
no `--source`; a remembered folder that moved is one line naming it and `--source` (exit 2)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from schemarag.cli import main
from store import StoreLocation
from tests.pgcluster import PostgresCluster

ROOT = Path(__file__).resolve().parents[2]
BUILD = ["--embedder", "hashing:64", "--no-cache", "--chains", "1", "--iterations", "0"]
COUNT = "SELECT count(*) FROM orders"


def build(store: str, *sources: str) -> None:
    assert main(["index", "build", *sources, "--store", store, *BUILD, "--processes", "0"]) == 0


def remembered(store: Path) -> list[dict[str, Any]]:
    location = StoreLocation.parse(store)
    build_id = location.current()
    assert build_id is not None
    return list(location.manifest(build_id)["sources"])


def shop_database(path: Path) -> Path:
    """A one-table SQLite database that is not in the bundled sample."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE orders (order_id INTEGER PRIMARY KEY, status TEXT)")
        conn.executemany("INSERT INTO orders VALUES (?, ?)", [(1, "open"), (2, "shipped")])
    conn.close()
    return path


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCHEMARAG_CACHE", str(tmp_path / "cache.sqlite"))
    monkeypatch.setenv("SCHEMARAG_LLM", "")
    monkeypatch.delenv("SCHEMARAG_STORE", raising=False)


def test_a_build_records_its_sources_with_absolute_paths(
    sample_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    shutil.copytree(sample_dir, tmp_path / "data" / "sample")
    shop_database(tmp_path / "data" / "shop.sqlite")
    monkeypatch.chdir(tmp_path)
    build("kb", "spider:data/sample", "sqlite:data/shop.sqlite")
    assert remembered(tmp_path / "kb") == [
        {"kind": "spider", "spec": f"spider:{tmp_path / 'data' / 'sample'}"},
        {"kind": "sqlite", "spec": f"sqlite:{tmp_path / 'data' / 'shop.sqlite'}"},
    ]
    capsys.readouterr()
    assert main(["index", "status", "--store", "kb"]) == 0
    sources = f"spider:{tmp_path / 'data' / 'sample'} sqlite:{tmp_path / 'data' / 'shop.sqlite'}"
    assert f"sources      {sources}" in capsys.readouterr().out.splitlines()
    # the same catalog from a folder that moved is up to date, and the store learns the new path
    (tmp_path / "data").rename(tmp_path / "moved")
    build("kb", "spider:moved/sample", "sqlite:moved/shop.sqlite")
    assert [r["spec"] for r in remembered(tmp_path / "kb")] == [
        f"spider:{tmp_path / 'moved' / 'sample'}",
        f"sqlite:{tmp_path / 'moved' / 'shop.sqlite'}",
    ]


def test_ask_without_source_uses_what_the_store_was_built_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`shop` is in no bundled sample: before, `ask --db shop` looked it up there."""
    shop = shop_database(tmp_path / "data" / "shop.sqlite")
    build(str(tmp_path / "kb"), f"sqlite:{shop}")
    capsys.readouterr()
    monkeypatch.chdir(tmp_path / "data")
    argv = ["ask", "How many orders?", "--db", "shop", "--store", str(tmp_path / "kb")]
    code = main([*argv, "--llm", f"scripted:{COUNT}", "--execute", "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    answer = json.loads(captured.out)
    assert answer["sql"] == COUNT and answer["execution"]["rows"] == [[2]]
    assert captured.err == ""


def test_a_source_that_moved_is_one_line_naming_it_and_the_flag(
    sample_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    shutil.copytree(sample_dir, data)
    store = str(tmp_path / "kb")
    build(store, f"spider:{data}")
    capsys.readouterr()
    data.rename(tmp_path / "elsewhere")
    scripted = ["--llm", "scripted:SELECT count(*) FROM singer"]
    for argv in (
        ["serve", "--store", store],
        ["mcp", "--store", store],
        ["ask", "How many singers?", "--db", "concert_singer", "--store", store, *scripted],
    ):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1, err
        assert f"spider:{data}" in err and "--source" in err and "Traceback" not in err
    # --source says where it is now
    moved = ["--source", f"spider:{tmp_path / 'elsewhere'}"]
    argv = ["ask", "How many singers?", "--db", "concert_singer", "--store", store]
    assert main([*argv, *moved, *scripted]) == 0, capsys.readouterr().err


def test_mcp_with_the_store_alone_offers_every_tool(
    sample_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, `mcp --store S` without --source offered find_tables and list_databases only."""
    pytest.importorskip("mcp")
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    data = tmp_path / "data"
    shutil.copytree(sample_dir, data)
    store = tmp_path / "kb"
    monkeypatch.chdir(tmp_path)
    build("kb", "spider:data")
    (tmp_path / "elsewhere").mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SCHEMARAG_API_KEY": ""}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "schemarag", "mcp", "--store", str(store)],
        env=env,
        cwd=str(tmp_path / "elsewhere"),
    )

    async def session() -> tuple[set[str], Any, Any]:
        with (tmp_path / "stderr").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                tools = {tool.name for tool in (await client.list_tools()).tools}
                described = await client.call_tool(
                    "describe_tables", {"database": "concert_singer", "tables": ["singer"]}
                )
                rows = await client.call_tool(
                    "run_sql", {"database": "concert_singer", "sql": "SELECT count(*) FROM singer"}
                )
                return tools, described, rows

    tools, described, rows = anyio.run(session)
    assert {"find_tables", "list_databases", "describe_tables", "run_sql"} <= tools
    assert not described.is_error and "CREATE TABLE singer" in described.content[0].text
    assert not rows.is_error and json.loads(rows.content[0].text)["rows"] == [[6]]
    log = (tmp_path / "stderr").read_text()
    assert f"spider:{data}" in log and "without --source" not in log and "Traceback" not in log


def test_a_database_password_is_never_remembered(
    postgres_cluster: PostgresCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = postgres_cluster.create_database(
        "remembered",
        "CREATE SCHEMA sales; CREATE TABLE sales.orders (order_id int PRIMARY KEY, status text);"
        "INSERT INTO sales.orders VALUES (1, 'open'), (2, 'shipped');",
    )
    password = postgres_cluster.password
    assert password and f":{password}@" in url
    build(str(tmp_path / "kb"), url, "--schemas", "sales")
    (record,) = remembered(tmp_path / "kb")
    assert record["kind"] == "postgresql" and record["schemas"] == ["sales"]
    assert record["spec"] == url.replace(f":{password}@", "@")
    for path in (tmp_path / "kb").rglob("*.json"):
        assert password not in path.read_text(), path
    # the password comes from the environment when the catalog is loaded again
    monkeypatch.setenv("PGPASSWORD", password)
    argv = ["ask", "How many orders?", "--db", "remembered.sales", "--store", str(tmp_path / "kb")]
    assert main([*argv, "--llm", f"scripted:{COUNT}", "--execute"]) == 0
