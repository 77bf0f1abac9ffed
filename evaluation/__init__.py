"""Evaluation: the benchmarks' data sets, metrics, baselines and runners, apart from the product.

    from evaluation import load_dataset, run_recall
    dataset = load_dataset("spider-dev", Path("../shared/data/spider"))
    with Retriever.open(store, embedder) as retriever:
        report = run_recall(dataset, retriever, embedder)

No module of schemagraph, providers, indexer, retriever or generator imports this package; it
imports theirs. The CLI's `bench` commands and the scripts of benchmarks/ run it.

Modules, each named after what it does:

- `datasets`            benchmark questions with their gold database and tables, and the pool;
- `metrics`             db_R@k, tab_R@k, all_tabs@k, their twin and holds variants; latency;
- `baselines`           one document per table, ranked by BM25 or by embedding;
- `indexes`             the offline knowledge base of a pool (cached), and one with examples;
- `recall`              the recall benchmark (`run_recall`) and its leakage check;
- `execution_accuracy`  end-to-end execution accuracy with a real LLM (`bench ex`);
- `actor_critic`        AC-SQL Theorem 1, simulated through the real loop (`bench actor-critic`);
- `selection`           the selectors on gold and mutated candidates (`bench voting`);
- `mutations`           realistic wrong variants of a gold query, for `selection`;
- `gold`                Spider dev questions on the bundled sample (`data/`);
- `estates`             seeded enterprise-like estates, for the scale benchmark;
- `bird`                BIRD train in a mixed pool (prefixed ids, evaluated questions).

Errors: `EvaluationError` and its subclasses (`evaluation.errors`).
"""

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from evaluation.datasets import (
        DATASETS,
        BenchDataset,
        BenchQuestion,
        load_dataset,
        load_files,
        stratified_sample,
    )
    from evaluation.errors import BenchmarkDataError, EvaluationError, LeakageError
    from evaluation.estates import EstateSpec, generate_estate
    from evaluation.gold import sample_questions
    from evaluation.indexes import ensure_examples_index, ensure_index, pool_key
    from evaluation.metrics import METRIC_KEYS, Ranking
    from evaluation.recall import check_leakage, run_recall

__getattr__, __dir__, _ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "datasets": [
            "DATASETS",
            "BenchDataset",
            "BenchQuestion",
            "load_dataset",
            "load_files",
            "stratified_sample",
        ],
        "errors": ["BenchmarkDataError", "EvaluationError", "LeakageError"],
        "estates": ["EstateSpec", "generate_estate"],
        "gold": ["sample_questions"],
        "indexes": ["ensure_examples_index", "ensure_index", "pool_key"],
        "metrics": ["METRIC_KEYS", "Ranking"],
        "recall": ["check_leakage", "run_recall"],
    },
)

__all__ = [
    "DATASETS",
    "METRIC_KEYS",
    "BenchDataset",
    "BenchQuestion",
    "BenchmarkDataError",
    "EstateSpec",
    "EvaluationError",
    "LeakageError",
    "Ranking",
    "check_leakage",
    "ensure_examples_index",
    "ensure_index",
    "generate_estate",
    "load_dataset",
    "load_files",
    "pool_key",
    "run_recall",
    "sample_questions",
    "stratified_sample",
]
