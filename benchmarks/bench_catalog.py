"""`schemarag catalog show` of a whole estate: wall and CPU seconds of the process, peak memory,
and what it loaded (databases, tables, columns, problems: its summary line).

The default estate is Spider 2.0-lite's, as each engine exports it
(`infoschema:.../bigquery infoschema:.../snowflake ddl[sqlite]:.../sqlite`). Each run is a new
process, its output written to a file (as a user would redirect it); the report gives the
median wall time and the median CPU time (user + system, which other processes disturb less),
with their ranges. `--old DIR` runs the same command from another checkout (a git worktree of
an earlier commit) in the same rounds, interleaved, for a before/after.

    .venv/bin/python benchmarks/bench_catalog.py [--runs 5] [--old DIR] [--result OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ESTATE = REPO.parent / "shared/data/spider2-lite/infoschema"


def default_sources() -> list[str]:
    return [
        f"infoschema:{ESTATE / 'bigquery'}",
        f"infoschema:{ESTATE / 'snowflake'}",
        f"ddl[sqlite]:{ESTATE / 'sqlite'}",
    ]


def run_once(argv: list[str], cwd: Path) -> tuple[float, float, float, str]:
    """Wall and CPU seconds, peak resident MB and the last line printed, of one run."""
    with tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        process = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"bench_catalog: {' '.join(argv)} failed in {cwd}")
        out.seek(max(0, out.seek(0, os.SEEK_END) - 4096))
        last = out.read().decode("utf-8", "replace").strip().splitlines()[-1]
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, last


def commit(folder: Path) -> str:
    out = subprocess.run(
        ["git", "-C", str(folder), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return out.stdout.strip() or "unknown"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--old", type=Path, help="another checkout to time beside this one")
    parser.add_argument("--result", type=Path, help="write the result here")
    parser.add_argument("sources", nargs="*", help="the sources (default: Spider 2.0-lite's)")
    args = parser.parse_args()
    sources = args.sources or default_sources()
    if not args.sources and not ESTATE.is_dir():
        print(f"bench_catalog: {ESTATE} is absent; name the sources", file=sys.stderr)
        return 2
    checkouts = {"new": REPO} | ({"old": args.old.resolve()} if args.old else {})
    load = os.getloadavg()[0]
    # `python -m` puts the working folder first on sys.path: each checkout runs from its own
    argv = [sys.executable, "-m", "schemarag", "catalog", "show", *sources]
    runs: dict[str, list[tuple[float, float, float, str]]] = {name: [] for name in checkouts}
    for round_ in range(args.runs):
        for name, folder in checkouts.items():
            runs[name].append(run_once(argv, folder))
            wall, cpu, peak, _ = runs[name][-1]
            print(
                f"round {round_ + 1}: {name}: {wall:.2f} s wall, {cpu:.2f} s CPU, {peak:.0f} MB",
                file=sys.stderr,
            )
    rows = []
    for name, folder in checkouts.items():
        walls = [r[0] for r in runs[name]]
        cpus = [r[1] for r in runs[name]]
        rows.append(
            {
                "checkout": f"{name} ({commit(folder)})",
                "wall_s": round(statistics.median(walls), 2),
                "cpu_s": round(statistics.median(cpus), 2),
                "wall_range_s": [round(min(walls), 2), round(max(walls), 2)],
                "cpu_range_s": [round(min(cpus), 2), round(max(cpus), 2)],
                "peak_rss_mb": round(max(r[2] for r in runs[name])),
                "loaded": runs[name][-1][3],
            }
        )
    result = {
        "benchmark": "catalog-show",
        "command": "bench_catalog.py " + " ".join(sys.argv[1:]),
        "timed": "schemarag catalog show " + " ".join(sources) + " > FILE",
        "commit": commit(REPO),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": (
            f"{os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}, "
            f"load {load:.1f} at the start"
        ),
        "runs": args.runs,
        "rows": rows,
    }
    text = json.dumps(result, indent=2, ensure_ascii=False)
    print(text)
    if args.result:
        args.result.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
