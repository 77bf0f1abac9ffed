"""Embedding throughput on Spider's 876 table descriptions: MiniLM at two batch sizes, hashing.

One short text per table of ../shared/data/spider/tables.json: the table's name and its column
names, as Spider humanizes them ("singer: singer id, name, country, song name, age"). Each
embedder embeds all texts once to warm up (loading the model), then ``--repeats`` more times,
interleaved with the others (A B C A B C ...) so that load from other processes on a shared
machine falls on all alike; the median wall time gives sentences per second.

    .venv/bin/python benchmarks/bench_embed.py [--tables PATH] [--batch-sizes 32 128]
        [--repeats 5] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Any

from providers import Embedder, HashingEmbedder, MiniLMEmbedder

REPO = Path(__file__).resolve().parent.parent
SPIDER = REPO.parent / "shared/data/spider/tables.json"


def table_texts(tables_json: Path) -> list[str]:
    """One description per table: ``table name: column, column, ...``."""
    texts = []
    for database in json.loads(tables_json.read_text()):
        columns: dict[int, list[str]] = {}
        for table_index, column in database["column_names"]:
            if table_index >= 0:
                columns.setdefault(table_index, []).append(column)
        for index, table in enumerate(database["table_names"]):
            texts.append(f"{table}: {', '.join(columns.get(index, []))}")
    return texts


def measure(
    runs: list[tuple[str, Embedder]], texts: list[str], repeats: int
) -> list[dict[str, Any]]:
    """Time every embedder ``repeats`` times, interleaved (A B C A B C ...) so that load from
    other processes on a shared machine falls on all of them alike."""
    first: dict[str, float] = {}
    dims: dict[str, int] = {}
    for label, embedder in runs:  # warm-up; loads the model
        started = time.perf_counter()
        dims[label] = int(embedder.embed_documents(texts).shape[1])
        first[label] = time.perf_counter() - started
    times: dict[str, list[float]] = {label: [] for label, _ in runs}
    for _ in range(repeats):
        for label, embedder in runs:
            started = time.perf_counter()
            embedder.embed_documents(texts)
            times[label].append(time.perf_counter() - started)
    rows = []
    for label, embedder in runs:
        median = statistics.median(times[label])
        rows.append(
            {
                "run": label,
                "embedder": embedder.name,
                "texts": len(texts),
                "dim": dims[label],
                "first_pass_s": round(first[label], 3),
                "median_s": round(median, 3),
                "min_s": round(min(times[label]), 3),
                "max_s": round(max(times[label]), 3),
                "sentences_per_s": round(len(texts) / median, 1),
                "best_sentences_per_s": round(len(texts) / min(times[label]), 1),
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=Path, default=SPIDER)
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[32, 128])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)

    texts = table_texts(args.tables)
    print(
        f"{len(texts)} table descriptions from {args.tables}; "
        f"python {platform.python_version()}, {os.cpu_count()} CPUs, {platform.machine()}"
    )
    try:
        import torch

        print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    except ImportError:
        pass
    runs: list[tuple[str, Embedder]] = [
        (f"minilm batch {size}", MiniLMEmbedder(batch_size=size)) for size in args.batch_sizes
    ]
    runs.append(("hashing 512", HashingEmbedder(512)))
    results = measure(runs, texts, args.repeats)
    for row in results:
        print(
            f"{row['run']:<18} {row['sentences_per_s']:>9.1f} sentences/s median, "
            f"{row['best_sentences_per_s']:>9.1f} best  (wall {row['min_s']:.3f}-"
            f"{row['max_s']:.3f}s over {args.repeats}; first pass {row['first_pass_s']:.3f}s)"
        )
    baseline = results[-1]["median_s"]
    for row in results[:-1]:
        print(f"{row['run']}: {row['median_s'] / baseline:.0f}x the hashing embedder's time")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
