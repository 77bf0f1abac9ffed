"""End-to-end execution accuracy on a benchmark (Spider dev): generation with a real LLM,
scored with the SQL toolkit's execution-accuracy rules, overall and by hardness, with tokens
and cost per question.

Settings, each run over the same questions:

- `gold-tables`: the gold database with only the gold SQL's tables (the "gold schema given"
  setting the papers report);
- `gold-database`: the gold database with all its tables (the usual Spider setting);
- `retrieved`: the retriever chooses the database, its tables and few-shot examples; a
  question whose database is not found (wrong database, or abstention) counts as wrong.

Tokens per question count every call, those answered from a cache (`bench ex --cache`) at what
they cost when made; seconds are wall time, so cached calls take none. The report names its
questions (`question_ids`, with `--sample` a subset stratified by hardness) and keeps each one's
prediction and verdict; an actor-critic run also measures the critic's p, q and s
(`critic_rates`).

Questions whose database has no SQLite file are left out. A generation that fails (the
provider errors, the prompt cannot fit) counts as a wrong prediction and is reported.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from evaluation.datasets import BenchDataset, BenchQuestion, stratified_sample
from generator.critic import expected_accuracy
from generator.errors import GeneratorConfigError, GeneratorError
from generator.service import GenerateRequest, SchemaRetriever, generate
from generator.strategies import GenerationConfig, GenerationResult, Models, generate_sql
from providers import Price, ProviderError, UsageMeter
from schemagraph.model import fold
from schemagraph.sql import EvalCase, EvalOptions, evaluate_cases

log = logging.getLogger(__name__)

SETTINGS = ("gold-tables", "gold-database", "retrieved")


def run_ex_bench(
    dataset: BenchDataset,
    db_dir: Path,
    models: Models,
    config: GenerationConfig,
    *,
    prices: Mapping[str, Price],
    settings: Sequence[str] = ("gold-tables", "gold-database"),
    retriever: SchemaRetriever | None = None,
    limit: int | None = None,
    sample: int | None = None,
    seed: int = 0,
    progress: Callable[[str, int, int], None] | None = None,
) -> dict[str, Any]:
    """Generate and score every question in every setting (see the module docstring): the
    first `limit`, or a `sample` stratified by hardness (`stratified_sample`)."""
    unknown = [s for s in settings if s not in SETTINGS]
    if unknown:
        raise GeneratorConfigError(f"unknown setting(s) {unknown}; choose from {SETTINGS}")
    if "retrieved" in settings and retriever is None:
        raise GeneratorConfigError("the retrieved setting needs a knowledge base (--store)")
    questions = [
        q
        for q in dataset.questions
        if q.db_id in dataset.catalog and dataset.catalog.database(q.db_id).path is not None
    ]
    left_out = len(dataset.questions) - len(questions)
    positions = {id(q): i for i, q in enumerate(dataset.questions)}
    if limit is not None:
        questions = questions[:limit]
    if sample is not None:
        questions = stratified_sample(questions, sample, seed)
    report: dict[str, Any] = {
        "dataset": dataset.name,
        "strategy": config.strategy,
        "llms": [llm.name for llm in models.generators],
        "critic": models.judge.name,
        "questions": len(questions),
        "left_out_no_database_file": left_out,
        "sample": {"size": sample, "seed": seed} if sample is not None else None,
        #: positions in the dataset's question file (0-based), so the subset can be reproduced
        "question_ids": [positions[id(q)] for q in questions],
        "settings": {},
    }
    for setting in settings:
        started = time.perf_counter()
        report["settings"][setting] = _run_setting(
            setting, questions, dataset, db_dir, models, config, prices, retriever, progress
        )
        report["settings"][setting]["seconds"] = round(time.perf_counter() - started, 1)
    return report


def _run_setting(
    setting: str,
    questions: Sequence[BenchQuestion],
    dataset: BenchDataset,
    db_dir: Path,
    models: Models,
    config: GenerationConfig,
    prices: Mapping[str, Price],
    retriever: SchemaRetriever | None,
    progress: Callable[[str, int, int], None] | None,
) -> dict[str, Any]:
    cases: list[EvalCase] = []
    tokens: list[int] = []
    costs: list[float] = []
    seconds: list[float] = []
    calls = [0, 0]  # made, of which answered from the cache
    errors: list[str] = []
    right_db = 0
    chosen: list[str | None] = []
    wrong_db: list[bool] = []
    attempts: list[tuple[int, int, str, str]] = []  # (question, attempt, sql, verdict)
    for number, question in enumerate(questions, 1):
        meter = UsageMeter(prices)
        started = time.perf_counter()
        try:
            sql, db_id, generation = _predict(
                setting, question, dataset, models, config, retriever, meter
            )
        except (GeneratorError, ProviderError) as exc:
            log.warning("question %d (%s): %s", number, setting, exc)
            errors.append(f"{number}: {exc}")
            sql, db_id, generation = None, None, None
        if generation is not None and generation.actor_critic is not None:
            attempts.extend(
                (number, a.number, a.candidate.sql or "", a.verdict)
                for a in generation.actor_critic.attempts
            )
        chosen.append(db_id)
        right_db += db_id is not None and fold(db_id) == fold(question.db_id)
        wrong_db.append(db_id is not None and fold(db_id) != fold(question.db_id))
        if wrong_db[-1]:
            sql = None  # the query runs on the wrong database: wrong, whatever it returns
        cases.append(EvalCase(number, question.sql, question.db_id, " ".join((sql or "").split())))
        total = meter.report()["total"]
        tokens.append(
            total["input_tokens"]
            + total["output_tokens"]
            + total["cache_read_tokens"]
            + total["cache_write_tokens"]
            + total["replayed_tokens"]
        )
        calls[0] += total["calls"]
        calls[1] += total["cached_calls"]
        costs.append(meter.total_cost())
        seconds.append(time.perf_counter() - started)
        if progress is not None:
            progress(setting, number, len(questions))
    evaluation = evaluate_cases(cases, db_dir, EvalOptions(skip_missing_db=True)).to_json()
    count = max(len(questions), 1)
    by_level: dict[str, list[int]] = defaultdict(list)
    for case in evaluation["cases"]:
        by_level[case["hardness"]].append(tokens[case["line"] - 1])
    result = {
        "execution_accuracy": evaluation["execution_accuracy"],
        "count": evaluation["count"],
        "by_hardness": evaluation["by_hardness"],
        "tokens_per_question": round(sum(tokens) / count, 1),
        "tokens_per_question_by_hardness": {
            level: round(sum(v) / len(v), 1) for level, v in sorted(by_level.items())
        },
        "cost_per_question_usd": round(sum(costs) / count, 6),
        "seconds_per_question": round(sum(seconds) / count, 2),
        "calls_per_question": round(calls[0] / count, 2),
        "cached_calls": calls[1],
        "generation_errors": len(errors),
        "errors": errors[:20],
        #: every question's prediction and verdict (in the order of `question_ids`), to study
        #: failures without re-running
        "per_question": [
            {
                "hardness": case["hardness"],
                "predicted": prediction.pred_sql,
                "correct": case["correct"],
                "pred_error": "wrong database"
                if wrong_db[case["line"] - 1]
                else case["pred_error"],
                # the database the SQL was written for (the retriever's choice when retrieved)
                "database": chosen[case["line"] - 1],
                "tokens": tokens[case["line"] - 1],
                "seconds": round(seconds[case["line"] - 1], 2),
            }
            for case, prediction in zip(evaluation["cases"], cases, strict=True)
        ],
    }
    if attempts:
        result["actor_critic"] = critic_rates(attempts, questions, db_dir, config)
    if setting == "retrieved":
        result["database_accuracy"] = round(100 * right_db / count, 2)
    return result


def critic_rates(
    attempts: Sequence[tuple[int, int, str, str]],
    questions: Sequence[BenchQuestion],
    db_dir: Path,
    config: GenerationConfig,
) -> dict[str, Any]:
    """AC-SQL's parameters measured as the paper does, from the loop's own attempts: p is the
    accuracy of the first attempt; q the share of wrong checked attempts the critics accepted;
    s the share of correct checked attempts they rejected. Theorem 1's prediction from them
    (`generator.critic.expected_accuracy`, z = the configured attempts) sits beside the
    measured EX."""
    cases = [
        EvalCase(i, questions[number - 1].sql, questions[number - 1].db_id, " ".join(sql.split()))
        for i, (number, _, sql, _) in enumerate(attempts, 1)
    ]
    verdicts = evaluate_cases(cases, db_dir, EvalOptions(skip_missing_db=True)).cases
    first = [v.correct for v, a in zip(verdicts, attempts, strict=True) if a[1] == 1]
    checked = [
        (v.correct, a[3]) for v, a in zip(verdicts, attempts, strict=True) if a[3] != "unchecked"
    ]
    wrong = [verdict for correct, verdict in checked if not correct]
    right = [verdict for correct, verdict in checked if correct]
    p = sum(first) / len(first) if first else 0.0
    q = wrong.count("accepted") / len(wrong) if wrong else 0.0
    s = right.count("rejected") / len(right) if right else 0.0
    z = config.actor_critic.attempts
    return {
        "p": round(p, 4),
        "q": round(q, 4),
        "s": round(s, 4),
        "z": z,
        "checked_wrong": len(wrong),
        "checked_correct": len(right),
        "attempts": len(attempts),
        "theorem_1_expected_accuracy": round(100 * expected_accuracy(p, q, s, z), 2),
    }


def _predict(
    setting: str,
    question: BenchQuestion,
    dataset: BenchDataset,
    models: Models,
    config: GenerationConfig,
    retriever: SchemaRetriever | None,
    meter: UsageMeter,
) -> tuple[str | None, str | None, GenerationResult | None]:
    """The predicted SQL, the database it was written for and the generation."""
    if setting == "retrieved":
        request = GenerateRequest(question.question, strategy=config.strategy)
        result = generate(
            request,
            catalog=dataset.catalog,
            models=models,
            config=config,
            retriever=retriever,
            meter=meter,
        )
        generation = result.generation
        return (result.sql, generation.db_id if generation is not None else None, generation)
    db = dataset.catalog.database(question.db_id)
    tables = None
    if setting == "gold-tables":
        gold = {table for db_key, table in question.gold if db_key == fold(db.id)}
        tables = [t.name for t in db.tables if fold(t.name) in gold] or None
    generation = generate_sql(
        question.question, db, models, tables=tables, config=config, meter=meter
    )
    return generation.sql, db.id, generation


def table_lines(report: dict[str, Any]) -> list[str]:
    """A markdown table: accuracy by hardness, tokens and cost per question, per setting."""
    lines = [
        "| setting | easy | medium | hard | extra | all | count | tokens/q | s/q | USD/q |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, row in report["settings"].items():
        levels = row["by_hardness"]
        cells = [
            f"{levels.get(k, {}).get('execution_accuracy', 0.0):.1f}"
            for k in ("easy", "medium", "hard", "extra")
        ]
        lines.append(
            f"| {name} | {' | '.join(cells)} | {row['execution_accuracy']:.1f} | {row['count']} | "
            f"{row['tokens_per_question']:.0f} | {row['seconds_per_question']:.1f} | "
            f"{row['cost_per_question_usd']:.5f} |"
        )
    return lines
