"""The reranker's training groups from a built index: the fast ranker's own confusions.

For each synthetic question of the store (its snapshot), the retriever ranks the databases with
every synthetic question of the same database and tables masked (a question it has not seen
written), and the first `--k` databases are kept as the reranker will read them at query time
(`retriever.rerank.database_texts`, the retriever's order of tables). A group whose gold database
is not among the k teaches nothing the reranker can act on and is counted, not kept.

    .venv/bin/python benchmarks/reranker_groups.py --store /tmp/kb-s2c --name spider2 \
        --out .schemarag/reranker/groups-spider2.jsonl

With `--paraphrases FILE` it ranks the rewrites of `benchmarks/paraphrase_questions.py` instead,
each with the synthetic questions of its database and tables masked.

A line: question, gold database, the k databases, the retriever's scores, the texts, the index of
the gold one, and whether the database is held out (`train_reranker.held_out`). The file is
written as it goes and resumed where it stopped. Never a measured question: the check of
`train_reranker.measured_questions` drops any that equals one.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

from train_reranker import DATA, held_out, measured_questions

from retriever import Retriever, StoreNotReadyError, served_build
from retriever.rerank import database_texts
from retriever.text import normalize_question
from schemagraph.model import fold
from schemarag.cli.retrieve import make_query_embedder
from schemarag.settings import Settings
from store.location import QUESTIONS, StoreLocation
from store.records import SYNTHETIC
from store.snapshot import read_snapshot

log = logging.getLogger("reranker_groups")


def snapshot_questions(store: Path) -> list[dict[str, Any]]:
    """The synthetic records of the store's served build (a `StoreNotReadyError` without one)."""
    location = StoreLocation.parse(str(store))
    build_id, _ = served_build(location)
    snapshot = read_snapshot(location.build_dir(build_id), QUESTIONS)
    if snapshot is None:
        raise SystemExit(f"reranker_groups: error: {store}: its build has no snapshot (rebuild it)")
    return [r for r in snapshot[1] if r.get("origin", SYNTHETIC) == SYNTHETIC]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--name", required=True, help="the source, for held_out (spider2, ...)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument(
        "--paraphrases",
        type=Path,
        help="rank these rewrites (benchmarks/paraphrase_questions.py) instead of the store's "
        "synthetic questions, each with its synthetic siblings masked",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    try:
        rows = snapshot_questions(args.store)[: args.limit]
    except StoreNotReadyError as exc:
        print(f"reranker_groups: error: {exc}", file=sys.stderr)
        return 2
    measured = set().union(*measured_questions(args.data).values())
    siblings: dict[tuple[str, tuple[str, ...]], set[str]] = {}
    for row in rows:
        key = (fold(row["db_id"]), tuple(sorted(fold(t) for t in row["tables"])))
        siblings.setdefault(key, set()).add(normalize_question(row["question"]))
    if args.paraphrases is not None:
        with args.paraphrases.open(encoding="utf-8") as lines:
            rewrites = [json.loads(line) for line in lines if line.strip()]
        rows = [
            {"question": r["question"], "db_id": r["db"], "tables": r["tables"]}
            for r in rewrites
            if "question" in r
        ][: args.limit]
    done = 0
    if args.out.is_file():
        done = sum(1 for _ in args.out.open(encoding="utf-8"))
    embedder = make_query_embedder(Settings.from_env(), None)
    counts = {"kept": 0, "gold_not_in_k": 0, "measured": 0}
    started = time.perf_counter()
    with (
        Retriever.open(str(args.store), embedder) as retriever,
        args.out.open("a", encoding="utf-8") as out,
    ):
        entries = {e.key: e for e in retriever.entries}
        for n, row in enumerate(rows[done:], start=done):
            text = normalize_question(row["question"])
            record: dict[str, Any] = {"n": n}
            if text in measured:
                counts["measured"] += 1
            else:
                key = (fold(row["db_id"]), tuple(sorted(fold(t) for t in row["tables"])))
                retriever.masked = frozenset(siblings[key])
                result = retriever.retrieve(row["question"], top_databases=args.k, top_tables=10)
                head = result.databases[: args.k]
                dbs = [fold(d.db_id) for d in head]
                gold = fold(row["db_id"])
                if gold not in dbs:
                    counts["gold_not_in_k"] += 1
                    record["gold"] = -1
                else:
                    counts["kept"] += 1
                    record.update(
                        question=row["question"],
                        db=row["db_id"],
                        tables=row["tables"],
                        held_out=held_out(args.name, row["db_id"]),
                        dbs=dbs,
                        fast=[round(d.score, 5) for d in head],
                        texts=database_texts(head, row["question"], entries),
                        gold=dbs.index(gold),
                    )
            out.write(json.dumps(record) + "\n")
            if n % 500 == 0:
                out.flush()
                log.info(
                    "%d of %d (%.0f s; this run %s)",
                    n + 1,
                    len(rows),
                    time.perf_counter() - started,
                    counts,
                )
    log.info("done: %s", counts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
