"""Scale of a whole estate: build, store, memory, latency and recall at N databases.

For each N the pool is Spider's 166 databases (N = 166), or Spider's 166 + BIRD train's 69
(ids prefixed `bird_`, schema only) + N - 235 generated databases (`evaluation.estates`, seed 0,
default knobs: wide tables, abbreviated and prefixed names, date-sharded families, tenant and
staging copies, sampled rows). Spider dev's 1,034 questions are measured at every N, so recall
is comparable across N. Each step runs in a fresh process with the offline defaults (template
synthesis, rule feedback, MiniLM, embedded store), one after the other:

1. full build: `schemarag index build SOURCES --store S --report R` with a new, empty provider
   cache: wall time, peak RSS, the report's stages (synthesize with validation, embed the
   questions, load them into the store, embed and load the table documents), questions/s;
2. the store's size on disk;
3. recall: `schemarag bench recall --store S` on Spider dev (schemarag and both baselines):
   db_R@1, tab_R@5, all_tabs@5, all_tabs@10, in-process retrieval p50/p99, the process's peak RSS;
4. HTTP: `benchmarks/bench_api_load.py --store S --clients 16`: p50/p99, requests/s and the
   server's resident memory;
5. incremental: 1 % of the databases (the generated ones, Spider's at N = 166) get one column's
   type changed (a copy of tables.json, `database/` linked), and the build runs again into S
   with the same cache: wall time, peak RSS, traversals synthesized.

Results are merged into OUT/results.json (one entry per N, so sizes can run in separate
sessions); a Markdown table is printed, and `--plot` draws each figure against N.

    .venv/bin/python benchmarks/bench_estate.py --sizes 166 1000 [--out .schemarag/estate]
    .venv/bin/python benchmarks/bench_estate.py --table-only --plot estate_scale.png
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import time
from datetime import date
from pathlib import Path
from typing import Any

from evaluation.estates import EstateSpec, generate_estate

REPO = Path(__file__).resolve().parent.parent
SPIDER = REPO.parent / "shared/data/spider"
BIRD_TABLES = REPO.parent / "shared/data/bird/train_tables.json"
BIN = REPO / ".venv/bin"
PYTHON = BIN / "python"
BIRD_PREFIX = "bird_"
REAL = 166 + 69  # Spider + BIRD train


def run(cmd: list[str], log: Path, env: dict[str, str] | None = None) -> dict[str, float]:
    """Run `cmd` to completion (stdout and stderr into `log`); its wall seconds and peak RSS."""
    started = time.perf_counter()
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=REPO)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        tail = log.read_text().strip().splitlines()[-5:]
        raise SystemExit(f"{cmd[0]} failed ({log}):\n" + "\n".join(tail))
    return {"wall_s": round(wall, 1), "peak_rss_mb": round(usage.ru_maxrss / 1024)}


def prepare_pool(n: int, work: Path) -> tuple[list[Path], dict[str, Any]]:
    """The source folders (Spider layout) of the N-database pool, written once under `work`."""
    if n < 166:
        raise SystemExit(f"--sizes: the smallest pool is Spider's 166 databases, got {n}")
    folders = [SPIDER]
    summary: dict[str, Any] = {"spider": 166}
    if n == 166:
        return folders, summary
    if n < REAL:
        raise SystemExit(f"--sizes: above 166 the pool holds Spider and BIRD ({REAL}), got {n}")
    bird = work / "bird"
    if not (bird / "tables.json").exists():
        bird.mkdir(parents=True, exist_ok=True)
        entries = json.loads(BIRD_TABLES.read_text())
        for entry in entries:
            entry["db_id"] = BIRD_PREFIX + entry["db_id"]
        (bird / "tables.json").write_text(json.dumps(entries))
    folders.append(bird)
    summary["bird"] = 69
    if n > REAL:
        estate = work / f"estate-{n - REAL}"
        marker = estate / "summary.json"
        if not marker.exists():
            shutil.rmtree(estate, ignore_errors=True)
            written = generate_estate(EstateSpec(n - REAL, seed=0), estate)
            marker.write_text(json.dumps(written.as_dict()))
        folders.append(estate)
        summary["generated"] = json.loads(marker.read_text())
    return folders, summary


def changed_copy(folder: Path, out: Path, share: float = 0.01, seed: int = 0) -> list[str]:
    """A copy of `folder`'s tables.json at `out` in which `share` of the databases (at least one)
    have one non-key column's type changed; `out/database` links to the original files. Returns
    the changed databases."""
    entries = json.loads((folder / "tables.json").read_text())
    chosen = random.Random(seed).sample(range(len(entries)), max(1, round(share * len(entries))))
    changed = []
    for i in chosen:
        entry = entries[i]
        keys: set[int] = set()
        for key in entry["primary_keys"]:  # BIRD writes composite keys as lists
            keys.update(key if isinstance(key, list) else [key])
        for pair in entry["foreign_keys"]:
            keys.update(pair)
        free = [c for c in range(1, len(entry["column_types"])) if c not in keys]
        if not free:
            continue
        types = entry["column_types"]
        types[free[0]] = "number" if types[free[0]] == "text" else "text"
        changed.append(entry["db_id"])
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    (out / "tables.json").write_text(json.dumps(entries))
    if (folder / "database").exists():
        (out / "database").symlink_to((folder / "database").resolve())
    return changed


def disk_mb(path: Path) -> float:
    return round(sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20, 1)


def measure(n: int, work: Path, http_seconds: float) -> dict[str, Any]:
    folders, pool = prepare_pool(n, work)
    here = work / f"n{n}"
    shutil.rmtree(here, ignore_errors=True)
    here.mkdir(parents=True)
    store, cache = here / "store", here / "cache.sqlite"
    env = {**os.environ, "SCHEMARAG_CACHE": str(cache)}
    sources = [f"spider:{f}" for f in folders]
    result: dict[str, Any] = {"n": n, "pool": pool, "date": date.today().isoformat()}

    print(f"N={n}: full build", file=sys.stderr, flush=True)
    build_cmd = [str(BIN / "schemarag"), "index", "build", "--store", str(store)]
    result["build"] = run(
        [*build_cmd, *sources, "--report", str(here / "build.json")], here / "build.log", env
    )
    report = json.loads((here / "build.json").read_text())
    result["build"].update(
        databases=report["databases"],
        tables=report["tables"],
        traversals=report["traversals"],
        questions=report["questions"],
        stages_s={k: round(v, 1) for k, v in report["timings"].items()},
        questions_per_s=round(report["questions"] / max(report["seconds"], 1e-9), 1),
    )
    result["store_disk_mb"] = disk_mb(store)

    print(f"N={n}: recall", file=sys.stderr, flush=True)
    tables = [str(f / "tables.json") for f in folders]
    databases = [str(f / "database") for f in folders if (f / "database").exists()]
    recall_cmd = [
        str(BIN / "schemarag"),
        "bench",
        "recall",
        "--store",
        str(store),
        "--tables",
        *tables,
        "--questions",
        str(SPIDER / "dev.json"),
        "--databases",
        *databases,
        "--json",
        str(here / "recall.json"),
    ]
    result["recall_process"] = run(recall_cmd, here / "recall.log", env)
    recall = json.loads((here / "recall.json").read_text())
    keys = ("db_R@1", "tab_R@5", "all_tabs@5", "all_tabs@10", "latency_ms_p50", "latency_ms_p99")
    result["recall"] = {m: {k: v[k] for k in keys} for m, v in recall["methods"].items()}

    print(f"N={n}: HTTP, 16 clients", file=sys.stderr, flush=True)
    load_cmd = [
        str(PYTHON),
        "benchmarks/bench_api_load.py",
        "--store",
        str(store),
        "--clients",
        "16",
        "--duration",
        str(http_seconds),
        "--json",
        str(here / "http.json"),
    ]
    run(load_cmd, here / "http.log", env)
    result["http"] = json.loads((here / "http.json").read_text())

    print(f"N={n}: incremental build, 1 % changed", file=sys.stderr, flush=True)
    target = folders[-1]
    changed_dir = here / f"{target.name}-changed"
    changed = changed_copy(target, changed_dir)
    changed_sources = [*sources[:-1], f"spider:{changed_dir}"]
    result["incremental"] = run(
        [*build_cmd, *changed_sources, "--report", str(here / "incremental.json")],
        here / "incremental.log",
        env,
    )
    incremental = json.loads((here / "incremental.json").read_text())
    result["incremental"].update(
        changed_databases=len(changed),
        traversals_synthesized=incremental["traversals_synthesized"],
        stages_s={k: round(v, 1) for k, v in incremental["timings"].items()},
    )
    return result


def table(results: list[dict[str, Any]]) -> list[str]:
    head = (
        "| N | tables | questions | build min | synth s | embed s | load s | tables s | "
        "q/s | build RSS MB | store MB | 1 % changed s | db_R@1 | tab_R@5 | all_tabs@5 | "
        "all_tabs@10 | p50 ms | p99 ms | HTTP p50 ms | HTTP p99 ms | req/s | server RSS MB |"
    )
    lines = [head, "|" + "---:|" * head.count(" | ") + "---:|"]
    for r in sorted(results, key=lambda r: r["n"]):
        b, s, h = r["build"], r["recall"]["schemarag"], r["http"]
        st = b["stages_s"]
        lines.append(
            f"| {r['n']:,} | {b['tables']:,} | {b['questions']:,} | {b['wall_s'] / 60:.1f} | "
            f"{st.get('synthesize', 0):.0f} | {st.get('embed_questions', 0):.0f} | "
            f"{st.get('load_questions', 0):.0f} | {st.get('load_tables', 0):.0f} | "
            f"{b['questions_per_s']:.0f} | {b['peak_rss_mb']:,} | {r['store_disk_mb']:,.0f} | "
            f"{r['incremental']['wall_s']:.0f} | {s['db_R@1']:.1f} | {s['tab_R@5']:.1f} | "
            f"{s['all_tabs@5']:.1f} | {s['all_tabs@10']:.1f} | {s['latency_ms_p50']:.1f} | "
            f"{s['latency_ms_p99']:.1f} | {h['all']['p50_ms']:.0f} | "
            f"{h['all']['p99_ms']:.0f} | {h['all']['rps']:.1f} | "
            f"{h['server_resident_mb_at_end']:,.0f} |"
        )
    return lines


def plot(results: list[dict[str, Any]], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = sorted(results, key=lambda r: r["n"])
    ns = [r["n"] for r in rows]
    panels = [
        ("full build (min)", [r["build"]["wall_s"] / 60 for r in rows]),
        ("build peak RSS (MB)", [r["build"]["peak_rss_mb"] for r in rows]),
        ("store on disk (MB)", [r["store_disk_mb"] for r in rows]),
        (
            "retrieval p50 / p99 in process (ms)",
            [
                (
                    r["recall"]["schemarag"]["latency_ms_p50"],
                    r["recall"]["schemarag"]["latency_ms_p99"],
                )
                for r in rows
            ],
        ),
        (
            "HTTP p50 / p99, 16 clients (ms)",
            [(r["http"]["all"]["p50_ms"], r["http"]["all"]["p99_ms"]) for r in rows],
        ),
        (
            "Spider dev recall (%)",
            [
                (r["recall"]["schemarag"]["db_R@1"], r["recall"]["schemarag"]["all_tabs@10"])
                for r in rows
            ],
        ),
    ]
    fig, axes = plt.subplots(2, 3, figsize=(13, 7))
    for ax, (title, values) in zip(axes.flat, panels, strict=True):
        if isinstance(values[0], tuple):
            labels = ("db_R@1", "all_tabs@10") if "recall" in title else ("p50", "p99")
            for i, label in enumerate(labels):
                ax.plot(ns, [v[i] for v in values], marker="o", label=label)
            ax.legend()
        else:
            ax.plot(ns, values, marker="o")
        ax.set_xscale("log")
        ax.minorticks_off()
        ax.set_xticks(ns, [f"{n:,}" for n in ns])
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("databases (N)")
        ax.grid(alpha=0.3)
    fig.suptitle("schemarag at N databases (offline defaults, 2 cores)", fontsize=11)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[166, 1000, 3000, 10000])
    parser.add_argument("--out", type=Path, default=REPO / ".schemarag/estate")
    parser.add_argument("--http-seconds", type=float, default=30.0)
    parser.add_argument("--table-only", action="store_true", help="print OUT/results.json")
    parser.add_argument("--plot", type=Path, metavar="OUT.png")
    args = parser.parse_args()
    if not SPIDER.exists():
        print(f"bench_estate: error: no Spider data at {SPIDER}", file=sys.stderr)
        return 2
    results_file = args.out / "results.json"
    results = json.loads(results_file.read_text()) if results_file.exists() else []
    if not args.table_only:
        for n in args.sizes:
            entry = measure(n, args.out, args.http_seconds)
            entry["machine"] = (
                f"{os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}"
            )
            entry["commit"] = subprocess.run(
                ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPO
            ).stdout.strip()
            results = [r for r in results if r["n"] != n] + [entry]
            results_file.parent.mkdir(parents=True, exist_ok=True)
            results_file.write_text(json.dumps(results, indent=1))
            print("\n".join(table([entry])), flush=True)
    print("\n".join(table(results)))
    if args.plot:
        plot(results, args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
