"""Time from spawning `schemarag mcp` (stdio) to its first answers, A/B against another checkout.

With `--serve`, each run also spawns `schemarag serve` and times /readyz and a first retrieve.

What an agent's user waits for in every new session: the seconds from the spawn of the real
command, spoken to by the MCP SDK's client, to the first `list_databases` answer, to the first
`find_tables` answer (the index), then to a `describe_tables` of its first database (the
catalog). Each run spawns a fresh process; with
`--baseline DIR` (a checkout of another commit, e.g. `git worktree add /tmp/before REV`) the
two are interleaved run by run, so a noisy shared machine weighs on both alike; medians are
reported.

    flock /tmp/heavy.lock .venv/bin/python benchmarks/bench_mcp_startup.py --store STORE \\
        [--source spider:../shared/data/spider] [--runs 5] [--baseline /tmp/before] \\
        [--label 166] [--json benchmarks/results/mcp-startup.json]

The result file keeps one entry per `--label` (the estate's size), so runs at 166 and 1,000
databases accumulate in it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


async def until_loaded(client: Any, tool: str, arguments: dict[str, Any]) -> Any:
    """The tool's answer, asked again while it says the index is still loading (a server
    bounds each wait, at 30 s by default), for at most `LOADING_S`."""
    deadline = time.perf_counter() + LOADING_S
    while True:
        result = await client.call_tool(tool, arguments)
        text = "".join(getattr(block, "text", "") for block in result.content)
        if not (result.is_error and "still loading" in text) or time.perf_counter() > deadline:
            return result


#: the longest a run waits for an index to load
LOADING_S = 600.0


def first_answers(repo: Path, store: str, sources: list[str]) -> dict[str, float]:
    """Seconds from the spawn to the first list_databases and find_tables answers."""
    import anyio
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    args = ["-m", "schemarag", "mcp", "--store", store]
    for source in sources:
        args += ["--source", source]
    params = StdioServerParameters(
        command=sys.executable,
        args=args,
        env={**os.environ, "PYTHONPATH": str(repo)},
        cwd=str(repo),
    )

    async def once() -> dict[str, float]:
        started = time.perf_counter()
        with open(os.devnull, "w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                listed = await until_loaded(client, "list_databases", {"limit": 5})
                listed_s = time.perf_counter() - started
                found = await until_loaded(
                    client, "find_tables", {"question": "how many singers are there"}
                )
                found_s = time.perf_counter() - started
                assert not listed.is_error and not found.is_error, (listed, found)
                answer = json.loads("".join(getattr(b, "text", "") for b in found.content))
                first = (answer.get("databases") or answer.get("candidates"))[0]["db_id"]
                described = await client.call_tool(
                    "describe_tables", {"database": first, "max_tokens": 500}
                )
                assert not described.is_error, described
                return {
                    "list_databases": listed_s,
                    "find_tables": found_s,
                    "describe_tables": time.perf_counter() - started,
                }

    return anyio.run(once)


def serve_answers(repo: Path, store: str, sources: list[str]) -> dict[str, float]:
    """Seconds from the spawn of `schemarag serve` to /readyz answering 200 and to the first
    /v1/retrieve answer."""
    import socket

    import httpx

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    args = [sys.executable, "-m", "schemarag", "serve", "--store", store, "--port", str(port)]
    for source in sources:
        args += ["--source", source]
    base = f"http://127.0.0.1:{port}"
    started = time.perf_counter()
    server = subprocess.Popen(
        args,
        env={**os.environ, "PYTHONPATH": str(repo)},
        cwd=str(repo),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        ready_s = None
        while time.perf_counter() - started < LOADING_S:
            if server.poll() is not None:
                raise RuntimeError(f"schemarag serve exited with {server.returncode}")
            try:
                if httpx.get(f"{base}/readyz", timeout=1.0).status_code == 200:
                    ready_s = time.perf_counter() - started
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.02)
        if ready_s is None:
            raise RuntimeError("schemarag serve was not ready in time")
        answer = httpx.post(
            f"{base}/v1/retrieve", json={"question": "how many singers are there"}, timeout=60
        )
        answer.raise_for_status()
        return {"serve_ready": ready_s, "serve_retrieve": time.perf_counter() - started}
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", required=True)
    parser.add_argument("--source", action="append", default=[])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline", type=Path, help="a checkout of the commit to compare")
    parser.add_argument("--label", default="", help="the estate, e.g. 166 or 1000")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--serve", action="store_true", help="also time `schemarag serve` to /readyz and a retrieve"
    )
    args = parser.parse_args()

    repos = {"this": REPO}
    if args.baseline:
        repos = {"baseline": args.baseline.resolve(), "this": REPO}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in repos}
    for run in range(args.runs):
        for name, repo in repos.items():
            seconds = first_answers(repo, args.store, args.source)
            if args.serve:
                seconds.update(serve_answers(repo, args.store, args.source))
            runs[name].append(seconds)
            print(
                f"run {run + 1} {name}: {json.dumps({k: round(v, 2) for k, v in seconds.items()})}"
            )
    commits = {
        name: subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        for name, repo in repos.items()
    }
    entry: dict[str, Any] = {
        "store": args.store,
        "sources": args.source,
        "runs": args.runs,
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
    }
    for name, values in runs.items():
        entry[name] = {
            "commit": commits[name],
            **{
                f"{tool}_median_s": round(statistics.median(v[tool] for v in values), 2)
                for tool in ("list_databases", "find_tables", "describe_tables")
            },
            "find_tables_s": [round(v["find_tables"], 2) for v in values],
        }
        if args.serve:
            for key in ("serve_ready", "serve_retrieve"):
                entry[name][f"{key}_median_s"] = round(statistics.median(v[key] for v in values), 2)
    print(json.dumps(entry, indent=1))
    if args.json:
        report: dict[str, Any] = {}
        if args.json.exists():
            report = json.loads(args.json.read_text())
        report.update(
            {
                "benchmark": "mcp-startup",
                "machine": f"{os.cpu_count()} cores, {platform.machine()}, Python "
                f"{platform.python_version()}, shared",
            }
        )
        label = args.label or str(len(report.get("estates", {})))
        report.setdefault("estates", {})[label] = entry
        report["commit"], report["date"] = entry["this"]["commit"], entry["date"]
        report.setdefault("commands", {})[label] = entry["command"]
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
