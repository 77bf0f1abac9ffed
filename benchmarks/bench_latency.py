"""Retrieval latency in process, per step: the latency rows of docs/BENCHMARKS.md.

    benchmarks/bench_latency.py --store KB --questions questions_dev.json \
        --label "Spider 2.0-lite dev (162 databases)" --result benchmarks/results/latency.json

Each run opens the store as `bench recall` does (the default embedder, torch warm), answers the
first `--warm-up` questions unmeasured, then times `Retriever.retrieve` (10 databases, 20 tables)
once on each of the others: a question is never timed twice, since the retriever remembers the
words it has linked. Reported: the median over `--runs` runs of p50 and p99, whole call and per
step (the result's `timings`). `--result` replaces the row of the same label in a latency result
file (or starts one). The machine is shared: compare variants in one process, interleaved.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from datetime import date
from pathlib import Path
from statistics import median
from time import perf_counter
from typing import Any

import numpy as np

from retriever import Retriever
from schemarag.cli.result_file import commit, machine
from schemarag.cli.retrieve import make_query_embedder
from schemarag.settings import Settings

STEPS = {
    "embed_ms": "embedding",
    "semantic_ms": "semantic links",
    "questions_ms": "question search",
    "tables_ms": "tables",
    "fuse_ms": "fusion",
    "examples_ms": "examples",
}


def read_questions(path: Path) -> list[str]:
    rows = json.loads(path.read_text())
    return [str(r["question"]) for r in rows if r.get("question")]


def one_run(
    retriever: Retriever, questions: list[str]
) -> tuple[list[float], dict[str, list[float]]]:
    walls: list[float] = []
    steps: dict[str, list[float]] = {key: [] for key in STEPS}
    for question in questions:
        started = perf_counter()
        result = retriever.retrieve(question, top_databases=10, top_tables=20)
        walls.append((perf_counter() - started) * 1000)
        for key in STEPS:
            steps[key].append(result.timings.get(key, 0.0))
    return walls, steps


def measure(store: str, questions: list[str], runs: int, warm_up: int) -> dict[str, Any]:
    embedder = make_query_embedder(Settings.from_env(), "minilm+schema")
    p50s, p99s = [], []
    step_p50: dict[str, list[float]] = {key: [] for key in STEPS}
    step_p99: dict[str, list[float]] = {key: [] for key in STEPS}
    for _ in range(runs):
        with Retriever.open(store, embedder) as retriever:
            for question in questions[:warm_up]:
                retriever.retrieve(question, top_databases=10, top_tables=20)
            walls, steps = one_run(retriever, questions[warm_up:])
            databases = len(retriever.db_ids)
        p50s.append(float(np.percentile(walls, 50)))
        p99s.append(float(np.percentile(walls, 99)))
        for key, values in steps.items():
            step_p50[key].append(float(np.percentile(values, 50)))
            step_p99[key].append(float(np.percentile(values, 99)))
    return {
        "databases": databases,
        "questions": len(questions) - warm_up,
        "runs": runs,
        "p50_ms": round(median(p50s), 1),
        "p99_ms": round(median(p99s), 1),
        "steps_p50_ms": {STEPS[k]: round(median(v), 1) for k, v in step_p50.items()},
        "steps_p99_ms": {STEPS[k]: round(median(v), 1) for k, v in step_p99.items()},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", required=True, help="index folder")
    parser.add_argument("--questions", type=Path, required=True, help="JSON list of questions")
    parser.add_argument("--runs", type=int, default=3, help="timed passes over the questions")
    parser.add_argument("--warm-up", type=int, default=30, help="questions answered first")
    parser.add_argument("--label", default=None, help="the row's label (default: the store)")
    parser.add_argument("--result", type=Path, default=None, help="latency result file to update")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be >= 1")
    questions = read_questions(args.questions)
    if len(questions) <= args.warm_up:
        parser.error(f"{args.questions}: {len(questions)} questions, not more than --warm-up")
    row = {
        "label": args.label or args.store,
        **measure(args.store, questions, args.runs, args.warm_up),
    }
    row.update(
        command=shlex.join(
            ["benchmarks/bench_latency.py", *(sys.argv[1:] if argv is None else argv)]
        ),
        commit=commit(),
        date=date.today().isoformat(),
    )
    print(json.dumps(row, indent=1))
    if args.result is not None:
        result: dict[str, Any] = (
            json.loads(args.result.read_text())
            if args.result.exists()
            else {"benchmark": "latency", "machine": machine(), "rows": []}
        )
        labels = [r.get("label") for r in result["rows"]]
        if row["label"] in labels:
            result["rows"][labels.index(row["label"])] = row
        else:
            result["rows"].append(row)
        args.result.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
