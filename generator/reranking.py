"""Test-case re-ranking (Li & Xie, "Using LLM to select the right SQL query from candidates").

1. Candidates that ran on the real database are grouped by result (`voting.result_groups`);
   one group means nothing to decide.
2. Small test databases are built (`testdb`: random FK-preserving selection, then fuzzing, in
   turn, each with its own derived seed). Every runnable candidate runs on each one. A test
   database on which no two still-undistinguished groups differ tells nothing and is skipped
   without calling the LLM.
3. For a useful one, the LLM sees the question, the schema and the whole test database (JSON
   rows in a `<data>` block) and predicts the expected result as JSON. A candidate passes when
   its result matches the prediction under the relaxed rule (`relaxed_result_eq`: the same
   rows, one side's columns a subset of the other's; floats to 4 decimals).
4. Test databases are added until every pair of groups has been told apart by a test with a
   usable prediction, or `max_tests` predictions or `max_builds` builds are reached.
5. Candidates are ranked by passes, then by generation log-probability where the provider gives
   it, then by the size of their group on the real database, then by generation order.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.calls import CallOptions, call
from generator.errors import GeneratorConfigError
from generator.execution import Executed, Runner, sqlite_runner
from generator.testdb import METHODS, TestDatabase, build_test_database
from generator.text import DATA_RULE, clip, data_block
from generator.voting import Selection, first_with_sql, result_groups
from providers import LLM, UsageMeter, extract_json
from schemagraph import Database
from schemagraph.seeds import derive_seed
from schemagraph.sql import Limits, QueryOutcome, QueryResult, relaxed_result_eq

log = logging.getLogger(__name__)

METHOD = "test-case re-ranking"
PREDICT_SYSTEM = (
    "You work out, by hand, what the correct SQL query for a question would return on a small "
    "database whose full contents you are given. " + DATA_RULE
)
PREDICT_INSTRUCTION = (
    "What exact result should a correct SQL query for the question return on this database? "
    'Reply with JSON only: {"columns": [...], "rows": [[...], ...]}.'
)
TEST_LIMITS = Limits(timeout_s=2.0, max_rows=200, max_value_bytes=2000)

RunnerFactory = Callable[[Path], Runner]


@dataclass(frozen=True)
class TestCaseConfig:
    """`max_tests`: predictions asked for at most; `max_builds`: test databases built at most;
    `max_rows`: rows per table of a test database; `methods` are tried in turn."""

    __test__ = False

    max_tests: int = 3
    max_builds: int = 8
    max_rows: int = 5
    methods: tuple[str, ...] = METHODS
    max_value_chars: int = 40
    max_data_chars: int = 12_000
    max_schema_chars: int = 8_000
    max_tokens: int = 512
    seed: int = 0

    def __post_init__(self) -> None:
        if self.max_tests < 1:
            raise GeneratorConfigError(f"max_tests must be >= 1, got {self.max_tests}")
        if self.max_builds < self.max_tests:
            raise GeneratorConfigError(
                f"max_builds must be >= max_tests ({self.max_tests}), got {self.max_builds}"
            )
        if not self.methods or any(m not in METHODS for m in self.methods):
            raise GeneratorConfigError(f"methods must be drawn from {METHODS}, got {self.methods}")


def predict_prompt(question: str, schema: str, test: TestDatabase, config: TestCaseConfig) -> str:
    return "\n\n".join(
        [
            "### Question",
            data_block("question", question, 2000),
            "### Schema",
            data_block("schema", schema, config.max_schema_chars),
            "### Database contents (one JSON line per table)",
            data_block("data", test.render(), config.max_data_chars),
            "### Task",
            PREDICT_INSTRUCTION,
        ]
    )


def parse_expected(reply: str) -> list[tuple[Any, ...]] | None:
    """Rows of a predicted result: `{"rows": [[...]]}`, `[[...]]`, or `[x, y]` (one column);
    None when the reply holds none of these."""
    try:
        value = extract_json(reply)
    except ValueError:
        return None
    if isinstance(value, dict):
        value = value.get("rows", value.get("result"))
    if not isinstance(value, list):
        return None
    rows: list[tuple[Any, ...]] = []
    for row in value:
        cells = row if isinstance(row, list) else [row]
        rows.append(tuple(_scalar(v) for v in cells))
    return rows


def same_result(predicted: Sequence[Sequence[Any]], rows: Sequence[Sequence[Any]]) -> bool:
    """The relaxed comparison on normalized values (see the module docstring)."""
    return relaxed_result_eq(_normalized(predicted), _normalized(rows), order_matters=False)


def rerank_by_tests(
    question: str,
    db: Database,
    executed: Sequence[Executed],
    llm: LLM,
    *,
    schema: str,
    config: TestCaseConfig | None = None,
    meter: UsageMeter | None = None,
    runner_factory: RunnerFactory | None = None,
) -> Selection:
    """The best candidate by test cases (see the module docstring)."""
    config = config or TestCaseConfig()
    make_runner = runner_factory or (lambda path: sqlite_runner(path, TEST_LIMITS))
    groups = result_groups(executed)
    if not groups:
        return first_with_sql(executed, METHOD, "no candidate ran; returning the first with SQL")
    group_of = {p: g for g, members in enumerate(groups) for p in members}
    runnable = sorted(group_of)
    passes = {p: 0 for p in runnable}
    tests: list[dict[str, Any]] = []
    open_pairs = {(a, b) for a in range(len(groups)) for b in range(a + 1, len(groups))}
    builds = skipped = 0
    if open_pairs:
        with tempfile.TemporaryDirectory(prefix="schemarag-tests-") as folder:
            while open_pairs and len(tests) < config.max_tests and builds < config.max_builds:
                method = config.methods[builds % len(config.methods)]
                seed = derive_seed(config.seed, "testcase", db.id, question, builds)
                builds += 1
                test = build_test_database(
                    db,
                    Path(folder),
                    method,
                    seed,
                    max_rows=config.max_rows,
                    max_value_chars=config.max_value_chars,
                )
                run = make_runner(test.path)
                outcomes = {p: _run(run, executed[p]) for p in runnable}
                split = {
                    (a, b)
                    for a, b in open_pairs
                    if _differ(outcomes[groups[a][0]], outcomes[groups[b][0]])
                }
                if not split:
                    skipped += 1
                    continue
                completion = call(
                    llm,
                    PREDICT_SYSTEM,
                    predict_prompt(question, schema, test, config),
                    stage="testcase",
                    meter=meter,
                    options=CallOptions(temperature=0.0, max_tokens=config.max_tokens),
                )
                predicted = parse_expected(completion.text)
                passed = []
                if predicted is not None:
                    open_pairs -= split
                    for p, outcome in outcomes.items():
                        if isinstance(outcome, QueryResult) and same_result(
                            predicted, outcome.rows
                        ):
                            passes[p] += 1
                            passed.append(executed[p].candidate.index)
                tests.append(
                    {
                        "method": method,
                        "rows": test.row_count,
                        "prediction": predicted is not None,
                        "reply": clip(completion.text, 200),
                        "passed": passed,
                    }
                )
    sizes = {p: len(groups[group_of[p]]) for p in runnable}
    ranking = sorted(
        runnable,
        key=lambda p: (
            -passes[p],
            -_logprob(executed[p]),
            -sizes[p],
            p,
        ),
    )
    best = ranking[0]
    if len(groups) == 1:
        reason = "every runnable candidate returns the same result"
    else:
        reason = f"passed {passes[best]} of {len(tests)} test case(s)"
    details = {
        "groups": [[executed[p].candidate.index for p in g] for g in groups],
        "tests": tests,
        "skipped_tests": skipped,
        "distinguished": not open_pairs,
        "ranking": [
            {"candidate": executed[p].candidate.index, "passes": passes[p]} for p in ranking
        ],
    }
    return Selection(METHOD, best, executed[best].candidate.sql, reason, details)


def _logprob(item: Executed) -> float:
    logprob = item.candidate.logprob
    return logprob if logprob is not None else float("-inf")


def _run(run: Runner, item: Executed) -> QueryOutcome | None:
    return run(item.candidate.sql) if item.candidate.sql is not None else None


def _differ(first: QueryOutcome | None, second: QueryOutcome | None) -> bool:
    if isinstance(first, QueryResult) and isinstance(second, QueryResult):
        return not same_result(first.rows, second.rows)
    return isinstance(first, QueryResult) != isinstance(second, QueryResult)


def _scalar(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def _normalized(rows: Sequence[Sequence[Any]]) -> list[tuple[Any, ...]]:
    return [tuple(_norm(v) for v in row) for row in rows]


def _norm(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, float):
        rounded = round(value, 4)
        return int(rounded) if rounded.is_integer() else rounded
    if isinstance(value, str):
        return value.strip()
    return value
