"""Benchmark questions with their gold database and tables, and the pool of databases.

Spider (`dev.json`: `question`, `query`, `db_id`), Spider-Syn (`SpiderSynQuestion`), Spider-DK
and BIRD (`SQL`) are read the same way; gold tables come from a `gold_tables` list when a question
has one, else from the gold SQL's syntax tree (`schemagraph.sql.tables_in_sql`, in the SQL
dialect the file is written in: SQLite unless told), hardness from Spider's classifier on the
gold SQL (None when it cannot classify SQL of another dialect). The shards of a table family
(`ga_sessions_20170701` ...) are one gold table, the family's newest member, which is how the
index ranks a family (`schemagraph.families`).

A question whose gold tables are none of its database's (a view, or a table the tables.json
lacks) cannot be routed to them and is skipped, with the names it read.
"""

from __future__ import annotations

import json
import logging
import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from evaluation.errors import BenchmarkDataError
from schemagraph import Catalog, load_spider
from schemagraph.errors import SchemaGraphError
from schemagraph.families import family_index
from schemagraph.model import fold
from schemagraph.sql import SqlError, spider_hardness, tables_in_sql

log = logging.getLogger(__name__)

DATASETS = ("spider-dev", "spider-syn", "spider-dk")
_QUESTION_KEYS = ("SpiderSynQuestion", "question")
_SQL_KEYS = ("query", "SQL", "sql")


@dataclass(frozen=True)
class BenchQuestion:
    question: str
    sql: str
    db_id: str
    #: gold tables as (folded db id, folded table name)
    gold: frozenset[tuple[str, str]]
    hardness: str | None
    #: the engine the question is asked on (`bigquery`, `snowflake`, ...), when the file says
    engine: str | None = None


@dataclass(frozen=True)
class BenchDataset:
    name: str
    catalog: Catalog
    questions: tuple[BenchQuestion, ...]
    #: questions left out, with the reason (gold SQL that does not parse, unknown database...)
    skipped: tuple[str, ...] = ()


def load_dataset(name: str, data_dir: Path) -> BenchDataset:
    """One of `DATASETS` from a Spider folder (see docs/BENCHMARKS.md for the layout)."""
    if name == "spider-dev":
        return load_files(data_dir / "tables.json", data_dir / "dev.json", (), name=name)
    if name == "spider-syn":
        return load_files(
            data_dir / "tables.json", data_dir / "spider_syn" / "dev.json", (), name=name
        )
    if name == "spider-dk":
        return load_files(
            data_dir / "spider_dk" / "tables.json",
            data_dir / "spider_dk" / "Spider-DK.json",
            (data_dir / "spider_dk" / "database", data_dir / "database"),
            name=name,
        )
    raise BenchmarkDataError(f"unknown dataset {name!r}; choose one of {', '.join(DATASETS)}")


def load_files(
    tables: Path | Sequence[Path],
    questions: Path,
    databases: Sequence[Path] = (),
    *,
    name: str | None = None,
    dialect: str = "sqlite",
) -> BenchDataset:
    """Questions of `questions` over the pool of `tables` (one or more tables.json files, whose
    database ids must not collide). `databases`: folders of `<db>/<db>.sqlite` for databases
    whose file is not next to their tables.json. `dialect`: the sqlglot dialect of the gold
    SQL."""
    files = [tables] if isinstance(tables, Path) else list(tables)
    try:
        catalog = Catalog.merge(*(load_spider(f) for f in files))
    except SchemaGraphError as exc:
        raise BenchmarkDataError(str(exc)) from None
    catalog = _attach_databases(catalog, databases)
    return questions_over(catalog, questions, name=name, dialect=dialect)


def questions_over(
    catalog: Catalog, questions: Path, *, name: str | None = None, dialect: str = "sqlite"
) -> BenchDataset:
    """Questions of `questions` over `catalog`, read from any sources (`schemarag index build`'s
    source specs): a pool without a tables.json, such as a warehouse's INFORMATION_SCHEMA
    export. Gold tables are matched to the catalog's table ids."""
    rows = _read_json_list(questions)
    parsed: list[BenchQuestion] = []
    skipped: list[str] = []
    stand_ins: dict[str, dict[str, str]] = {}
    for i, row in enumerate(rows):
        where = f"{questions.name}[{i}]"
        text = next((row[k] for k in _QUESTION_KEYS if row.get(k)), None)
        sql = next((row[k] for k in _SQL_KEYS if isinstance(row.get(k), str)), None)
        db_id = row.get("db_id")
        given = row.get("gold_tables")
        if given is not None and (
            not isinstance(given, list) or not all(isinstance(t, str) for t in given)
        ):
            raise BenchmarkDataError(f"{where}: gold_tables must be a list of table names")
        if not text or not db_id or (not sql and given is None):
            raise BenchmarkDataError(
                f"{where}: needs a question, a db_id and a gold SQL (`query` or `SQL`) or "
                "`gold_tables`"
            )
        if db_id not in catalog:
            skipped.append(f"{where}: database {db_id!r} is not in the pool")
            continue
        db = catalog.database(db_id)
        sql = sql or ""
        try:
            names = frozenset(given) if given is not None else tables_in_sql(sql, dialect=dialect)
        except SqlError as exc:
            skipped.append(f"{where}: gold SQL does not parse: {exc}")
            continue
        hardness = _hardness(sql) if sql and dialect == "sqlite" else None
        if db.id not in stand_ins:
            stand_ins[db.id] = {name: f.last for name, f in family_index(db).items()}
        # a sharded family is one table, its newest member, as the index ranks it
        stand_in = stand_ins[db.id]
        gold = frozenset(
            (fold(db.id), fold(stand_in.get(fold(t), t))) for t in names if db.has_table(t)
        )
        if not gold:
            read = ", ".join(sorted(names)) or "nothing"
            skipped.append(
                f"{where}: the gold tables ({read}) are none of {db.id}'s tables "
                "(a view, or a table its tables.json lacks)"
            )
            continue
        engine = row.get("engine")
        engine = engine.strip().lower() if isinstance(engine, str) and engine.strip() else None
        parsed.append(BenchQuestion(str(text), sql, db.id, gold, hardness, engine))
    for reason in skipped:
        log.warning("skipped %s", reason)
    return BenchDataset(name or questions.stem, catalog, tuple(parsed), tuple(skipped))


def _hardness(sql: str) -> str | None:
    try:
        return str(spider_hardness(sql))
    except SqlError:
        return None


def _attach_databases(catalog: Catalog, folders: Sequence[Path]) -> Catalog:
    if not folders:
        return catalog
    databases = []
    for db in catalog:
        if db.path is None:
            for folder in folders:
                candidate = folder / db.id / f"{db.id}.sqlite"
                if candidate.is_file():
                    db = replace(db, path=candidate)
                    break
        databases.append(db)
    return Catalog(tuple(databases), catalog.problems)


def _read_json_list(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BenchmarkDataError(f"{path}: no such file") from None
    except json.JSONDecodeError as exc:
        raise BenchmarkDataError(
            f"{path}: malformed JSON at line {exc.lineno}: {exc.msg}"
        ) from None
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise BenchmarkDataError(f"{path}: expected a JSON list of objects")
    return data


def stratified_sample(
    questions: Sequence[BenchQuestion], size: int, seed: int
) -> list[BenchQuestion]:
    """`size` questions drawn without replacement, each hardness level in proportion to its
    share (largest remainders), shuffled per level by `random.Random(seed)`; in file order."""
    if size < 1:
        raise BenchmarkDataError(f"the sample size must be >= 1, got {size}")
    levels: dict[str, list[int]] = defaultdict(list)
    for i, question in enumerate(questions):
        levels[question.hardness or "unknown"].append(i)
    size = min(size, len(questions))
    exact = {level: size * len(ids) / len(questions) for level, ids in levels.items()}
    counts = {level: int(share) for level, share in exact.items()}
    by_remainder = sorted(exact, key=lambda level: (counts[level] - exact[level], level))
    for level in by_remainder[: size - sum(counts.values())]:
        counts[level] += 1
    rng = random.Random(seed)
    chosen: list[int] = []
    for level in sorted(levels):
        ids = list(levels[level])
        rng.shuffle(ids)
        chosen.extend(ids[: counts[level]])
    return [questions[i] for i in sorted(chosen)]
