"""Recall metrics over a pool of databases (DESIGN.md, "Measuring").

- `db_R@k`: share of questions whose gold database is among the top-k databases;
- `tab_R@k`: micro recall, Σ |gold ∩ top-k tables| / Σ |gold| (DBCopilot's definition), tables
  keyed `db.table` and ranked across the whole pool;
- `all_tabs@k`: share of questions with every gold table in the top-k tables;
- `db_R@1_twins`: db_R@1 with each group of twin databases counted as one database
  (`schemagraph.containment`): the top database is right when it is the gold one or its twin;
- `db_R@1_holds`: the top database holds every gold table (tables matched by key, modulo engine
  conventions: `schemagraph.containment.table_key`), as a mirror or an extended copy of the
  gold database does: the question is answerable there.

All are percentages in [0, 100].
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from evaluation.datasets import BenchQuestion
from schemagraph.containment import table_key
from schemagraph.model import Database, fold

DB_KS = (1, 5)
TABLE_KS = (5, 10, 20)
ALL_KS = (5, 10)
CURVE_KS = tuple(range(1, 21))
METRIC_KEYS = (
    "db_R@1",
    "db_R@1_twins",
    "db_R@1_holds",
    "db_R@5",
    "tab_R@5",
    "tab_R@10",
    "tab_R@20",
    "all_tabs@5",
    "all_tabs@10",
)


@dataclass(frozen=True)
class Ranking:
    """A method's answer to one question: databases and pool-wide tables, best first;
    `pooling_error`: why the pooling model's reply was not used (schemarag with --pool)."""

    databases: tuple[str, ...]
    tables: tuple[tuple[str, str], ...]
    latency_ms: float
    pooling_error: str | None = None


def _db_rank(question: BenchQuestion, ranking: Ranking) -> int | None:
    gold = fold(question.db_id)
    for i, db in enumerate(ranking.databases):
        if fold(db) == gold:
            return i
    return None


def _table_hits(question: BenchQuestion, ranking: Ranking, k: int) -> int:
    top = {(fold(d), fold(t)) for d, t in ranking.tables[:k]}
    return len(question.gold & top)


def table_keys(catalog: Iterable[Database]) -> dict[str, dict[str, str]]:
    """Each database's folded id -> its tables' keys by folded name, for `recall(tables=)`
    (a key reads the engine's dataset or schema: `schemagraph.model.Table.qualified_name`)."""
    return {
        fold(db.id): {fold(t.name): table_key(t.qualified_name) for t in db.tables}
        for db in catalog
    }


def _holds(
    question: BenchQuestion, ranking: Ranking, tables: Mapping[str, Mapping[str, str]]
) -> bool:
    """Whether the top database is the gold one or holds every gold table by key."""
    if not ranking.databases:
        return False
    top = fold(ranking.databases[0])
    if top == fold(question.db_id):
        return True
    held = tables.get(top)
    if held is None:
        return False
    keys, held_keys = tables.get(fold(question.db_id), {}), set(held.values())
    return all(keys.get(t, table_key(t)) in held_keys for _, t in question.gold)


def recall(
    questions: Sequence[BenchQuestion],
    rankings: Sequence[Ranking],
    twins: Mapping[str, frozenset[str]] | None = None,
    tables: Mapping[str, Mapping[str, str]] | None = None,
) -> dict[str, float]:
    """The metrics of METRIC_KEYS (no latency) for aligned questions and rankings. `twins`:
    each twin database's folded id -> its group's (`EstateRelations.twin_map`); `tables`: each
    database's folded id -> its tables' keys (`table_keys`; without it, `db_R@1_holds` counts
    the gold database only)."""
    n = len(questions)
    if n == 0:
        return dict.fromkeys(METRIC_KEYS, 0.0)
    out: dict[str, float] = {}
    ranks = [_db_rank(q, r) for q, r in zip(questions, rankings, strict=True)]
    for k in DB_KS:
        out[f"db_R@{k}"] = 100.0 * sum(r is not None and r < k for r in ranks) / n
    twins = twins or {}
    twin_hits = sum(
        bool(r.databases) and fold(r.databases[0]) in twins.get(fold(q.db_id), {fold(q.db_id)})
        for q, r in zip(questions, rankings, strict=True)
    )
    out["db_R@1_twins"] = 100.0 * twin_hits / n
    out["db_R@1_holds"] = (
        100.0
        * sum(_holds(q, r, tables or {}) for q, r in zip(questions, rankings, strict=True))
        / n
    )
    gold_total = sum(len(q.gold) for q in questions)
    for k in TABLE_KS:
        hits = sum(_table_hits(q, r, k) for q, r in zip(questions, rankings, strict=True))
        out[f"tab_R@{k}"] = 100.0 * hits / gold_total
    for k in ALL_KS:
        full = sum(
            _table_hits(q, r, k) == len(q.gold) for q, r in zip(questions, rankings, strict=True)
        )
        out[f"all_tabs@{k}"] = 100.0 * full / n
    return {k: round(out[k], 2) for k in METRIC_KEYS}


def latency(rankings: Sequence[Ranking]) -> dict[str, float]:
    times = np.asarray([r.latency_ms for r in rankings], dtype=np.float64)
    if not times.size:
        return {"latency_ms_p50": 0.0, "latency_ms_p99": 0.0}
    return {
        "latency_ms_p50": round(float(np.percentile(times, 50)), 2),
        "latency_ms_p99": round(float(np.percentile(times, 99)), 2),
    }


def curves(
    questions: Sequence[BenchQuestion], rankings: Sequence[Ranking]
) -> dict[str, list[float]]:
    """db_R@k and tab_R@k for k = 1..20 (for the plot)."""
    n = max(1, len(questions))
    gold_total = max(1, sum(len(q.gold) for q in questions))
    ranks = [_db_rank(q, r) for q, r in zip(questions, rankings, strict=True)]
    pairs = list(zip(questions, rankings, strict=True))
    return {
        "k": [float(k) for k in CURVE_KS],
        "db_R": [
            round(100.0 * sum(r is not None and r < k for r in ranks) / n, 2) for k in CURVE_KS
        ],
        "tab_R": [
            round(100.0 * sum(_table_hits(q, r, k) for q, r in pairs) / gold_total, 2)
            for k in CURVE_KS
        ],
    }


def gold_size_bucket(question: BenchQuestion) -> str:
    size = len(question.gold)
    return str(size) if size < 4 else "4+"


def breakdown(
    questions: Sequence[BenchQuestion],
    rankings: Sequence[Ranking],
    key: str,
    twins: Mapping[str, frozenset[str]] | None = None,
    tables: Mapping[str, Mapping[str, str]] | None = None,
) -> dict[str, dict[str, float]]:
    """The metrics per hardness (`key="hardness"`) or per number of gold tables (`"tables"`)."""
    groups: dict[str, list[int]] = {}
    for i, q in enumerate(questions):
        label = (q.hardness or "unknown") if key == "hardness" else gold_size_bucket(q)
        groups.setdefault(label, []).append(i)
    order = ["easy", "medium", "hard", "extra"] if key == "hardness" else ["1", "2", "3", "4+"]
    out: dict[str, dict[str, float]] = {}
    for label in sorted(groups, key=lambda g: (order.index(g) if g in order else 99, g)):
        idx = groups[label]
        metrics = recall([questions[i] for i in idx], [rankings[i] for i in idx], twins, tables)
        out[label] = {"questions": float(len(idx)), **metrics}
    return out
