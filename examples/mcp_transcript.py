"""A transcript of the MCP SDK's client talking to `schemarag mcp` over stdio on the bundled
sample: question -> find_tables -> describe_tables -> run_sql -> rows (the README's).

    .venv/bin/python examples/mcp_transcript.py [--store .schemarag/demo-store]

The store is built from the sample first when it does not exist (`make demo` builds the same).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

REPO = Path(__file__).resolve().parent.parent
QUESTION = "Which singers from France are older than 30?"


def text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def show(title: str, text: str, limit: int = 1600) -> None:
    print(f"--- {title}")
    print(text if len(text) <= limit else text[:limit] + f"\n[... {len(text) - limit} more]")


async def talk(store: Path) -> None:
    from schemarag.samples import SAMPLE_SOURCE

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "schemarag", "mcp", "--store", str(store), "--source", SAMPLE_SOURCE],
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    with open(os.devnull, "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            tools = (await client.list_tools()).tools
            show("tools", ", ".join(tool.name for tool in tools))
            show("question", QUESTION)
            found = await client.call_tool("find_tables", {"question": QUESTION})
            show("find_tables", text(found), 700)
            best = json.loads(text(found))["databases"][0]
            described = await client.call_tool(
                "describe_tables",
                {"database": best["db_id"], "tables": best["chosen_tables"], "question": QUESTION},
            )
            show("describe_tables", text(described))
            sql = "SELECT Name, Age FROM singer WHERE Country = 'France' AND Age > 30"
            show("run_sql", sql)
            rows = await client.call_tool("run_sql", {"database": best["db_id"], "sql": sql})
            show("rows", text(rows))
            refused = await client.call_tool(
                "run_sql", {"database": best["db_id"], "sql": "DROP TABLE singer"}
            )
            show(f"run_sql DROP TABLE singer (isError={refused.is_error})", text(refused))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", type=Path, default=REPO / ".schemarag/demo-store")
    args = parser.parse_args()
    if not (args.store / "CURRENT").exists():
        from schemarag.samples import SAMPLE_SOURCE

        subprocess.run(
            [
                sys.executable,
                "-m",
                "schemarag",
                "index",
                "build",
                SAMPLE_SOURCE,
                "--store",
                str(args.store),
            ],
            check=True,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
    anyio.run(talk, args.store)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
