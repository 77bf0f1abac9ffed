"""Database recall with and without the reranker (`retriever.rerank`), on one built index.

For each question the retriever ranks the databases as `schemarag bench recall` does; the first
`--k` are then scored by the reranker (each read as `condensed_schema` of its best tables in the
retriever's order) and reordered by a blend: the retriever's scores of the k and the reranker's,
each standardized over the k, the reranker's times w (w = 0 is the retriever's own order;
"only" is the reranker's order alone). The metrics are `evaluation.metrics.recall`'s, twins and
holds as `bench recall` counts them; the reranking's own time per question is reported too.

    .venv/bin/python benchmarks/rerank_recall.py --store KB --weights W \
        --tables ../shared/data/spider2-lite/tables.json \
        --questions ../shared/data/spider2-lite/questions_dev.json --json out.json
    .venv/bin/python benchmarks/rerank_recall.py --store S --dataset spider-dev --weights W

W: a weights file of `benchmarks/train_reranker.py` (.schemarag/reranker/reranker.safetensors).

The blend weights are all reported: choosing one on a measured set would be tuning on it.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from evaluation.datasets import DATASETS, load_dataset, load_files
from evaluation.metrics import Ranking, recall, table_keys
from retriever import Retriever
from retriever.rerank import CrossEncoder, blend_order, database_texts, standardized
from schemagraph.containment import find_relations
from schemarag.cli.result_file import commit, machine
from schemarag.cli.retrieve import make_query_embedder
from schemarag.settings import Settings

REPO = Path(__file__).resolve().parent.parent
BLENDS = ("0", "0.5", "1", "2", "only", "residual")
log = logging.getLogger("rerank_recall")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", required=True)
    parser.add_argument("--weights", type=Path, required=True)
    parser.add_argument("--tables", type=Path)
    parser.add_argument("--questions", type=Path)
    parser.add_argument("--dataset", choices=DATASETS)
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared/data/spider")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--tables-shown", type=int, default=4)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--residual",
        type=float,
        default=2.0,
        help="the 'residual' order: the reranker's score plus this times the standardized fast "
        "score (as `train_reranker.py --residual` trains it)",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    if (args.tables is None) == (args.dataset is None) or (args.tables is None) != (
        args.questions is None
    ):
        print("rerank_recall: error: give --tables and --questions, or --dataset", file=sys.stderr)
        return 2
    if args.tables is not None:
        dataset = load_files(args.tables, args.questions, name=args.questions.stem)
    else:
        dataset = load_dataset(args.dataset, args.data)
    questions = list(dataset.questions[: args.limit] if args.limit else dataset.questions)
    embedder = make_query_embedder(Settings.from_env(), None)
    embedder.embed_query("warm up")
    model = CrossEncoder.load(args.weights)
    twins = find_relations(dataset.catalog).twin_map()
    tables = table_keys(dataset.catalog)
    rankings: dict[str, list[Ranking]] = {b: [] for b in BLENDS}
    seconds: list[float] = []
    with Retriever.open(args.store, embedder) as retriever:
        entries = {e.key: e for e in retriever.entries}
        for n, q in enumerate(questions):
            started = time.perf_counter()
            result = retriever.retrieve(q.question, top_databases=10, top_tables=20)
            fast = (time.perf_counter() - started) * 1000
            dbs = [d.db_id for d in result.databases]
            head = result.databases[: args.k]
            started = time.perf_counter()
            texts = database_texts(head, q.question, entries, tables_shown=args.tables_shown)
            scores = model.score(q.question, texts)
            spent = (time.perf_counter() - started) * 1000
            seconds.append(spent)
            for blend in BLENDS:
                if blend == "residual":
                    total = scores + args.residual * standardized([d.score for d in head])
                    picked = [int(i) for i in np.argsort(-total, kind="stable")]
                else:
                    weight = math.inf if blend == "only" else float(blend)
                    picked = blend_order([d.score for d in head], scores.tolist(), weight)
                order = [head[i].db_id for i in picked]
                ranked = tuple(order + dbs[len(head) :])
                rankings[blend].append(
                    Ranking(ranked, result.tables, fast + (spent if blend != "0" else 0.0))
                )
            if n % 50 == 0:
                log.info("%d of %d questions", n + 1, len(questions))
    report: dict[str, Any] = {
        "benchmark": "rerank-recall",
        "command": "benchmarks/rerank_recall.py "
        + " ".join(argv if argv is not None else sys.argv[1:]),
        "commit": commit(),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "weights": str(args.weights),
        "weights_meta": model.meta,
        "dataset": dataset.name,
        "questions": len(questions),
        "k": args.k,
        "rerank_ms_p50": round(float(np.percentile(seconds, 50)), 1),
        "rerank_ms_p99": round(float(np.percentile(seconds, 99)), 1),
        "blends": {
            b: {
                k: round(v, 2)
                for k, v in recall(questions, rankings[b], twins, tables).items()
                if k.startswith("db_")
            }
            for b in BLENDS
        },
    }
    text = json.dumps(report, indent=1)
    print(text)
    if args.json is not None:
        args.json.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
