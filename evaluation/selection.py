"""Voting benchmark: how often each selector returns a correct query when one is present.

For each question (Spider dev on the databases whose files exist, or the bundled sample's
questions in `gold`), five simulated models each write one candidate: the gold query with
the model's accuracy for the question's Spider hardness (`MODELS`), otherwise a realistic
mutation of it (`mutations`: dropped condition, wrong aggregate, wrong join column, missing
DISTINCT, wrong ORDER direction, unknown column), drawn with "popular mistake" weights (1, 1/2,
1/4, ... over a per-question shuffle) so that models share errors as real ones do. Only
mutations whose result differs from the gold result count as wrong. Questions without a wrong
mutation, and candidate sets without a correct candidate, are left out (and counted).

The candidates run once through the safe executor; then every selector picks one:

- `first candidate`: model-a's query (the single best model, no selection);
- `random`: uniform (seeded);
- `naive vote`, `fine-grained vote` (voters per hardness: the three models most accurate at that
  level, as PET-SQL calibrates them; hardness from model-a's query as the PreSQL);
- `multi-sample critique` and `critique tournament` (pairs only): a scripted critic that picks a
  correct candidate with probability `critic_accuracy` when one is shown, else a wrong one;
- `test-case re-ranking`: a scripted oracle that rebuilds each test database from the prompt's
  data block, runs the gold query on it and answers the true result with probability
  `oracle_accuracy`, a perturbed one otherwise.

A pick is correct when its result equals the gold result under the Spider rule.
JSON: `{"selectors": {NAME: {"accuracy": x, "cases": n}}, "cases": n, "skipped": {...}, ...}`.
"""

from __future__ import annotations

import json
import random
import re
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluation.mutations import mutations
from generator.critique import CritiqueConfig, multi_sample_critique
from generator.errors import GeneratorConfigError
from generator.execution import Candidate, Executed, Runner, cached_runner, database_runner
from generator.linking import presql_hardness
from generator.reranking import TestCaseConfig, rerank_by_tests
from generator.testdb import parse_tables, write_rows
from generator.voting import (
    HARDNESS_LEVELS,
    Selection,
    VoterSets,
    fine_grained_vote,
    naive_vote,
    random_choice,
)
from providers import LLMRequest, ScriptedLLM
from schemagraph import Catalog, Database, create_table_text
from schemagraph.seeds import derive_seed
from schemagraph.sql import (
    QueryOutcome,
    QueryResult,
    SqlError,
    execute,
    gold_orders_rows,
    spider_hardness,
    spider_result_eq,
)

MODELS: dict[str, dict[str, float]] = {
    "model-a": {"easy": 0.85, "medium": 0.70, "hard": 0.45, "extra": 0.30},
    "model-b": {"easy": 0.80, "medium": 0.65, "hard": 0.55, "extra": 0.40},
    "model-c": {"easy": 0.70, "medium": 0.60, "hard": 0.60, "extra": 0.45},
    "model-d": {"easy": 0.60, "medium": 0.45, "hard": 0.35, "extra": 0.25},
    "model-e": {"easy": 0.50, "medium": 0.40, "hard": 0.25, "extra": 0.35},
}
"""Simulated models: probability of writing the gold query, by Spider hardness."""

SELECTORS = (
    "first candidate",
    "random",
    "naive vote",
    "fine-grained vote",
    "multi-sample critique",
    "critique tournament",
    "test-case re-ranking",
)

_CANDIDATE = re.compile(r"### Candidate (\d+)\n\n<sql>\n(.*?)\n</sql>", re.DOTALL)
_DATA = re.compile(r"<data>\n(.*?)\n</data>", re.DOTALL)


@dataclass(frozen=True)
class BenchCase:
    db_id: str
    question: str
    gold: str


@dataclass
class _Knowledge:
    """What the scripted judges know about the case at hand (set before each case)."""

    gold: str = ""
    db: Database | None = None
    correct: set[str] = field(default_factory=set)


def voter_sets(models: dict[str, dict[str, float]] = MODELS, size: int = 3) -> VoterSets:
    """The `size` most accurate models per hardness level."""
    return VoterSets(
        {
            level: tuple(sorted(models, key=lambda m: (-models[m][level], m))[:size])
            for level in HARDNESS_LEVELS
        }
    )


def scripted_critic(accuracy: float, rng: random.Random, knowledge: _Knowledge) -> ScriptedLLM:
    """Picks a shown correct candidate with probability `accuracy` (see the module docstring)."""

    def reply(request: LLMRequest) -> str:
        shown = _CANDIDATE.findall(request.messages[-1].content)
        good = [int(n) for n, sql in shown if sql.strip() in knowledge.correct]
        bad = [int(n) for n, sql in shown if sql.strip() not in knowledge.correct]
        right = rng.random() < accuracy  # one draw per call, whatever is shown
        pool = good if (good and right) or not bad else bad
        choice = rng.choice(pool)
        return rng.choice(('{"best": %d}', "Candidate %d is correct.", "%d")) % choice

    return ScriptedLLM(reply, model="critic")


def scripted_oracle(
    accuracy: float, rng: random.Random, knowledge: _Knowledge, folder: Path
) -> ScriptedLLM:
    """Predicts the gold result on the test database in its prompt, right with `accuracy`."""
    counter = [0]

    def reply(request: LLMRequest) -> str:
        db = knowledge.db
        assert db is not None and db.path is not None
        found = _DATA.search(request.messages[-1].content)
        tables = parse_tables(found.group(1)) if found else []
        counter[0] += 1
        path = folder / f"oracle-{counter[0]}.sqlite"
        write_rows(db.path, db, tables, path)
        outcome = execute(path, knowledge.gold, timeout_s=2.0, max_rows=200)
        path.unlink()
        rows = [list(r) for r in outcome.rows] if isinstance(outcome, QueryResult) else []
        if rng.random() >= accuracy:
            rows = _perturbed(rows, rng)
        return json.dumps({"rows": rows}, default=str)

    return ScriptedLLM(reply, model="oracle")


def _perturbed(rows: list[list[Any]], rng: random.Random) -> list[list[Any]]:
    if not rows:
        return [[1]]
    if len(rows) > 1 and rng.random() < 0.5:
        return rows[:-1]
    changed = [list(r) for r in rows]
    value = changed[0][0]
    changed[0][0] = value + 1 if isinstance(value, int | float) else f"{value}?"
    return changed


def run_voting_bench(
    catalog: Catalog,
    cases: Sequence[BenchCase],
    *,
    dataset: str,
    seed: int = 0,
    critic_accuracy: float = 0.7,
    oracle_accuracy: float = 0.8,
    limit: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Run every selector on every usable case (see the module docstring)."""
    for name, value in (("critic_accuracy", critic_accuracy), ("oracle_accuracy", oracle_accuracy)):
        if not 0.0 <= value <= 1.0:
            raise GeneratorConfigError(f"{name} must be in [0, 1], got {value}")
    chosen = list(cases)[:limit] if limit is not None else list(cases)
    knowledge = _Knowledge()
    critic = scripted_critic(critic_accuracy, random.Random(derive_seed(seed, "critic")), knowledge)
    pair_critic = scripted_critic(
        critic_accuracy, random.Random(derive_seed(seed, "pair critic")), knowledge
    )
    sets = voter_sets()
    wins: Counter[str] = Counter()
    skipped: Counter[str] = Counter()
    wrong_kinds: Counter[str] = Counter()
    correct_per_case: list[int] = []
    critique_modes: Counter[str] = Counter()
    judge_calls: Counter[str] = Counter()
    runners: dict[str, Runner] = {}
    used = 0
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="schemarag-oracle-") as folder:
        oracle = scripted_oracle(
            oracle_accuracy, random.Random(derive_seed(seed, "oracle")), knowledge, Path(folder)
        )
        for number, case in enumerate(chosen, 1):
            if progress is not None and (number % 50 == 0 or number == len(chosen)):
                progress(number, len(chosen))
            db = catalog.database(case.db_id)
            if db.id not in runners:
                runners[db.id] = cached_runner(database_runner(db))
            run = runners[db.id]
            built = _candidates(case, db, run, derive_seed(seed, "case", number))
            if isinstance(built, str):
                skipped[built] += 1
                continue
            executed, correct, kinds = built
            used += 1
            wrong_kinds.update(kinds)
            correct_per_case.append(sum(correct))
            knowledge.gold, knowledge.db = case.gold, db
            knowledge.correct = {
                e.candidate.sql.strip()
                for e, ok in zip(executed, correct, strict=True)
                if ok and e.candidate.sql
            }
            schema = create_table_text(db)
            picks = _select_all(
                case, db, executed, sets, (critic, pair_critic), oracle, schema, seed, number
            )
            for name, selection in picks.items():
                if selection.position is not None and correct[selection.position]:
                    wins[name] += 1
            critique_modes[str(picks["multi-sample critique"].details.get("mode", "no call"))] += 1
            for name in ("multi-sample critique", "critique tournament"):
                judge_calls[name] += int(picks[name].details.get("calls", 0))
            judge_calls["test-case re-ranking"] += len(
                picks["test-case re-ranking"].details.get("tests", ())
            )
    return {
        "selectors": {
            name: {"accuracy": round(wins[name] / used, 4) if used else 0.0, "cases": used}
            for name in SELECTORS
        },
        "cases": used,
        "skipped": dict(skipped),
        "dataset": dataset,
        "seed": seed,
        "critic_accuracy": critic_accuracy,
        "oracle_accuracy": oracle_accuracy,
        "models": MODELS,
        "voter_sets": {k: list(v) for k, v in sets.by_hardness.items()},
        "wrong_candidates_by_mutation": dict(wrong_kinds),
        "correct_candidates_per_case": dict(sorted(Counter(correct_per_case).items())),
        "multi_sample_critique_modes": dict(critique_modes),
        "judge_calls_per_case": {
            name: round(calls / used, 2) if used else 0.0 for name, calls in judge_calls.items()
        },
        "seconds": round(time.perf_counter() - started, 1),
    }


def _candidates(
    case: BenchCase, db: Database, run: Runner, seed: int
) -> tuple[list[Executed], list[bool], list[str]] | str:
    """The case's executed candidates, which are correct, and the mutation kinds used; or
    the reason the case is left out."""
    rng = random.Random(seed)
    gold = run(case.gold)
    if not isinstance(gold, QueryResult):
        return "gold query does not run"
    order = gold_orders_rows(case.gold)
    try:
        hardness = spider_hardness(case.gold).value
    except SqlError:
        return "gold query has no hardness"

    def is_correct(outcome: QueryOutcome | None) -> bool:
        return isinstance(outcome, QueryResult) and spider_result_eq(
            gold.rows, outcome.rows, order_matters=order
        )

    wrong = [m for m in mutations(case.gold, db, rng) if not is_correct(run(m.sql))]
    if not wrong:
        return "no mutation changes the result"
    rng.shuffle(wrong)
    weights = [0.5**rank for rank in range(len(wrong))]
    candidates: list[Candidate] = []
    kinds: list[str] = []
    for index, (name, accuracy) in enumerate(MODELS.items()):
        if rng.random() < accuracy[hardness]:
            sql = case.gold
        else:
            mistake = rng.choices(wrong, weights)[0]
            sql = mistake.sql
            kinds.append(mistake.kind)
        candidates.append(Candidate(index=index, sql=sql, llm=name))
    executed = [Executed(c, run(c.sql)) for c in candidates if c.sql is not None]
    correct = [is_correct(e.outcome) for e in executed]
    if not any(correct):
        return "no correct candidate"
    return executed, correct, kinds


def _select_all(
    case: BenchCase,
    db: Database,
    executed: list[Executed],
    sets: VoterSets,
    critics: tuple[ScriptedLLM, ScriptedLLM],
    oracle: ScriptedLLM,
    schema: str,
    seed: int,
    number: int,
) -> dict[str, Selection]:
    hardness = presql_hardness(executed[0].candidate.sql)
    return {
        "first candidate": Selection("first", 0, executed[0].candidate.sql, "model-a"),
        "random": random_choice(executed, derive_seed(seed, "random", number)),
        "naive vote": naive_vote(executed),
        "fine-grained vote": fine_grained_vote(executed, hardness, sets),
        "multi-sample critique": multi_sample_critique(critics[0], case.question, schema, executed),
        "critique tournament": multi_sample_critique(
            critics[1], case.question, schema, executed, config=CritiqueConfig(max_per_call=2)
        ),
        "test-case re-ranking": rerank_by_tests(
            case.question,
            db,
            executed,
            oracle,
            schema=schema,
            config=TestCaseConfig(seed=derive_seed(seed, "tests", number)),
        ),
    }


def table_lines(report: dict[str, Any]) -> list[str]:
    """A markdown table of the report."""
    lines = ["| selector | accuracy | cases |", "|---|---:|---:|"]
    for name, row in report["selectors"].items():
        lines.append(f"| {name} | {100 * row['accuracy']:.1f}% | {row['cases']} |")
    return lines
