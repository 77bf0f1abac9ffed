"""The recall benchmark: schemarag against the table-document baselines, in one run.

    dataset = load_dataset("spider-dev", Path("../shared/data/spider"))
    ensure_index(dataset.catalog, Path(".schemarag/bench/spider"), embedder)
    with Retriever.open(store, embedder) as retriever:
        report = run_recall(dataset, retriever, embedder)

`run_recall` refuses a knowledge base that contains an evaluated question (`LeakageError`): a
user example (`indexes.ensure_examples_index`) equal to an evaluated question is refused like an
LLM's. The report's top level is the stable contract of `schemarag bench recall --json`.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from evaluation.baselines import BM25TableBaseline, DenseTableBaseline
from evaluation.datasets import BenchDataset, BenchQuestion
from evaluation.errors import BenchmarkDataError, LeakageError
from evaluation.metrics import (
    METRIC_KEYS,
    Ranking,
    breakdown,
    curves,
    latency,
    recall,
    table_keys,
)
from providers import Embedder
from retriever.retriever import Retriever
from retriever.tables import embed_entries, entries_from_catalog
from retriever.text import normalize_question
from schemagraph.containment import find_relations
from schemagraph.dialects import sql_dialect
from schemagraph.families import collapse_families
from schemagraph.model import fold

log = logging.getLogger(__name__)

METHODS = ("schemarag", "bm25_table", "dense_table")
RANK_SIZE = 20


def check_leakage(
    indexed: Iterable[tuple[str, str]], questions: Sequence[BenchQuestion]
) -> frozenset[str]:
    """Indexed (question, synthesizer) records against the evaluated questions, normalized.

    A record equal to an evaluated question written by anything but the offline template
    synthesizer (an LLM may have memorized Spider) is leakage: `LeakageError`. A template record
    can only collide by coincidence ("How many continents are there?" is what the template
    writes for `SELECT count(*) FROM continents`); those are returned so that the benchmark
    masks them from the search instead of letting them answer the question they equal.
    """
    evaluated = {normalize_question(q.question): q.question for q in questions}
    coincidences: set[str] = set()
    for text, synthesizer in indexed:
        key = normalize_question(text)
        if key not in evaluated:
            continue
        if synthesizer != "template":
            raise LeakageError(
                f"the knowledge base contains the evaluated question {evaluated[key]!r} "
                f"(written by {synthesizer or 'an unknown synthesizer'}); benchmark questions "
                "must never be indexed"
            )
        coincidences.add(key)
    return frozenset(coincidences)


def _evaluate(
    rank: Callable[[BenchQuestion], Ranking],
    questions: Sequence[BenchQuestion],
    progress: Callable[[int, int], None] | None,
) -> list[Ranking]:
    rank(questions[0])  # warm-up: first-call costs are not query latency
    out: list[Ranking] = []
    for i, q in enumerate(questions):
        out.append(rank(q))
        if progress and (i + 1) % 100 == 0:
            progress(i + 1, len(questions))
    return out


def schemarag_ranking(retriever: Retriever, question: str, dialect: str | None = None) -> Ranking:
    started = time.perf_counter()
    result = retriever.retrieve(question, top_databases=10, top_tables=RANK_SIZE, dialect=dialect)
    elapsed = (time.perf_counter() - started) * 1000
    return Ranking(
        tuple(d.db_id for d in result.databases),
        result.tables[:RANK_SIZE],
        elapsed,
        result.pooling_error,
    )


def run_recall(
    dataset: BenchDataset,
    retriever: Retriever | None,
    embedder: Embedder,
    *,
    limit: int | None = None,
    methods: Sequence[str] = METHODS,
    progress: Callable[[str, int, int], None] | None = None,
    per_question: bool = False,
    engine_given: bool = False,
) -> dict[str, Any]:
    """Evaluate `methods` on `dataset` (its first `limit` questions); the report dict.
    `per_question`: add every question's gold and each method's ranking (`per_question`);
    `engine_given`: every method ranks a question among the databases of its `engine` only,
    as a caller connected to that engine would."""
    questions = list(dataset.questions[:limit] if limit else dataset.questions)
    if not questions:
        raise BenchmarkDataError(f"{dataset.name}: no questions to evaluate")
    engines = _engines(dataset, questions) if engine_given else {}
    pool = {fold(db.id) for db in dataset.catalog}
    if retriever is not None:
        indexed = {fold(d) for d in retriever.db_ids}
        if indexed != pool:
            raise BenchmarkDataError(
                f"the index holds {len(indexed)} databases, the {dataset.name} pool "
                f"{len(pool)} ({len(pool - indexed)} missing, {len(indexed - pool)} extra); "
                "build the index over the dataset's tables.json"
            )
        entries, vectors = retriever.entries, retriever.vectors
        if retriever.kb is not None:
            masked = check_leakage(retriever.kb.question_texts(), questions)
            if masked:
                log.warning(
                    "%d template record(s) equal an evaluated question; masked from the search: %s",
                    len(masked),
                    sorted(masked),
                )
            retriever.masked = masked
    else:
        entries = entries_from_catalog(collapse_families(dataset.catalog), with_values=False)
        vectors = embed_entries(entries, embedder)

    def engine(q: BenchQuestion) -> str | None:
        return q.engine if engine_given else None

    def only(q: BenchQuestion) -> frozenset[str] | None:
        return engines[q.engine] if engine_given and q.engine else None

    rankers: dict[str, Callable[[BenchQuestion], Ranking]] = {}
    if "schemarag" in methods:
        if retriever is None:
            raise BenchmarkDataError("the schemarag method needs a retriever")
        rankers["schemarag"] = lambda q: schemarag_ranking(retriever, q.question, engine(q))
    if "bm25_table" in methods:
        bm25 = BM25TableBaseline(entries)
        rankers["bm25_table"] = lambda q: bm25.rank(q.question, RANK_SIZE, only(q))
    if "dense_table" in methods:
        dense = DenseTableBaseline(entries, vectors, embedder)
        rankers["dense_table"] = lambda q: dense.rank(q.question, RANK_SIZE, only(q))

    relations = find_relations(dataset.catalog)
    twins = relations.twin_map()
    tables = table_keys(dataset.catalog)
    report: dict[str, Any] = {
        "dataset": dataset.name,
        "questions": len(questions),
        "databases": len(dataset.catalog),
        "methods": {},
        "breakdowns": {"hardness": {}, "gold_tables": {}},
        "curves": {},
        "skipped": len(dataset.skipped),
        "masked_records": sorted(retriever.masked) if retriever is not None else [],
        "engine_given": engine_given,
        "twin_groups": [group.as_dict() for group in relations.twins],
        "containment_groups": [group.as_dict() for group in relations.containment],
    }
    for name, rank in rankers.items():

        def step(done: int, total: int, name: str = name) -> None:
            if progress:
                progress(name, done, total)

        rankings = _evaluate(rank, questions, step)
        report["methods"][name] = {
            **recall(questions, rankings, twins, tables),
            **latency(rankings),
        }
        report["breakdowns"]["hardness"][name] = breakdown(
            questions, rankings, "hardness", twins, tables
        )
        report["breakdowns"]["gold_tables"][name] = breakdown(
            questions, rankings, "tables", twins, tables
        )
        report["curves"][name] = curves(questions, rankings)
        if per_question:
            _add_rankings(report, name, questions, rankings)
        if name == "schemarag" and retriever is not None and retriever.pool_llm is not None:
            # questions whose pooling reply was unusable: their ranking is the retriever's own
            errors = [r.pooling_error for r in rankings if r.pooling_error is not None]
            report["pooling_failures"] = {
                "count": len(errors),
                "reasons": dict(Counter(errors).most_common(5)),
            }
    return report


def _engines(
    dataset: BenchDataset, questions: Sequence[BenchQuestion]
) -> dict[str, frozenset[str]]:
    """Each engine of the pool -> the folded ids of its databases (the dialect their SQL is
    written in, as the index records it: `schemagraph.dialects.sql_dialect`); an error when a
    question names no engine, or one the pool does not have."""
    engines: dict[str, set[str]] = {}
    for db in dataset.catalog:
        engines.setdefault(sql_dialect(db), set()).add(fold(db.id))
    for q in questions:
        if q.engine is None or q.engine not in engines:
            found = "no `engine`" if q.engine is None else f"engine {q.engine!r}"
            raise BenchmarkDataError(
                f"--engine-given: the question {q.question[:60]!r} has {found}; the pool's "
                f"engines are {', '.join(sorted(engines))}"
            )
    return {name: frozenset(dbs) for name, dbs in engines.items()}


def _add_rankings(
    report: dict[str, Any],
    method: str,
    questions: Sequence[BenchQuestion],
    rankings: Sequence[Ranking],
) -> None:
    """Each question's gold and `method`'s databases and tables, best first, in the report."""
    rows = report.setdefault(
        "per_question",
        [
            {
                "question": q.question,
                "db_id": q.db_id,
                "gold_tables": sorted(table for _, table in q.gold),
                "hardness": q.hardness,
                "rankings": {},
            }
            for q in questions
        ],
    )
    for row, ranking in zip(rows, rankings, strict=True):
        row["rankings"][method] = {
            "databases": list(ranking.databases),
            "tables": [f"{db}.{table}" for db, table in ranking.tables],
        }


def table_lines(report: dict[str, Any]) -> list[str]:
    """The report's methods as a Markdown table."""
    keys = [*METRIC_KEYS, "latency_ms_p50", "latency_ms_p99"]
    lines = [
        "| method | " + " | ".join(keys) + " |",
        "|---|" + "---:|" * len(keys),
    ]
    for name, metrics in report["methods"].items():
        lines.append(f"| {name} | " + " | ".join(f"{metrics[k]:.1f}" for k in keys) + " |")
    return lines


def plot_recall(report: dict[str, Any], out: Path) -> None:
    """A PNG of db_R@k and tab_R@k (k = 1..20) for every method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for name, curve in report["curves"].items():
        axes[0].plot(curve["k"], curve["db_R"], marker=".", label=name)
        axes[1].plot(curve["k"], curve["tab_R"], marker=".", label=name)
    for ax, title in zip(axes, ("database recall@k", "table recall@k (micro)"), strict=True):
        ax.set_title(f"{report['dataset']}: {title}")
        ax.set_xlabel("k")
        ax.set_ylabel("%")
        ax.set_xticks(range(0, 21, 2))
        ax.set_ylim(0, 100)
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right")
    fig.suptitle(
        f"{report['questions']} questions, {report['databases']} databases in the pool", fontsize=9
    )
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
