"""What an agent pays to use `schemarag mcp`: tokens of the tool answers, tool latency, start-up.

On `--questions` Spider dev questions (a seeded sample), in process, over the `Estate` the MCP
tools call (the same text the tools send, `schemarag.mcp.server.as_text`):

- tokens (`generator.text.approx_tokens`, as prompts are counted) of `find_tables` and of
  `describe_tables` on the tables it chose in its first database (with the question), against
  the gold database's whole schema dumped as CREATE TABLE text, with and without the same
  3 sample rows per table;
- latency of each tool per call (p50, p99): find_tables, describe_tables, run_sql (the gold SQL
  on the gold database), list_databases;
- start-up: from opening the store to the first find_tables answer, in process; and with
  `--process`, the real command (`schemarag mcp` over stdio, spoken to by the SDK client) from
  the spawn to the first answer.

    flock /tmp/heavy.lock .venv/bin/python benchmarks/bench_mcp.py --store STORE \\
        --spider ../shared/data/spider [--questions 100] [--process] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shlex
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def summary(values: list[float], digits: int = 1) -> dict[str, float]:
    return {
        "median": round(statistics.median(values), digits),
        "p90": round(percentile(values, 0.9), digits),
        "p99": round(percentile(values, 0.99), digits),
        "max": round(max(values), digits),
    }


#: the report's names of the token and latency rows, by this script's names
TOKEN_ROWS = {
    "find_tables": "find_tables",
    "find_tables, no examples": "find_tables without its 3 examples",
    "describe_tables": "describe_tables (chosen tables, question)",
    "find+describe": "find_tables + describe_tables",
    "whole schema, 3 rows": "gold database's whole schema, 3 sample rows",
    "whole schema, no rows": "gold database's whole schema, no rows",
}
LATENCY_ROWS = {
    "find_tables": "find_tables",
    "describe_tables": "describe_tables",
    "run_sql": "run_sql (gold SQL)",
    "list_databases": "list_databases (pattern)",
}


def merge_result(previous: dict[str, Any] | None, report: dict[str, Any]) -> dict[str, Any]:
    """The report's MCP result file with this run's figures under its number of databases
    (other sizes kept from `previous`)."""
    size = str(report["databases"])
    result = previous or {"benchmark": "mcp", "commands": {}, "tokens": [], "latency_ms": []}
    result.update(
        machine=f"{os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}",
        commit=subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
        ).stdout.strip(),
        date=datetime.now(UTC).date().isoformat(),
        questions=f"{report['questions']} Spider dev questions (seed {report['seed']})",
    )
    result["commands"][size] = shlex.join(["benchmarks/bench_mcp.py", *sys.argv[1:]])

    def put(rows: list[dict[str, Any]], key: str, name: str, value: list[float]) -> None:
        row = next((r for r in rows if r[key] == name), None)
        if row is None:
            rows.append(row := {key: name})
        row[size] = value

    for mine, name in TOKEN_ROWS.items():
        figures = report["tokens"][mine]
        put(result["tokens"], "answer", name, [figures["median"], figures["p90"]])
    for mine, name in LATENCY_ROWS.items():
        figures = report["latency_ms"][mine]
        put(result["latency_ms"], "tool", name, [figures["p50"], figures["p99"]])
    startup = result.setdefault("startup_s", {})
    startup.setdefault("in process, to the first find_tables", {})[size] = report[
        "first_answer_s_in_process"
    ]
    if report.get("first_answer_s_process"):
        runs = report["first_answer_s_process"]
        name = f"schemarag mcp over stdio, to the first answer ({len(runs)} runs)"
        startup.setdefault(name, {})[size] = [min(runs), max(runs)]
    result.setdefault("peak_rss_mb", {})[size] = report["peak_rss_mb"]
    return result


def open_estate(
    store: str, spider: str, extra: list[str] | None = None
) -> tuple[Any, Any, float, float]:
    """The estate over `store` with Spider's catalog, started; the seconds to the first
    find_tables answer (store opened, model and index loaded) and to load the catalog."""
    from schemarag.api import ServedIndex
    from schemarag.cli.common import load
    from schemarag.cli.serve import store_source
    from schemarag.mcp.estate import Estate
    from schemarag.settings import Settings

    settings = Settings.from_env()
    args = argparse.Namespace(
        store=store, collection="schemarag", embedder=None, examples=3, abstain_below=0.0
    )
    started = time.perf_counter()
    source = store_source(args, settings)
    served = ServedIndex(source)
    served.start()
    estate = Estate(served, None)
    estate.find_tables("how many rows are there")
    first = time.perf_counter() - started
    started = time.perf_counter()
    estate.catalog = load([f"spider:{spider}", *(extra or [])])
    catalog_s = time.perf_counter() - started
    return estate, source, first, catalog_s


def process_startup(store: str, spider: str, extra: list[str], runs: int) -> list[float]:
    """Seconds from spawning `schemarag mcp` (stdio) to its first find_tables answer."""
    import anyio
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "schemarag", "mcp", "--store", store, "--source", f"spider:{spider}"]
        + [arg for source in extra for arg in ("--source", source)],
        env=env,
    )

    async def once() -> float:
        started = time.perf_counter()
        with open(os.devnull, "w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                result = await client.call_tool("find_tables", {"question": "how many singers"})
                assert not result.is_error, result
                return time.perf_counter() - started

    return [anyio.run(once) for _ in range(runs)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", required=True)
    parser.add_argument("--spider", required=True)
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--source", action="append", default=[], help="more sources the index was built from"
    )
    parser.add_argument("--process", type=int, default=0, help="process start-up runs")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--result",
        type=Path,
        default=None,
        help="merge this run's figures, under its number of databases, into a result file for "
        "benchmarks/render_report.py (e.g. benchmarks/results/mcp.json)",
    )
    args = parser.parse_args()

    from generator.prompt import PromptConfig, prompt_sample
    from generator.text import approx_tokens
    from schemagraph import create_table_text
    from schemarag.mcp.estate import EstateError
    from schemarag.mcp.server import as_text

    estate, source, first_s, catalog_s = open_estate(args.store, args.spider, args.source)
    loaded = estate.served.current
    dev = json.loads((Path(args.spider) / "dev.json").read_text())
    cases = random.Random(args.seed).sample(dev, args.questions)
    tokens: dict[str, list[float]] = {
        "find_tables": [],
        "find_tables, no examples": [],
        "describe_tables": [],
        "find+describe": [],
        "whole schema, 3 rows": [],
        "whole schema, no rows": [],
    }
    latency: dict[str, list[float]] = {
        "find_tables": [],
        "describe_tables": [],
        "run_sql": [],
        "list_databases": [],
    }
    top1 = 0
    errors = 0
    for case in cases:
        question, gold = case["question"], case["db_id"]
        started = time.perf_counter()
        found = as_text(estate.find_tables(question))
        latency["find_tables"].append((time.perf_counter() - started) * 1000)
        answer = json.loads(found)
        best = answer["databases"][0]
        top1 += best["db_id"] == gold
        started = time.perf_counter()
        described = estate.describe_tables(best["db_id"], best["chosen_tables"], question)
        latency["describe_tables"].append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        try:
            estate.run_sql(gold, case["query"])
        except EstateError:
            errors += 1
        latency["run_sql"].append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        as_text(estate.list_databases(gold[:4]))
        latency["list_databases"].append((time.perf_counter() - started) * 1000)
        db = estate.catalog.database(gold)
        sample = prompt_sample(db, PromptConfig())
        tokens["find_tables"].append(approx_tokens(found))
        answer.pop("examples", None)
        tokens["find_tables, no examples"].append(approx_tokens(as_text(answer)))
        tokens["describe_tables"].append(approx_tokens(described))
        tokens["find+describe"].append(approx_tokens(found) + approx_tokens(described))
        tokens["whole schema, 3 rows"].append(approx_tokens(create_table_text(db, None, sample)))
        tokens["whole schema, no rows"].append(approx_tokens(create_table_text(db)))
    report = {
        "store": args.store,
        "build": loaded.build_id if loaded else None,
        "databases": len({e.db_id for e in loaded.retriever.entries}) if loaded else 0,
        "tables": len(loaded.retriever.entries) if loaded else 0,
        "embedder": loaded.manifest.embedder if loaded and loaded.manifest else None,
        "questions": args.questions,
        "seed": args.seed,
        "top1_database": round(top1 / len(cases), 3),
        "gold_sql_errors": errors,
        "tokens": {name: summary(values, 0) for name, values in tokens.items()},
        "latency_ms": {
            name: {
                "p50": round(percentile(values, 0.5), 1),
                "p99": round(percentile(values, 0.99), 1),
            }
            for name, values in latency.items()
        },
        "first_answer_s_in_process": round(first_s, 2),
        "catalog_load_s": round(catalog_s, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }
    estate.served.stop()
    source.close()
    if args.process:
        runs = process_startup(args.store, args.spider, args.source, args.process)
        report["first_answer_s_process"] = [round(s, 2) for s in runs]
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    if args.result:
        previous = json.loads(args.result.read_text()) if args.result.exists() else None
        args.result.write_text(json.dumps(merge_result(previous, report), indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
