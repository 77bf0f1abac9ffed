"""A transcript of the MCP SDK's client talking to `schemarag mcp` over stdio on a warehouse: a
BigQuery `COLUMN_FIELD_PATHS` export and a Snowflake `COLUMNS` export (tests/fixtures/warehouse):
find_tables -> describe_tables (real names, nested fields) -> check_sql catching a wrong field
-> check_sql accepting the fixed query (the README's).

    .venv/bin/python examples/mcp_warehouse_transcript.py [--store .schemarag/warehouse-store]

The store is built from the two exports first when it does not exist; the server is then
started with `--store` alone: the store remembers the sources it was built from.
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
EXPORTS = REPO / "tests" / "fixtures" / "warehouse"
SOURCES = [f"infoschema:{EXPORTS / 'bigquery'}", f"infoschema:{EXPORTS / 'snowflake'}"]
QUESTION = "Which products brought the most revenue in the sessions of January 2024?"
WRONG = (
    "SELECT v2ProductName, SUM(productRevenue) AS revenue\n"
    "FROM `acme-retail-prod.web_analytics.ga_sessions_*`\n"
    "WHERE _TABLE_SUFFIX BETWEEN '20240101' AND '20240131'\n"
    "GROUP BY 1 ORDER BY revenue DESC LIMIT 10"
)
FIXED = (
    "SELECT product.v2ProductName, SUM(product.productRevenue) / 1e6 AS revenue\n"
    "FROM `acme-retail-prod.web_analytics.ga_sessions_*`,\n"
    "  UNNEST(hits) AS hits, UNNEST(hits.product) AS product\n"
    "WHERE _TABLE_SUFFIX BETWEEN '20240101' AND '20240131'\n"
    "GROUP BY 1 ORDER BY revenue DESC LIMIT 10"
)


def text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def show(title: str, text: str, limit: int = 1600) -> None:
    print(f"--- {title}")
    print(text if len(text) <= limit else text[:limit] + f"\n[... {len(text) - limit} more]")


async def talk(store: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "schemarag", "mcp", "--store", str(store)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    with open(os.devnull, "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            show("instructions (the dialects)", "\n".join(client.instructions.splitlines()[1:]))
            show("question", QUESTION)
            found = await client.call_tool("find_tables", {"question": QUESTION})
            show("find_tables", text(found), 900)
            best = json.loads(text(found))["databases"][0]
            described = await client.call_tool(
                "describe_tables",
                {"database": best["db_id"], "tables": best["chosen_tables"][:1]},
            )
            show("describe_tables", text(described), 2600)
            for title, sql in (("check_sql (wrong)", WRONG), ("check_sql (fixed)", FIXED)):
                show(title, sql)
                checked = await client.call_tool(
                    "check_sql", {"database": best["db_id"], "sql": sql}
                )
                show("answer", text(checked))
            ran = await client.call_tool("run_sql", {"database": best["db_id"], "sql": FIXED})
            show(f"run_sql (isError={ran.is_error})", text(ran))
            sf = await client.call_tool(
                "describe_tables", {"database": "SHOP_DB", "tables": ["SHOP_DB.SALES.ORDERS"]}
            )
            show("describe_tables SHOP_DB.SALES.ORDERS", text(sf))
            query = 'SELECT STATUS, COUNT(*) FROM SHOP_DB.SALES.ORDERS GROUP BY "STATUS"'
            show("check_sql (Snowflake)", query)
            checked = await client.call_tool("check_sql", {"database": "SHOP_DB", "sql": query})
            show("answer", text(checked))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", type=Path, default=REPO / ".schemarag/warehouse-store")
    args = parser.parse_args()
    if not (args.store / "CURRENT").exists():
        build = [sys.executable, "-m", "schemarag", "index", "build", *SOURCES]
        subprocess.run([*build, "--store", str(args.store)], check=True, stdout=sys.stderr)
    anyio.run(talk, args.store)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
