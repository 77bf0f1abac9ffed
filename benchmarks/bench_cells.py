"""Exact search against cells at estate scale, on one open retriever.

Past `retriever.question_index.CELLS_FROM` questions the retriever searches the synthetic
questions by cells, and past `RetrieverConfig.table_cells_from` tables it scores the dense
table signal by cells too (`retriever.question_index.Cells`). This opens one retriever on a
built store and evaluates Spider dev (or any questions file) under three configurations,
interleaved in two rounds after a discarded warm-up pass (which fills the semantic linker's
memo): everything exact with MiniLM in fp32 (the retriever before cells), cells in fp32, and
cells with MiniLM as the server runs it (`auto`: bf16 where the CPU has it natively). Reports
recall and in-process latency per configuration and round, then the median per-step timings
of the cells configuration in fp32 over the first 300 questions.

    export SCHEMARAG_CACHE=.schemarag/estate/n10000/cache.sqlite
    flock /tmp/heavy.lock .venv/bin/python benchmarks/bench_cells.py \\
        --store .schemarag/estate/n10000/store \\
        --tables ../shared/data/spider/tables.json .schemarag/estate/bird/tables.json \\
                 .schemarag/estate/n10000/estate-9765-changed/tables.json \\
        --databases ../shared/data/spider/database \\
                    .schemarag/estate/n10000/estate-9765-changed/database \\
        --json OUT.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from evaluation.datasets import load_files
from evaluation.recall import run_recall
from retriever import Retriever
from schemarag.cli.retrieve import cached, make_query_embedder
from schemarag.settings import Settings
from store.location import StoreLocation
from store.manifest import read_manifest

REPO = Path(__file__).resolve().parent.parent
KEYS = ("db_R@1", "db_R@1_twins", "db_R@5", "tab_R@5", "all_tabs@5", "all_tabs@10",
        "latency_ms_p50", "latency_ms_p99")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", required=True)
    parser.add_argument("--tables", type=Path, nargs="+", required=True)
    parser.add_argument("--databases", type=Path, nargs="*", default=[])
    parser.add_argument(
        "--questions", type=Path, default=REPO.parent / "shared/data/spider/dev.json"
    )
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--table-probe",
        type=int,
        nargs="*",
        default=[],
        help="also: cells at served precision with the table cells probing this many",
    )
    args = parser.parse_args(argv)

    dataset = load_files(args.tables, args.questions, args.databases, name=args.questions.stem)
    settings = Settings.from_env()
    location = StoreLocation.parse(args.store)
    build = location.current()
    if build is None:
        raise SystemExit(f"bench_cells: no built knowledge base in {args.store}")
    # the store's embedder, on one thread, as `schemarag bench recall`
    served = make_query_embedder(settings, read_manifest(location, build).embedder_spec())
    fp32 = served.with_precision("fp32")  # type: ignore[attr-defined]
    fp32.embed_query("warm up")
    started = time.perf_counter()
    retriever = Retriever.open(args.store, fp32, vocabulary_embedder=cached(settings, fp32))
    opened_s = time.perf_counter() - started
    memory = retriever.kb._memory if retriever.kb is not None else None
    if memory is None or memory.cells is None:
        raise SystemExit("bench_cells: the store is too small for cells; nothing to compare")
    question_cells, table_cells = memory.cells, retriever.table_cells
    shipped = table_cells.probe if table_cells is not None else None
    configs: dict[str, tuple[Any, Any, Any, int | None]] = {
        "exact, fp32": (None, None, fp32, shipped),
        "cells, fp32": (question_cells, table_cells, fp32, shipped),
        "cells, served precision": (question_cells, table_cells, served, shipped),
    }
    for probe in args.table_probe:
        configs[f"cells, served precision, table probe {probe}"] = (
            question_cells, table_cells, served, probe
        )  # fmt: skip
    run_recall(dataset, retriever, fp32, methods=["schemarag"], limit=300)  # warm-up
    rows: list[dict[str, Any]] = []
    steps: dict[str, list[float]] = {}
    for round_ in (1, 2):
        names = list(configs) if round_ == 1 else list(configs)[::-1]
        for name in names:
            memory.cells, retriever.table_cells, retriever.embedder, probe = configs[name]
            if table_cells is not None:
                table_cells.probe = probe
            report = run_recall(dataset, retriever, retriever.embedder, methods=["schemarag"])
            metrics = report["methods"]["schemarag"]
            row = {"round": round_, "config": name, **{k: round(metrics[k], 2) for k in KEYS}}
            print(json.dumps(row), flush=True)
            rows.append(row)
    memory.cells, retriever.table_cells, retriever.embedder, probe = configs["cells, fp32"]
    if table_cells is not None:
        table_cells.probe = probe
    for question in dataset.questions[:300]:
        for key, ms in retriever.retrieve(question.question).timings.items():
            steps.setdefault(key, []).append(ms)
    out = {
        "store": args.store,
        "open_s": round(opened_s, 1),
        "question_cells": [len(question_cells.centroids), question_cells.probe],
        "table_cells": [len(table_cells.centroids), table_cells.probe] if table_cells else None,
        "runs": rows,
        "steps_p50_ms_cells_fp32": {k: round(statistics.median(v), 2) for k, v in steps.items()},
    }
    print(json.dumps(out["steps_p50_ms_cells_fp32"]))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    retriever.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
