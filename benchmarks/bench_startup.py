"""Start-up of CLI commands: wall and CPU seconds of a whole process, beside `python -c pass`.

The commands are the README's first examples after `make demo` (the demo store must exist).
Each command runs `--runs` times, interleaved (A B C ... A B C ...) so that load from other
processes falls on all alike; the report gives the median wall time and the median CPU time
(user + system, which other processes disturb less). `--old DIR` runs the same commands from
another checkout (a git worktree of an earlier commit) in the same rounds, for a before/after.

    .venv/bin/python benchmarks/bench_startup.py [--runs 5] [--old DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEMO_STORE = REPO / ".schemarag/demo-store"
SINGER_DB = "schemarag/samples/spider/database/concert_singer/concert_singer.sqlite"
COMMANDS: dict[str, list[str]] = {
    "--version": ["--version"],
    "--help": ["--help"],
    "sql run": [
        "sql",
        "run",
        "--db",
        SINGER_DB,
        "SELECT Name FROM singer WHERE Country = 'France'",
    ],
    "catalog show": [
        "catalog",
        "show",
        "spider:schemarag/samples/spider",
        "--db",
        "concert_singer",
    ],
    "retrieve": ["retrieve", "Which singers are from France?", "--store", str(DEMO_STORE)],
}


def timed(argv: list[str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds of running `argv` in `cwd` to completion (it must exit 0)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def commit(folder: Path) -> str:
    out = subprocess.run(
        ["git", "-C", str(folder), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return out.stdout.strip() or "unknown"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--old", type=Path, help="another checkout to time beside this one")
    parser.add_argument("--json", type=Path, help="write the result here")
    args = parser.parse_args()
    if not DEMO_STORE.is_dir():
        print("bench_startup: no .schemarag/demo-store; run `make demo` first", file=sys.stderr)
        return 2
    load = os.getloadavg()[0]
    checkouts = {"new": REPO} | ({"old": args.old.resolve()} if args.old else {})
    # `python -m` puts the working folder first on sys.path: each checkout runs from its own
    cases = [("python -c pass", "-", [sys.executable, "-c", "pass"], REPO)]
    for label, folder in checkouts.items():
        for name, argv in COMMANDS.items():
            cases.append((name, label, [sys.executable, "-m", "schemarag", *argv], folder))
    for _, _, argv, cwd in cases:  # warm the page cache and the provider cache
        timed(argv, cwd)
    samples: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for _ in range(args.runs):
        for name, label, argv, cwd in cases:
            samples.setdefault((name, label), []).append(timed(argv, cwd))
    rows = [
        {
            "command": name,
            "checkout": label if label == "-" else f"{label} ({commit(checkouts[label])})",
            "wall_s": round(statistics.median(w for w, _ in runs), 3),
            "cpu_s": round(statistics.median(c for _, c in runs), 3),
            "wall_range_s": [round(min(w for w, _ in runs), 3), round(max(w for w, _ in runs), 3)],
        }
        for (name, label), runs in samples.items()
    ]
    print(f"{'command':<16} {'checkout':<16} {'wall s':>7} {'cpu s':>7}  range")
    for row in rows:
        low, high = row["wall_range_s"]
        print(
            f"{row['command']:<16} {row['checkout']:<16} {row['wall_s']:>7.2f} "
            f"{row['cpu_s']:>7.2f}  {low:.2f}-{high:.2f}"
        )
    if args.json:
        result = {
            "benchmark": "startup",
            "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
            "commit": commit(REPO),
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": f"{os.cpu_count()} cores, {platform.machine()}, Python "
            f"{platform.python_version()}, load {load:.1f} at the start",
            "runs": args.runs,
            "rows": rows,
        }
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
