"""Comparing rules for users' examples in routing, on train questions only.

The 235-database pool (Spider 166 + BIRD train 69, `benchmarks/bird_split.py`), three indexes:
the template knowledge base alone, and with the 10 % and 50 % example files added (built, or
reused, as `schemarag bench recall --examples` does). Two question sets, neither evaluated:

- `bird`: `tuning.json`, 500 BIRD train questions that are in no example file (questions about
  databases that have examples);
- `spider`: 500 Spider train questions (seed 0), whose databases have no example: what users'
  examples for some databases must not cost the others.

Each question's signals are computed once per index; every rule then re-fuses them
(`Retriever.retrieve` with the signals memoized), so the comparison costs little.

    flock /tmp/heavy.lock .venv/bin/python benchmarks/user_example_rules.py --json OUT.json
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

from evaluation.datasets import BenchDataset, load_files
from evaluation.indexes import ensure_examples_index, ensure_index, pool_key
from evaluation.metrics import Ranking, recall
from evaluation.recall import RANK_SIZE
from providers import make_embedder
from retriever import FusionWeights, Retriever, RetrieverConfig
from retriever.text import normalize_question

REPO = Path(__file__).resolve().parent.parent
SPIDER = REPO.parent / "shared/data/spider"
SPLIT = REPO / ".schemarag/bird-split"
#: the rules compared: votes alone (user records vote for tables like synthetic ones), the
#: `user` signal of `retriever.fusion` as it is, without the vote share, and at weight 2
RULES: dict[str, dict[str, Any]] = {
    "votes only": {"user": 0.0},
    "user signal": {},
    "user signal, no consensus": {"user_consensus": 0.0},
    "user signal x2": {"user": 2.0},
}


def spider_train(catalog_files: list[Path], out: Path, n: int = 500) -> BenchDataset:
    items = json.loads((SPIDER / "train_spider.json").read_text(encoding="utf-8"))
    random.Random(0).shuffle(items)
    out.write_text(json.dumps(items[:n]), encoding="utf-8")
    return load_files(catalog_files, out, name="spider-train-500")


def evaluate(
    retriever: Retriever, dataset: BenchDataset, weights: FusionWeights, memo: dict[str, Any]
) -> dict[str, float]:
    retriever.config = dataclasses.replace(retriever.config, weights=weights)
    rankings = []
    for q in dataset.questions:
        result = retriever.retrieve(q.question, top_databases=10, top_tables=RANK_SIZE)
        rankings.append(
            Ranking(tuple(d.db_id for d in result.databases), result.tables[:RANK_SIZE], 0.0)
        )
    return recall(dataset.questions, rankings)


def memoize_signals(retriever: Retriever) -> dict[str, Any]:
    memo: dict[str, Any] = {}
    compute = retriever.signals

    def signals(question: str, prepared: Any = None) -> Any:
        if question not in memo:
            memo[question] = compute(question, prepared)
        return memo[question]

    retriever.signals = signals  # type: ignore[method-assign]
    return memo


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache-dir", type=Path, default=REPO / ".schemarag/bench")
    parser.add_argument("--json", type=Path, required=True)
    args = parser.parse_args(argv)
    files = [SPIDER / "tables.json", SPLIT / "train_tables.json"]
    bird = load_files(files, SPLIT / "tuning.json", name="bird-tuning")
    spider = spider_train(files, Path("/tmp/spider-train-500.json"))
    embedder = make_embedder("minilm")
    base = args.cache_dir / f"{pool_key(bird.catalog)}-{embedder.name.replace(':', '_')}"
    ensure_index(bird.catalog, base, embedder)
    stores = {"0%": base}
    for share in ("10", "50"):
        path = SPLIT / f"examples_{share}.jsonl"
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
        store = base.with_name(f"{base.name}-examples-{digest}")
        added = ensure_examples_index(bird.catalog, base, store, embedder, path)
        print(f"{share}%: {added}", file=sys.stderr, flush=True)
        texts = {
            normalize_question(json.loads(line)["question"])
            for line in path.read_text(encoding="utf-8").splitlines()
        }
        overlap = [q for q in bird.questions if normalize_question(q.question) in texts]
        assert not overlap, f"{len(overlap)} tuning questions are examples"
        stores[f"{share}%"] = store
    results: list[dict[str, Any]] = []
    for name, store in stores.items():
        with Retriever.open(str(store), embedder, config=RetrieverConfig(examples=0)) as retriever:
            memo = memoize_signals(retriever)
            for dataset in (bird, spider):
                started = time.perf_counter()
                for rule, setting in RULES.items() if name != "0%" else [("none", {})]:
                    weights = dataclasses.replace(FusionWeights(), **setting)
                    metrics = evaluate(retriever, dataset, weights, memo)
                    results.append(
                        {"store": name, "questions": dataset.name, "rule": rule, **metrics}
                    )
                print(
                    f"{name} {dataset.name}: {time.perf_counter() - started:.0f} s",
                    file=sys.stderr,
                    flush=True,
                )
            memo.clear()
    args.json.write_text(json.dumps(results, indent=1))
    for row in results:
        print(
            f"{row['store']:>4} {row['questions']:<17} {row['rule']:<28}",
            *(f"{m} {row[m]:5.1f}" for m in ("db_R@1", "tab_R@5", "all_tabs@5")),
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
