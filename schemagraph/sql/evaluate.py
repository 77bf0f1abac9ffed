"""Execution accuracy of a predictions file against a Spider-format gold file.

Files: the gold file has one `SQL<TAB>db_id` per line, the predictions file one SQL per line
(anything after a tab is ignored), aligned line by line. Databases are found Spider-style:
`DB_DIR/<db_id>/<db_id>.sqlite`. Every query, gold or predicted, runs through the safe executor
(`execute.SqliteEngine`) with a per-query time limit.

Spider mode reproduces the test-suite evaluation (`evaluation.py --etype exec` with its default
flags) on one database per question: ` value ` in a prediction becomes ` 1 `; spaces inside
`> =`, `< =`, `! =` are removed; DISTINCT is deleted from both queries unless `keep_distinct`;
row order matters when the gold text contains `order by`; results compare with
`compare.spider_result_eq`. BIRD mode runs the SQL as given and compares row sets. Relaxed mode
is the test-case re-ranking match.

Deviations, on purpose: a gold query that fails, times out or returns more than `max_rows` rows
is reported in `gold_errors` and left out of the accuracy (the official script asserts), and a
question whose hardness cannot be computed is counted under "unknown".

JSON contract (`EvalReport.to_json`), stable for benchmarks and CI:
`{"execution_accuracy": 0-100, "count": n, "gold_errors": n,
  "by_hardness": {"easy": {"execution_accuracy": x, "count": n}, "medium": ..., "hard": ...,
  "extra": ...}}` plus extra keys (mode, correct, skipped, cases, ...).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import SqlglotError
from sqlglot.tokens import TokenType

from schemagraph.sql.compare import CompareMode, gold_orders_rows, results_match
from schemagraph.sql.errors import EvalInputError, LimitsError, SqlParseError
from schemagraph.sql.execute import ENGINE_MAX_LENGTH, Limits, QueryResult, SqliteEngine
from schemagraph.sql.hardness import Hardness, spider_hardness

log = logging.getLogger(__name__)

UNKNOWN_HARDNESS = "unknown"
LEVELS: tuple[str, ...] = tuple(level.value for level in Hardness)


@dataclass(frozen=True)
class EvalCase:
    """One question: its line number (1-based), gold SQL, database id and predicted SQL."""

    line: int
    gold_sql: str
    db_id: str
    pred_sql: str


@dataclass(frozen=True)
class EvalOptions:
    """How to evaluate; validated here so that a bad flag fails before anything runs."""

    mode: CompareMode = CompareMode.SPIDER
    timeout_s: float = 30.0
    max_rows: int = 1_000_000
    keep_distinct: bool = False
    workers: int = 2
    skip_missing_db: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "mode", CompareMode(self.mode))
        if self.workers < 1:
            raise LimitsError(f"workers must be >= 1, got {self.workers!r}")
        self.limits()  # validates timeout_s and max_rows

    def limits(self) -> Limits:
        return Limits(
            timeout_s=self.timeout_s, max_rows=self.max_rows, max_value_bytes=ENGINE_MAX_LENGTH
        )


@dataclass(frozen=True)
class CaseResult:
    """The verdict on one question. Not counted when `gold_error` is set."""

    line: int
    db_id: str
    hardness: str
    correct: bool
    gold_error: str | None = None
    pred_error: str | None = None

    @property
    def counted(self) -> bool:
        return self.gold_error is None

    def to_json(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "db_id": self.db_id,
            "hardness": self.hardness,
            "correct": self.correct,
            "gold_error": self.gold_error,
            "pred_error": self.pred_error,
        }


@dataclass(frozen=True)
class LevelScore:
    """Accuracy (0-100) over the counted questions of one hardness level."""

    execution_accuracy: float
    count: int
    correct: int


@dataclass(frozen=True)
class EvalReport:
    """Execution accuracy overall and by hardness, with every question's verdict."""

    execution_accuracy: float
    count: int
    correct: int
    gold_errors: int
    by_hardness: Mapping[str, LevelScore]
    mode: CompareMode
    skipped_missing_db: int
    cases: tuple[CaseResult, ...]

    def to_json(self) -> dict[str, Any]:
        """The stable JSON contract (see the module docstring), with extra keys."""
        return {
            "execution_accuracy": self.execution_accuracy,
            "count": self.count,
            "gold_errors": self.gold_errors,
            "by_hardness": {
                level: {"execution_accuracy": s.execution_accuracy, "count": s.count}
                for level, s in self.by_hardness.items()
            },
            "correct": self.correct,
            "mode": self.mode.value,
            "skipped_missing_db": self.skipped_missing_db,
            "cases": [case.to_json() for case in self.cases],
        }


def evaluate_files(
    gold_path: str | Path,
    pred_path: str | Path,
    db_dir: str | Path,
    options: EvalOptions | None = None,
) -> EvalReport:
    """Read, align and evaluate a gold file and a predictions file (see the module docstring)."""
    cases = load_cases(gold_path, pred_path)
    return evaluate_cases(cases, db_dir, options, gold_path=gold_path)


def load_cases(gold_path: str | Path, pred_path: str | Path) -> list[EvalCase]:
    """Aligned cases from the two files; `EvalInputError` if a file is bad or counts differ."""
    gold = read_gold_file(gold_path)
    preds = read_pred_file(pred_path)
    if len(gold) != len(preds):
        raise EvalInputError(
            f"{pred_path}: {len(preds)} predictions for {len(gold)} gold lines in {gold_path}"
        )
    return [
        EvalCase(line=index + 1, gold_sql=g_sql, db_id=db_id, pred_sql=pred)
        for index, ((g_sql, db_id), pred) in enumerate(zip(gold, preds, strict=True))
    ]


def read_gold_file(path: str | Path) -> list[tuple[str, str]]:
    """(SQL, db_id) per line of a Spider gold file; trailing blank lines are ignored."""
    lines = _read_lines(path)
    entries: list[tuple[str, str]] = []
    for number, line in enumerate(lines, start=1):
        sql, tab, db_id = line.strip().rpartition("\t")
        if not tab or not sql.strip() or not db_id.strip():
            raise EvalInputError(f"{path}:{number}: expected 'SQL<TAB>db_id', got {line[:60]!r}")
        entries.append((sql.strip(), db_id.strip()))
    return entries


def read_pred_file(path: str | Path) -> list[str]:
    """One predicted SQL per line (text after a tab dropped); a blank line is an empty SQL."""
    return [line.strip().split("\t")[0] for line in _read_lines(path)]


def evaluate_cases(
    cases: Sequence[EvalCase],
    db_dir: str | Path,
    options: EvalOptions | None = None,
    *,
    gold_path: str | Path = "gold",
) -> EvalReport:
    """Evaluate aligned cases against Spider-style databases under `db_dir`."""
    options = options or EvalOptions()
    engines = _engines(cases, Path(db_dir), gold_path, options.skip_missing_db)
    runnable = [case for case in cases if case.db_id in engines]
    log.info(
        "evaluating %d cases (%d skipped: missing db) with %d workers",
        len(runnable),
        len(cases) - len(runnable),
        options.workers,
    )
    with ThreadPoolExecutor(max_workers=options.workers) as pool:
        results = list(pool.map(lambda c: evaluate_case(c, engines[c.db_id], options), runnable))
    return summarize(results, options.mode, skipped_missing_db=len(cases) - len(runnable))


def evaluate_case(case: EvalCase, engine: SqliteEngine, options: EvalOptions) -> CaseResult:
    """Run gold and prediction on the case's database and compare them under `options.mode`."""
    gold_sql, pred_sql = prepare_pair(case.gold_sql, case.pred_sql, options)
    hardness = _hardness(case.gold_sql)
    limits = options.limits()
    gold = engine.run(gold_sql, limits)
    if not isinstance(gold, QueryResult):
        return CaseResult(case.line, case.db_id, hardness, False, gold_error=gold.message)
    if gold.truncated:
        message = f"gold result has more than {options.max_rows} rows"
        return CaseResult(case.line, case.db_id, hardness, False, gold_error=message)
    if not pred_sql.strip():
        return CaseResult(case.line, case.db_id, hardness, False, pred_error="empty prediction")
    pred = engine.run(pred_sql, limits)
    if not isinstance(pred, QueryResult):
        error = f"{pred.kind.value}: {pred.message}"
        return CaseResult(case.line, case.db_id, hardness, False, pred_error=error)
    if pred.truncated:
        error = f"prediction returned more than {options.max_rows} rows"
        return CaseResult(case.line, case.db_id, hardness, False, pred_error=error)
    order_matters = gold_orders_rows(gold_sql)
    correct = results_match(gold.rows, pred.rows, mode=options.mode, order_matters=order_matters)
    return CaseResult(case.line, case.db_id, hardness, correct)


def prepare_pair(gold_sql: str, pred_sql: str, options: EvalOptions) -> tuple[str, str]:
    """The SQL actually run, after the official test-suite preprocessing in Spider mode."""
    if options.mode is not CompareMode.SPIDER:
        return gold_sql, pred_sql
    pred_sql = pred_sql.replace(" value ", " 1 ")
    gold_sql, pred_sql = _fix_spaced_operators(gold_sql), _fix_spaced_operators(pred_sql)
    if not options.keep_distinct:
        gold_sql, pred_sql = remove_distinct(gold_sql), remove_distinct(pred_sql)
    return gold_sql, pred_sql


def remove_distinct(sql: str, *, dialect: str = "sqlite") -> str:
    """`sql` without its DISTINCT keywords (also inside COUNT), as the test-suite evaluation.

    Works on tokens, so quoted names and strings containing "distinct" are kept; SQL that does
    not tokenize is returned unchanged.
    """
    try:
        tokens = Dialect.get_or_raise(dialect).tokenize(sql)
    except SqlglotError:
        return sql
    spans = [(t.start, t.end + 1) for t in tokens if t.token_type == TokenType.DISTINCT]
    for start, end in reversed(spans):
        sql = sql[:start] + sql[end:]
    return sql


def summarize(
    results: Iterable[CaseResult], mode: CompareMode, *, skipped_missing_db: int = 0
) -> EvalReport:
    """Aggregate case verdicts into overall and per-hardness accuracy (0-100)."""
    cases = tuple(results)
    counted = [case for case in cases if case.counted]
    levels = list(LEVELS)
    if any(case.hardness == UNKNOWN_HARDNESS for case in counted):
        levels.append(UNKNOWN_HARDNESS)
    by_hardness = {
        level: _score([case for case in counted if case.hardness == level]) for level in levels
    }
    overall = _score(counted)
    return EvalReport(
        execution_accuracy=overall.execution_accuracy,
        count=overall.count,
        correct=overall.correct,
        gold_errors=len(cases) - len(counted),
        by_hardness=by_hardness,
        mode=mode,
        skipped_missing_db=skipped_missing_db,
        cases=cases,
    )


def database_path(db_dir: Path, db_id: str) -> Path:
    """Spider layout: `db_dir/<db_id>/<db_id>.sqlite`."""
    return db_dir / db_id / f"{db_id}.sqlite"


def _score(cases: Sequence[CaseResult]) -> LevelScore:
    correct = sum(1 for case in cases if case.correct)
    accuracy = round(100.0 * correct / len(cases), 4) if cases else 0.0
    return LevelScore(execution_accuracy=accuracy, count=len(cases), correct=correct)


def _engines(
    cases: Sequence[EvalCase], db_dir: Path, gold_path: str | Path, skip_missing: bool
) -> dict[str, SqliteEngine]:
    """One engine per db_id; `EvalInputError` for a missing database unless skipping."""
    if not db_dir.is_dir():
        raise EvalInputError(f"{db_dir}: no such database directory (<db_id>/<db_id>.sqlite)")
    engines: dict[str, SqliteEngine] = {}
    missing: set[str] = set()
    for case in cases:
        if case.db_id in engines or case.db_id in missing:
            continue
        path = database_path(db_dir, case.db_id)
        if path.is_file():
            engines[case.db_id] = SqliteEngine(path)
        elif skip_missing:
            log.info("skipping questions on %s: %s not found", case.db_id, path)
            missing.add(case.db_id)
        else:
            raise EvalInputError(
                f"{gold_path}:{case.line}: unknown db_id {case.db_id!r}: {path} not found"
            )
    return engines


def _hardness(gold_sql: str) -> str:
    try:
        return spider_hardness(gold_sql).value
    except SqlParseError:
        return UNKNOWN_HARDNESS


def _fix_spaced_operators(sql: str) -> str:
    return sql.replace("> =", ">=").replace("< =", "<=").replace("! =", "!=")


def _read_lines(path: str | Path) -> list[str]:
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise EvalInputError(f"{file}: no such file") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise EvalInputError(f"{file}: cannot read ({exc})") from exc
    lines = text.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    return lines
