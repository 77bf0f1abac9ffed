"""`schemarag sql run|check|eval|hardness|tables`: the SQL toolkit from the command line.

`run` executes one untrusted query safely (see `schemagraph.sql.execute`) and exits 1 when it is
refused, times out or fails; `check` verifies a query's tables and columns against a catalog
without running it (`schemagraph.sql.check`; exit 1 when rejected); `eval` scores a predictions
file by execution accuracy; `hardness` and `tables` inspect a query without running it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from schemagraph.sources import resolve_url
from schemagraph.sql import (
    DEFAULT_LIMITS,
    CompareMode,
    EvalOptions,
    EvalReport,
    Limits,
    QueryError,
    QueryOutcome,
    QueryResult,
    classify_hardness,
    close_engines,
    evaluate_files,
    execute,
    hardness_counts,
    live_engine,
    tables_in_sql,
)
from schemarag.cli.common import UsageError, add_command, add_output, load, print_json
from schemarag.samples import SAMPLE_SOURCE

MAX_CELL_CHARS = 60
GOLD_ERRORS_SHOWN = 10


def register(sub: argparse._SubParsersAction) -> None:
    sql = add_command(sub, "sql")
    sql_sub = sql.add_subparsers(dest="sql_command", metavar="COMMAND", required=True)
    _register_run(sql_sub)
    _register_check(sql_sub)
    _register_eval(sql_sub)
    hardness = sql_sub.add_parser("hardness", help="Spider hardness of a query (not run)")
    hardness.add_argument("sql", metavar="SQL", help="the query ('-' reads stdin)")
    hardness.add_argument("--json", action="store_true", help="print JSON")
    hardness.set_defaults(func=cmd_hardness)
    tables = sql_sub.add_parser("tables", help="tables a query reads (not run)")
    tables.add_argument("sql", metavar="SQL", help="the query ('-' reads stdin)")
    tables.set_defaults(func=cmd_tables)


def _register_run(sql_sub: argparse._SubParsersAction) -> None:
    run = sql_sub.add_parser(
        "run", help="run one read-only query on an SQLite file or a database server"
    )
    target = run.add_mutually_exclusive_group(required=True)
    target.add_argument("--db", metavar="PATH", help="the SQLite database file")
    target.add_argument(
        "--url",
        metavar="URL",
        help="a database URL (postgresql://USER@HOST/DB, duckdb:///FILE) or env:NAME, the "
        "variable holding it; the query is written in the server's SQL",
    )
    run.add_argument(
        "--schema",
        metavar="S",
        help="with --url: the schema unqualified table names are looked up in",
    )
    run.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_LIMITS.timeout_s,
        metavar="S",
        help=f"time limit in seconds (default {DEFAULT_LIMITS.timeout_s:g})",
    )
    run.add_argument(
        "--max-rows",
        type=int,
        default=DEFAULT_LIMITS.max_rows,
        metavar="N",
        help=f"most rows returned (default {DEFAULT_LIMITS.max_rows})",
    )
    run.add_argument(
        "--max-value-bytes",
        type=int,
        default=DEFAULT_LIMITS.max_value_bytes,
        metavar="N",
        help=f"longer text/blob values are cut (default {DEFAULT_LIMITS.max_value_bytes})",
    )
    run.add_argument("--json", action="store_true", help="print JSON")
    run.add_argument("sql", metavar="SQL", help="the query ('-' reads stdin)")
    run.set_defaults(func=cmd_run)


def _register_check(sql_sub: argparse._SubParsersAction) -> None:
    check = sql_sub.add_parser(
        "check",
        help="verify a query's tables and columns against the catalog (not run)",
        epilog="Exit status: 0 accepted, 1 rejected (one line per problem: kind, the name at "
        "fault and the nearest real names), 2 bad input (an unknown database, a source that "
        "cannot be read, no SQL).",
    )
    check.add_argument("--db", required=True, metavar="ID", help="the database the query is for")
    check.add_argument(
        "--source",
        action="append",
        metavar="KIND:PATH",
        help=f"catalog source, repeatable (default: the bundled sample, {SAMPLE_SOURCE})",
    )
    check.add_argument("--json", action="store_true", help="print JSON")
    check.add_argument(
        "sql", metavar="SQL", help="the query, in the database's dialect ('-' reads stdin)"
    )
    check.set_defaults(func=cmd_check)


def _register_eval(sql_sub: argparse._SubParsersAction) -> None:
    defaults = EvalOptions()
    ev = sql_sub.add_parser("eval", help="execution accuracy of predictions against gold SQL")
    ev.add_argument("--gold", required=True, metavar="FILE", help="lines of 'SQL<TAB>db_id'")
    ev.add_argument("--pred", required=True, metavar="FILE", help="one predicted SQL per line")
    ev.add_argument(
        "--db-dir", required=True, metavar="DIR", help="Spider-style DIR/<db_id>/<db_id>.sqlite"
    )
    ev.add_argument(
        "--mode",
        choices=[m.value for m in CompareMode],
        default=defaults.mode.value,
        help="result comparison: spider test-suite (default), bird sets, relaxed columns",
    )
    add_output(ev, "--json", metavar="OUT", help="also write the JSON report to OUT")
    ev.add_argument(
        "--timeout",
        type=float,
        default=defaults.timeout_s,
        metavar="S",
        help=f"time limit per query in seconds (default {defaults.timeout_s:g})",
    )
    ev.add_argument(
        "--workers",
        type=int,
        default=defaults.workers,
        metavar="N",
        help=f"questions evaluated in parallel (default {defaults.workers})",
    )
    ev.add_argument(
        "--keep-distinct",
        action="store_true",
        help="spider mode: keep DISTINCT (the official default removes it)",
    )
    ev.add_argument(
        "--skip-missing-db",
        action="store_true",
        help="leave out questions whose database file is missing instead of failing",
    )
    ev.set_defaults(func=cmd_eval)


def cmd_run(args: argparse.Namespace) -> int:
    if args.url is None:
        if args.schema is not None:
            raise UsageError("--schema goes with --url: an SQLite file has one schema")
        outcome = execute(
            Path(args.db),
            _read_sql(args.sql),
            timeout_s=args.timeout,
            max_rows=args.max_rows,
            max_value_bytes=args.max_value_bytes,
        )
    else:
        limits = Limits(args.timeout, args.max_rows, args.max_value_bytes)
        engine = live_engine(resolve_url(args.url, os.environ), args.schema)
        try:
            outcome = engine.run(_read_sql(args.sql), limits)
        finally:
            close_engines()
    if args.json:
        print_json(outcome_json(outcome))
    elif isinstance(outcome, QueryResult):
        print(format_table(outcome))
    else:
        rule = f" ({outcome.rule.value})" if outcome.rule else ""
        print(f"schemarag: {outcome.kind.value}{rule}: {outcome.message}", file=sys.stderr)
    return 0 if isinstance(outcome, QueryResult) else 1


def cmd_check(args: argparse.Namespace) -> int:
    from schemagraph.sql.check import check_sql

    sql = _read_sql(args.sql)
    if not sql.strip():
        raise UsageError("the SQL is empty: pass one query, or '-' to read it from stdin")
    catalog = load(args.source or [SAMPLE_SOURCE])
    result = check_sql(catalog.database(args.db), sql, catalog)
    if args.json:
        print_json(result.as_dict())
    else:
        print("\n".join(result.lines()))
    return 0 if result.ok else 1


def cmd_eval(args: argparse.Namespace) -> int:
    options = EvalOptions(
        mode=CompareMode(args.mode),
        timeout_s=args.timeout,
        workers=args.workers,
        keep_distinct=args.keep_distinct,
        skip_missing_db=args.skip_missing_db,
    )
    report = evaluate_files(args.gold, args.pred, args.db_dir, options)
    _print_gold_errors(report)
    print(format_report(report))
    if args.json:
        Path(args.json).write_text(json.dumps(report.to_json(), indent=2) + "\n", encoding="utf-8")
    return 0


def cmd_hardness(args: argparse.Namespace) -> int:
    counts = hardness_counts(_read_sql(args.sql))
    level = classify_hardness(counts)
    if args.json:
        print_json(
            {
                "hardness": level.value,
                "component1": counts.component1,
                "component2": counts.component2,
                "others": counts.others,
            }
        )
    else:
        print(
            f"{level.value} (component1={counts.component1}, component2={counts.component2}, "
            f"others={counts.others})"
        )
    return 0


def cmd_tables(args: argparse.Namespace) -> int:
    for name in sorted(tables_in_sql(_read_sql(args.sql))):
        print(name)
    return 0


def outcome_json(outcome: QueryOutcome) -> dict[str, Any]:
    """A JSON-ready view of a query outcome (blobs as x'hex' strings)."""
    if isinstance(outcome, QueryError):
        return {
            "ok": False,
            "kind": outcome.kind.value,
            "rule": outcome.rule.value if outcome.rule else None,
            "message": outcome.message,
            "elapsed_ms": round(outcome.elapsed_ms, 3),
        }
    return {
        "ok": True,
        "columns": list(outcome.columns),
        "rows": [[_json_value(v) for v in row] for row in outcome.rows],
        "truncated": outcome.truncated,
        "values_truncated": outcome.values_truncated,
        "elapsed_ms": round(outcome.elapsed_ms, 3),
    }


def format_table(result: QueryResult) -> str:
    """Rows as an aligned text table with a one-line footer."""
    header = [str(c) for c in result.columns]
    body = [[_cell(v) for v in row] for row in result.rows]
    widths = [max([len(h)] + [len(r[i]) for r in body]) for i, h in enumerate(header)]
    lines = [
        "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip(),
        "  ".join("-" * w for w in widths),
    ]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in body]
    notes = [f"{len(result.rows)} row{'s' if len(result.rows) != 1 else ''}"]
    if result.truncated:
        notes.append("truncated at --max-rows")
    if result.values_truncated:
        notes.append("long values cut")
    notes.append(f"{result.elapsed_ms:.1f} ms")
    lines.append(f"({', '.join(notes)})")
    return "\n".join(lines)


def format_report(report: EvalReport) -> str:
    """Accuracy overall and by hardness, as a small table."""
    lines = [
        f"mode {report.mode.value}: {report.count} questions, {report.gold_errors} gold errors, "
        f"{report.skipped_missing_db} skipped (database missing)",
        f"{'level':<8} {'count':>6} {'accuracy':>9}",
    ]
    for level, score in report.by_hardness.items():
        lines.append(f"{level:<8} {score.count:>6} {score.execution_accuracy:>9.2f}")
    lines.append(f"{'all':<8} {report.count:>6} {report.execution_accuracy:>9.2f}")
    return "\n".join(lines)


def _print_gold_errors(report: EvalReport) -> None:
    failed = [case for case in report.cases if case.gold_error is not None]
    for case in failed[:GOLD_ERRORS_SHOWN]:
        print(
            f"schemarag: warning: gold line {case.line} ({case.db_id}): {case.gold_error}",
            file=sys.stderr,
        )
    if len(failed) > GOLD_ERRORS_SHOWN:
        print(f"schemarag: warning: ... {len(failed)} gold errors in all", file=sys.stderr)


def _read_sql(value: str) -> str:
    return sys.stdin.read() if value == "-" else value


def _cell(value: Any) -> str:
    text = "NULL" if value is None else str(_json_value(value))
    text = text.replace("\n", "\\n")
    return text if len(text) <= MAX_CELL_CHARS else text[: MAX_CELL_CHARS - 1] + "…"


def _json_value(value: Any) -> Any:
    return f"x'{value.hex()}'" if isinstance(value, bytes) else value
