"""`schemarag mcp` as a client sees it: the real command, started as a process and spoken to
with the MCP SDK's own client, over stdio and over streamable HTTP, on the bundled sample."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from schemarag.cli import main
from tests.processes import group_members, wait_until_gone

ROOT = Path(__file__).resolve().parents[2]
KEY = "test-key-0123456789"
CORE_TOOLS = {"find_tables", "list_databases", "describe_tables", "check_sql", "run_sql"}

NEVER_ENDING_CTE = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
)
#: what `sql run` refuses or stops, with the word the tool error must carry
HOSTILE = {
    "DROP TABLE singer": "refused",
    "DELETE FROM singer": "refused",
    "ATTACH DATABASE '{tmp}/evil.db' AS evil": "refused",
    "PRAGMA writable_schema = 1": "refused",
    "PRAGMA user_version = 7": "refused",
    "SELECT 1; DROP TABLE singer": "refused",
    "WITH x AS (DELETE FROM singer RETURNING *) SELECT * FROM x": "refused",
    "SELECT load_extension('{tmp}/evil.so')": "refused",
    "VACUUM INTO '{tmp}/copy.db'": "refused",
    NEVER_ENDING_CTE: "timeout",
    "SELECT count(*) FROM " + ", ".join(f"singer AS s{i}" for i in range(12)): "timeout",
    "SELECT length(randomblob(2000000000))": "error",
    "SELECT length(zeroblob(2000000000))": "error",
}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, sample_dir: Path) -> dict[str, Any]:
    """A store built from a copy of the sample (hashing embedder: fast), the copy's path, and
    the environment the server runs in."""
    root = tmp_path_factory.mktemp("mcp")
    sample = root / "sample"
    shutil.copytree(sample_dir, sample)
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "SCHEMARAG_CACHE": str(root / "cache.sqlite"),
        "SCHEMARAG_LLM": "",
        "SCHEMARAG_API_KEY": "",
    }
    patch = pytest.MonkeyPatch()
    patch.setenv("SCHEMARAG_CACHE", env["SCHEMARAG_CACHE"])
    store = root / "store"
    argv = ["index", "build", f"spider:{sample}", "--store", str(store)]
    assert main([*argv, "--embedder", "hashing:64", "--no-cache", "--chains", "1"]) == 0
    patch.undo()
    return {"root": root, "sample": sample, "store": store, "env": env}


def server_args(world: dict[str, Any], *extra: str) -> list[str]:
    return [
        "-m",
        "schemarag",
        "mcp",
        "--store",
        str(world["store"]),
        "--source",
        f"spider:{world['sample']}",
        "--timeout",
        "1",
        *extra,
    ]


def run_stdio(
    world: dict[str, Any], session: Callable[[Client], Awaitable[Any]], stderr: Path
) -> Any:
    """`session(client)` against a stdio server; its stderr goes to `stderr`."""
    params = StdioServerParameters(
        command=sys.executable, args=server_args(world), env=world["env"], cwd=str(world["root"])
    )

    async def go() -> Any:
        with stderr.open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                return await session(client)

    return anyio.run(go)


def text(result: Any) -> str:
    return "".join(block.text for block in result.content)


def no_traceback(stderr: Path) -> None:
    log = stderr.read_text()
    assert "Traceback" not in log, log
    assert "Error executing tool" not in log and "ERROR" not in log, log


def sha256(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*.sqlite"))
    }


# -- stdio -------------------------------------------------------------------------------


def test_tools_are_listed_with_their_json_schemas(world: dict[str, Any], tmp_path: Path) -> None:
    async def session(client: Client) -> Any:
        tools = (await client.list_tools()).tools
        await client.call_tool("list_databases", {})  # waits for the first build to load
        return tools, await client.read_resource("schemarag://index")

    tools, status = run_stdio(world, session, tmp_path / "stderr")
    by_name = {tool.name: tool for tool in tools}
    assert set(by_name) == CORE_TOOLS  # no LLM configured: no generate_sql
    find = by_name["find_tables"].input_schema
    assert find["required"] == ["question"]
    assert find["properties"]["top_databases"]["maximum"] == 20
    run = by_name["run_sql"].input_schema
    assert set(run["required"]) == {"database", "sql"}
    assert run["properties"]["max_rows"]["minimum"] == 1
    assert by_name["run_sql"].annotations.read_only_hint is True
    assert all(tool.description for tool in tools)
    # each description as its docstring reads, without the source's indentation
    assert all(not line.startswith(" ") for t in tools for line in t.description.splitlines())
    index = json.loads(status.contents[0].text)
    assert index["ready"] is True and index["databases"] == 8 and index["build"]
    no_traceback(tmp_path / "stderr")


def test_each_tool_answers_on_the_sample(world: dict[str, Any], tmp_path: Path) -> None:
    async def session(client: Client) -> dict[str, Any]:
        return {
            "find": await client.call_tool(
                "find_tables", {"question": "How many singers do we have?", "top_databases": 2}
            ),
            "list": await client.call_tool("list_databases", {"pattern": "*singer*"}),
            "page": await client.call_tool("list_databases", {"limit": 3}),
            "describe": await client.call_tool(
                "describe_tables",
                {"database": "concert_singer", "tables": ["singer", "concert"]},
            ),
            "small": await client.call_tool(
                "describe_tables", {"database": "car_1", "max_tokens": 300}
            ),
            "run": await client.call_tool(
                "run_sql",
                {"database": "concert_singer", "sql": "SELECT Name FROM singer ORDER BY Age"},
            ),
            "capped": await client.call_tool(
                "run_sql",
                {"database": "car_1", "sql": "SELECT * FROM cars_data", "max_rows": 2},
            ),
        }

    answers = run_stdio(world, session, tmp_path / "stderr")
    assert not any(result.is_error for result in answers.values()), {
        name: text(result) for name, result in answers.items() if result.is_error
    }
    found = json.loads(text(answers["find"]))
    assert found["build"] and 0 <= found["confidence"] <= 1
    assert found["databases"][0]["db_id"] == "concert_singer"
    assert "singer" in found["databases"][0]["chosen_tables"]
    assert "timings" not in found and "question" not in found
    listed = json.loads(text(answers["list"]))
    assert [d["db_id"] for d in listed["databases"]] == ["concert_singer"]
    assert listed["databases"][0]["tables"] == 4
    page = json.loads(text(answers["page"]))
    assert page["total"] == 8 and len(page["databases"]) == 3 and page["next_offset"] == 3
    described = text(answers["describe"])
    assert "CREATE TABLE singer" in described and "CREATE TABLE concert" in described
    # the bridge that joins them comes along, with the join conditions
    assert "CREATE TABLE singer_in_concert" in described
    assert "singer_in_concert.Singer_ID = singer.Singer_ID" in described
    assert "example rows from singer" in described
    small = text(answers["small"])
    assert len(small) <= 300 * 4 + 400 and "cut to 300 tokens" in small
    rows = json.loads(text(answers["run"]))
    assert rows["columns"] == ["Name"] and rows["row_count"] == 6
    capped = json.loads(text(answers["capped"]))
    assert capped["row_count"] == 2 and capped["truncated"] is True
    no_traceback(tmp_path / "stderr")


def test_run_sql_refuses_the_hostile_corpus_and_the_files_stay_as_they_were(
    world: dict[str, Any], tmp_path: Path
) -> None:
    before = sha256(world["sample"])
    queries = {sql.format(tmp=tmp_path): kind for sql, kind in HOSTILE.items()}

    async def session(client: Client) -> dict[str, Any]:
        out = {}
        for sql in queries:
            out[sql] = await client.call_tool("run_sql", {"database": "concert_singer", "sql": sql})
        out["after"] = await client.call_tool(
            "run_sql", {"database": "concert_singer", "sql": "SELECT count(*) FROM singer"}
        )
        return out

    answers = run_stdio(world, session, tmp_path / "stderr")
    for sql, kind in queries.items():
        assert answers[sql].is_error, sql
        assert kind in text(answers[sql]), (sql, text(answers[sql]))
    assert json.loads(text(answers["after"]))["rows"] == [[6]]  # the server still answers
    assert sha256(world["sample"]) == before
    assert not list(tmp_path.glob("evil*")) and not (tmp_path / "copy.db").exists()
    no_traceback(tmp_path / "stderr")


def test_bad_arguments_are_tool_errors_the_model_can_read(
    world: dict[str, Any], tmp_path: Path
) -> None:
    calls = {
        "no_question": ("find_tables", {}),
        "blank": ("find_tables", {"question": "   "}),
        "too_many": ("find_tables", {"question": "singers", "top_databases": 500}),
        "wrong_type": ("run_sql", {"database": "concert_singer", "sql": 42}),
        "no_db": ("run_sql", {"database": "payroll", "sql": "SELECT 1"}),
        "near_db": ("describe_tables", {"database": "concert"}),
        "no_table": ("describe_tables", {"database": "pets_1", "tables": ["owners"]}),
        "bad_sql": ("run_sql", {"database": "pets_1", "sql": "SELEC nonsense"}),
        "no_column": ("run_sql", {"database": "pets_1", "sql": "SELECT wings FROM Pets"}),
        "no_tool": ("drop_everything", {}),
    }

    async def session(client: Client) -> dict[str, Any]:
        out = {name: await client.call_tool(tool, args) for name, (tool, args) in calls.items()}
        out["still"] = await client.call_tool("find_tables", {"question": "pets"})
        return out

    answers = run_stdio(world, session, tmp_path / "stderr")
    for name in calls:
        assert answers[name].is_error, name
    assert "question" in text(answers["no_question"])
    assert "empty" in text(answers["blank"])
    assert "less than or equal to 20" in text(answers["too_many"])
    assert "no database 'payroll'" in text(answers["no_db"])
    assert "did you mean concert_singer" in text(answers["near_db"])
    assert "has no table 'owners'" in text(answers["no_table"])
    assert "wings" in text(answers["no_column"])
    assert not answers["still"].is_error
    no_traceback(tmp_path / "stderr")


# -- HTTP --------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def http_server(world: dict[str, Any], tmp_path: Path) -> Iterator[dict[str, Any]]:
    """`schemarag mcp --transport http` with an API key, in its own process group."""
    port = free_port()
    stderr = (tmp_path / "stderr").open("w")
    proc = subprocess.Popen(
        [sys.executable, *server_args(world, "--transport", "http", "--port", str(port))],
        env={**world["env"], "SCHEMARAG_API_KEY": KEY},
        cwd=world["root"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(url, timeout=1)
            break
        except httpx.TransportError:
            assert proc.poll() is None, (tmp_path / "stderr").read_text()
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.2)
    try:
        yield {"url": url, "proc": proc, "stderr": tmp_path / "stderr"}
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        stderr.close()


def http_session(url: str, key: str, session: Callable[[Client], Awaitable[Any]]) -> Any:
    async def go() -> Any:
        headers = {"Authorization": f"Bearer {key}"}
        transport = streamable_http_client(url, http_client=create_mcp_http_client(headers))
        async with Client(transport) as client:
            return await session(client)

    return anyio.run(go)


def test_http_needs_the_api_key_and_answers_with_it(http_server: dict[str, Any]) -> None:
    url = http_server["url"]
    hello = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    bare = httpx.post(url, json=hello, timeout=5)
    assert bare.status_code == 401 and bare.json()["error"]["code"] == "unauthorized"
    wrong = httpx.post(url, json=hello, headers={"Authorization": "Bearer nope"}, timeout=5)
    assert wrong.status_code == 401

    async def session(client: Client) -> Any:
        tools = (await client.list_tools()).tools
        found = await client.call_tool(
            "find_tables", {"question": "Which dogs have which breeds and owners?"}
        )
        rows = await client.call_tool(
            "run_sql", {"database": "dog_kennels", "sql": "SELECT count(*) FROM Dogs"}
        )
        refused = await client.call_tool(
            "run_sql", {"database": "dog_kennels", "sql": "DROP TABLE Dogs"}
        )
        return tools, found, rows, refused

    tools, found, rows, refused = http_session(url, KEY, session)
    assert {tool.name for tool in tools} == CORE_TOOLS
    assert json.loads(text(found))["databases"][0]["db_id"] == "dog_kennels"
    assert json.loads(text(rows))["rows"] == [[15]]
    assert refused.is_error and "refused" in text(refused)
    no_traceback(http_server["stderr"])


def test_http_server_leaves_no_process_behind(http_server: dict[str, Any]) -> None:
    """SIGTERM: exit 143 and every process of the group gone (the SQL workers included);
    SIGKILL of the server is covered by the workers' parent watch (tests/sql)."""

    async def session(client: Client) -> Any:
        return await client.call_tool(
            "run_sql", {"database": "pets_1", "sql": "SELECT count(*) FROM Pets"}
        )

    assert not http_session(http_server["url"], KEY, session).is_error
    proc = http_server["proc"]
    assert len(group_members(proc.pid)) >= 1
    os.kill(proc.pid, signal.SIGTERM)
    assert proc.wait(timeout=30) == 143
    wait_until_gone(proc.pid, 10)
    log = http_server["stderr"].read_text()
    assert "Traceback" not in log and "terminated (SIGTERM)" in log


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL])
def test_stdio_server_stopped_mid_query_leaves_no_process_behind(
    world: dict[str, Any], tmp_path: Path, signum: signal.Signals
) -> None:
    """Stopped while a never-ending query runs in its SQL worker and the client still holds
    stdin open: SIGTERM ends it with 143 and one line, SIGKILL ends it at once; either way no
    process of its group is left (the worker follows its parent)."""
    stderr = tmp_path / "stderr"
    with stderr.open("w") as errlog:
        proc = subprocess.Popen(
            [sys.executable, *server_args(world)[:-2], "--timeout", "60"],
            env=world["env"],
            cwd=world["root"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errlog,
            start_new_session=True,
        )
    assert proc.stdin is not None and proc.stdout is not None

    def send(message: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())
        proc.stdin.flush()

    client = {"name": "test", "version": "0"}
    params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": client}
    send({"id": 1, "method": "initialize", "params": params})
    assert json.loads(proc.stdout.readline())["id"] == 1
    send({"method": "notifications/initialized"})
    call = {"name": "run_sql", "arguments": {"database": "pets_1", "sql": NEVER_ENDING_CTE}}
    send({"id": 2, "method": "tools/call", "params": call})
    deadline = time.monotonic() + 30
    while len(group_members(proc.pid)) < 2:  # the SQL worker has started
        assert time.monotonic() < deadline, "no SQL worker started"
        time.sleep(0.1)
    os.kill(proc.pid, signum)
    assert proc.wait(timeout=20) == (143 if signum == signal.SIGTERM else -signal.SIGKILL)
    wait_until_gone(proc.pid, 10)
    if signum == signal.SIGTERM:
        log = stderr.read_text()
        assert log.rstrip().endswith("schemarag: terminated (SIGTERM)"), log
        assert "Traceback" not in log


def test_a_public_address_without_a_key_is_refused(world: dict[str, Any]) -> None:
    done = subprocess.run(
        [sys.executable, *server_args(world, "--transport", "http", "--host", "0.0.0.0")],
        env=world["env"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "schemarag: error: refusing to listen on 0.0.0.0 without an API key: set "
        "SCHEMARAG_API_KEY, or listen on 127.0.0.1"
    ]


def test_mcp_help_loads_neither_the_sdk_nor_any_heavy_library() -> None:
    from tests.cli.test_startup import LIBRARIES, loaded_by, run_cli

    assert loaded_by(run_cli(["mcp", "--help"]), ("mcp", *LIBRARIES)) == []


def test_generate_sql_is_offered_when_an_llm_is_configured(
    world: dict[str, Any], tmp_path: Path
) -> None:
    """A scripted model that always answers the same query stands in for the LLM."""
    llm = {
        **world,
        "env": {**world["env"], "SCHEMARAG_LLM": "scripted:SELECT count(*) FROM singer"},
    }

    async def session(client: Client) -> Any:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        given = await client.call_tool(
            "generate_sql",
            {"question": "How many singers are there?", "database": "concert_singer"},
        )
        retrieved = await client.call_tool(
            "generate_sql", {"question": "How many singers are there?"}
        )
        unknown = await client.call_tool(
            "generate_sql", {"question": "How many singers?", "database": "nope"}
        )
        return tools, given, retrieved, unknown

    tools, given, retrieved, unknown = run_stdio(llm, session, tmp_path / "stderr")
    assert set(tools) == {*CORE_TOOLS, "generate_sql"}
    assert tools["generate_sql"].input_schema["required"] == ["question"]
    answer = json.loads(text(given))
    assert answer["db_id"] == "concert_singer" and "count(*)" in answer["sql"].lower()
    assert answer["build"]
    assert json.loads(text(retrieved))["db_id"] == "concert_singer"
    assert unknown.is_error and "no database 'nope'" in text(unknown)
    no_traceback(tmp_path / "stderr")


def test_an_empty_store_is_said_at_once_and_no_source_means_two_tools(
    world: dict[str, Any], tmp_path: Path
) -> None:
    (tmp_path / "empty").mkdir()
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "schemarag", "mcp", "--store", str(tmp_path / "empty")],
        env=world["env"],
        cwd=str(world["root"]),
    )

    async def go() -> Any:
        with (tmp_path / "stderr").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                tools = (await client.list_tools()).tools
                started = time.monotonic()
                found = await client.call_tool("find_tables", {"question": "singers"})
                return tools, found, time.monotonic() - started

    tools, found, waited = anyio.run(go)
    assert {tool.name for tool in tools} == {"find_tables", "list_databases", "check_sql"}
    assert found.is_error and "holds no knowledge base yet" in text(found)
    assert "schemarag index build" in text(found)
    assert waited < 10
    no_traceback(tmp_path / "stderr")


def test_a_retriever_error_is_one_line_from_the_error_table() -> None:
    """A user's `RetrieverError` is said as the CLI and HTTP say it, from `schemarag.errors`;
    an unexpected failure names the tool and the exception."""
    from mcp.server.mcpserver.exceptions import ToolError

    from retriever import RetrieverError, StoreNotReadyError
    from schemarag.mcp.server import _call

    def fails(exc: Exception) -> Callable[[], None]:
        def work() -> None:
            raise exc

        return work

    with pytest.raises(ToolError) as caught:
        _call("find_tables", fails(RetrieverError("the question is empty")))
    assert str(caught.value) == "the question is empty"
    with pytest.raises(ToolError) as caught:
        _call("find_tables", fails(StoreNotReadyError("/s: no built knowledge base here")))
    assert str(caught.value) == "/s: no built knowledge base here"
    with pytest.raises(ToolError) as caught:
        _call("find_tables", fails(ZeroDivisionError("boom")))
    assert str(caught.value) == "find_tables failed: ZeroDivisionError: boom"
