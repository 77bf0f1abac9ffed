"""The SQL toolkit: run untrusted SQL safely, compare results, grade hardness, find tables.

Every package that touches generated SQL goes through here: the indexer validates synthesized
SQL by running it, the generator's critics and voters run candidates, the benchmarks compare
results. Modules, each named after what it does:

- `guard`     sqlglot allow-list: one read-only query, or a `Refusal` naming the rule;
- `execute`   `execute` / `SqliteEngine`: guard + `mode=ro` + authorizer + time, row and value
              limits; returns `QueryResult` or `QueryError`, never raises for a bad query;
- `live_engine` `LiveEngine` / `live_engine(url, schema)`: the same for a PostgreSQL server or a
              DuckDB file (guard in its dialect + read-only transaction or connection);
- `compare`   Spider test-suite, BIRD and relaxed (subset-of-columns) result equality;
- `hardness`  Spider hardness (easy / medium / hard / extra) from the sqlglot tree;
- `tables`    the tables a query reads (and the column names it uses);
- `evaluate`  execution accuracy of a predictions file, overall and by hardness;
- `errors`    `SqlError` and its subclasses, for user mistakes only.
"""

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from schemagraph.sql.compare import (
        CompareMode,
        bird_result_eq,
        gold_orders_rows,
        relaxed_result_eq,
        results_match,
        spider_result_eq,
    )
    from schemagraph.sql.errors import (
        DatabaseFileError,
        EvalInputError,
        LimitsError,
        SqlError,
        SqlParseError,
    )
    from schemagraph.sql.evaluate import (
        CaseResult,
        EvalCase,
        EvalOptions,
        EvalReport,
        LevelScore,
        evaluate_cases,
        evaluate_files,
        load_cases,
        remove_distinct,
    )
    from schemagraph.sql.execute import (
        DEFAULT_LIMITS,
        ErrorKind,
        Limits,
        QueryEngine,
        QueryError,
        QueryOutcome,
        QueryResult,
        SqliteEngine,
        execute,
        read_only_authorizer,
    )
    from schemagraph.sql.guard import Accepted, Refusal, RefusalRule, check_sql, is_allowed
    from schemagraph.sql.hardness import (
        Hardness,
        HardnessCounts,
        classify_hardness,
        hardness_counts,
        spider_hardness,
    )
    from schemagraph.sql.live_engine import (
        LiveEngine,
        close_engines,
        database_names,
        live_engine,
        run_on_server,
        runs_queries,
        translate,
    )
    from schemagraph.sql.tables import columns_in_sql, tables_in_sql, tables_in_tree

__getattr__, __dir__, _ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "compare": [
            "CompareMode",
            "bird_result_eq",
            "gold_orders_rows",
            "relaxed_result_eq",
            "results_match",
            "spider_result_eq",
        ],
        "errors": [
            "DatabaseFileError",
            "EvalInputError",
            "LimitsError",
            "SqlError",
            "SqlParseError",
        ],
        "evaluate": [
            "CaseResult",
            "EvalCase",
            "EvalOptions",
            "EvalReport",
            "LevelScore",
            "evaluate_cases",
            "evaluate_files",
            "load_cases",
            "remove_distinct",
        ],
        "execute": [
            "DEFAULT_LIMITS",
            "ErrorKind",
            "Limits",
            "QueryEngine",
            "QueryError",
            "QueryOutcome",
            "QueryResult",
            "SqliteEngine",
            "execute",
            "read_only_authorizer",
        ],
        "guard": ["Accepted", "Refusal", "RefusalRule", "check_sql", "is_allowed"],
        "hardness": [
            "Hardness",
            "HardnessCounts",
            "classify_hardness",
            "hardness_counts",
            "spider_hardness",
        ],
        "live_engine": [
            "LiveEngine",
            "close_engines",
            "database_names",
            "live_engine",
            "run_on_server",
            "runs_queries",
            "translate",
        ],
        "tables": ["columns_in_sql", "tables_in_sql", "tables_in_tree"],
    },
)

__all__ = [
    "DEFAULT_LIMITS",
    "Accepted",
    "CaseResult",
    "CompareMode",
    "DatabaseFileError",
    "ErrorKind",
    "EvalCase",
    "EvalInputError",
    "EvalOptions",
    "EvalReport",
    "Hardness",
    "HardnessCounts",
    "LevelScore",
    "Limits",
    "LimitsError",
    "LiveEngine",
    "QueryEngine",
    "QueryError",
    "QueryOutcome",
    "QueryResult",
    "Refusal",
    "RefusalRule",
    "SqlError",
    "SqlParseError",
    "SqliteEngine",
    "bird_result_eq",
    "check_sql",
    "classify_hardness",
    "close_engines",
    "columns_in_sql",
    "database_names",
    "evaluate_cases",
    "evaluate_files",
    "execute",
    "gold_orders_rows",
    "hardness_counts",
    "is_allowed",
    "live_engine",
    "load_cases",
    "read_only_authorizer",
    "relaxed_result_eq",
    "remove_distinct",
    "results_match",
    "run_on_server",
    "runs_queries",
    "spider_hardness",
    "spider_result_eq",
    "tables_in_sql",
    "tables_in_tree",
    "translate",
]
