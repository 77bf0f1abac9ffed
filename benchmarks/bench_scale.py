"""Scale of the schema layer: catalog + graph + traversals for 1,000 and 10,000 databases.

Spider's 166 schemas (or the bundled sample when ../shared is absent) are replicated under new
ids into one tables.json per size; each size runs in a fresh subprocess so that its peak memory
(max RSS) is its own. Reports seconds per stage, peak RSS, and per-database cost to show growth.

    .venv/bin/python benchmarks/bench_scale.py [--sizes 1000 10000] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SPIDER = REPO.parent / "shared/data/spider/tables.json"
SAMPLE = REPO / "schemarag/samples/spider/tables.json"


def replicate(source: Path, size: int, out: Path) -> None:
    base = json.loads(source.read_text())
    entries = []
    for i in range(size):
        entry = dict(base[i % len(base)])
        entry["db_id"] = f"{entry['db_id']}__{i}"
        entries.append(entry)
    out.write_text(json.dumps(entries))


def measure(tables_json: Path) -> dict[str, float]:
    from schemagraph import build_graph, enumerate_traversals, graph_stats, load_spider

    t0 = time.perf_counter()
    catalog = load_spider(tables_json)
    t1 = time.perf_counter()
    graph = build_graph(catalog)
    t2 = time.perf_counter()
    traversals = enumerate_traversals(graph)
    t3 = time.perf_counter()
    stats = graph_stats(graph)
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "databases": stats.databases,
        "tables": stats.tables,
        "foreign_key_edges": stats.foreign_key_edges,
        "traversals": len(traversals),
        "load_s": round(t1 - t0, 3),
        "graph_s": round(t2 - t1, 3),
        "traversals_s": round(t3 - t2, 3),
        "total_s": round(t3 - t0, 3),
        "peak_rss_mb": round(peak_kb / 1024, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child)))
        return 0
    source = SPIDER if SPIDER.exists() else SAMPLE
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            file = Path(tmp) / f"tables_{size}.json"
            replicate(source, size, file)
            out = subprocess.run(
                [sys.executable, __file__, "--child", str(file)],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            row = json.loads(out)
            row["ms_per_database"] = round(1000 * row["total_s"] / size, 3)
            rows.append(row)
    print(f"source: {source} ({platform.machine()}, Python {platform.python_version()})")
    header = (
        "databases",
        "tables",
        "traversals",
        "load_s",
        "graph_s",
        "traversals_s",
        "total_s",
        "ms_per_database",
        "peak_rss_mb",
    )
    print(" | ".join(header))
    for row in rows:
        print(" | ".join(str(row[h]) for h in header))
    if args.json:
        args.json.write_text(json.dumps({"source": str(source), "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
