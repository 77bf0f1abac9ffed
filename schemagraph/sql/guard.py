"""The allow-list in front of every untrusted query: one read-only query, or a named refusal.

The guard parses the SQL with sqlglot and accepts exactly one statement whose root is a query
(SELECT, UNION / INTERSECT / EXCEPT, a parenthesized query, WITH of queries, recursive CTEs
included). Everything else is refused with a `RefusalRule` that says which rule fired:

- anything that writes or changes the schema, at the root or nested (a data-modifying CTE);
- ATTACH / DETACH, PRAGMA, VACUUM, ANALYZE, REINDEX, transactions and savepoints, EXPLAIN: not
  queries. These are recognised by the statement's first keyword before parsing, so that the
  refusal names the statement (sqlglot reads `SAVEPOINT a` as a column alias, and `EXPLAIN ...`
  or `REPLACE INTO ...` only through its unparsed fallback);
- sqlglot's unparsed fallback `exp.Command`, because an unparsed statement cannot be checked;
- functions that reach outside the database (`load_extension`, `readfile`, `writefile`, ...);
- table-valued functions (`pragma_table_info(...)`, `json_each(...)`): the engine's authorizer
  cannot let SQLite declare their virtual tables, so they would fail later with a confusing
  message.

Server dialects (`dialect="postgres"`, `"duckdb"`) add their own deny-lists:

- PostgreSQL: functions that read or list server files (`pg_read_file`, `pg_ls_dir`, ...), large
  objects (`lo_import`, `lo_export`, ...), `dblink*`, `pg_sleep*`, `set_config`, signalling and
  administration (`pg_terminate_backend`, `pg_reload_conf`, ...), advisory locks, sequences
  (`nextval`), functions that run a query given as text (`query_to_xml`, `ts_stat`), and
  `SELECT ... FOR UPDATE/SHARE` (row locks). Table-valued functions such as `generate_series` and
  `unnest` are allowed. COPY, SET ROLE, DO, CALL, LOCK, PREPARE/EXECUTE are refused as statements.
- DuckDB: table functions other than `range`, `generate_series` and `unnest` (they read files,
  URLs or run SQL given as text: `read_csv`, `read_parquet`, `read_text`, `glob`, `query`, ...),
  a file name used as a table (`FROM '/etc/passwd'`), `getenv`; COPY, INSTALL, LOAD, ATTACH, SET
  are refused as statements.

The guard is the first of two locks. `execute` also opens the file read-only and installs an
SQLite authorizer, so a statement the parser misreads still cannot write (see `execute.py`); the
server engines (`live_engine.py`) run in a read-only transaction or connection.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.tokens import Token, TokenType

from schemagraph.sql._parse import first_line, parse_tokens, split_statements, tokenize


class RefusalRule(enum.StrEnum):
    """Why the guard refused a statement; stable codes for logs, APIs and tests."""

    TOO_LONG = "too_long"
    PARSE_ERROR = "parse_error"
    EMPTY = "empty"
    MULTIPLE_STATEMENTS = "multiple_statements"
    COMMAND = "command"
    WRITE = "write"
    ATTACH = "attach"
    PRAGMA = "pragma"
    MAINTENANCE = "maintenance"
    TRANSACTION = "transaction"
    SELECT_INTO = "select_into"
    DANGEROUS_FUNCTION = "dangerous_function"
    TABLE_FUNCTION = "table_function"
    NOT_A_QUERY = "not_a_query"
    LOCK = "lock"
    AUTHORIZER = "authorizer"
    """Not raised by the guard: the SQLite authorizer denied an action at prepare time."""
    ENGINE = "engine"
    """Not raised by the guard: a server engine refused (PostgreSQL's read-only transaction or a
    missing privilege; DuckDB's parser found no single SELECT, or its file access is off)."""


DANGEROUS_FUNCTIONS: frozenset[str] = frozenset(
    {
        "load_extension",
        "readfile",
        "writefile",
        "edit",
        "eval",
        "fts3_tokenizer",
        "zipfile",
        "sqlar_compress",
        "sqlar_uncompress",
        "lsdir",
        "fsdir",
        "sqlite_dbpage",
        "sqlite_dbdata",
        "sqlite_dbptr",
    }
)
"""Lower-case names of functions refused by the guard and by the authorizer: extension loading,
file access, SQL evaluation and raw page access."""

DANGEROUS_TABLES: frozenset[str] = frozenset(
    {"sqlite_dbpage", "sqlite_dbdata", "sqlite_dbptr", "fsdir", "lsdir", "zipfile"}
)
"""Virtual tables (when an extension provides them) that expose files or raw database pages."""

TABLE_FUNCTIONS: frozenset[str] = frozenset({"json_each", "json_tree", "dbstat", "sqlite_stmt"})
"""Eponymous virtual tables SQLite offers by name; like `pragma_*` and any table-valued call,
refused: the read-only authorizer denies the schema entry SQLite makes to declare them."""

SERVER_DANGEROUS_FUNCTIONS: dict[str, frozenset[str]] = {
    "postgres": frozenset(
        {
            "set_config",
            "nextval",
            "setval",
            "query_to_xml",
            "query_to_xmlschema",
            "query_to_xml_and_xmlschema",
            "cursor_to_xml",
            "cursor_to_xmlschema",
            "table_to_xml",
            "table_to_xml_and_xmlschema",
            "schema_to_xml",
            "schema_to_xml_and_xmlschema",
            "database_to_xml",
            "database_to_xml_and_xmlschema",
            "ts_stat",
            "ts_rewrite",
            "loread",
            "lowrite",
            "pg_notify",
            "pg_stat_file",
            "pg_current_logfile",
        }
    ),
    "duckdb": frozenset({"getenv", "load_extension"}),
}
"""Per server dialect, lower-case names of functions the guard refuses, beside the prefixes in
`SERVER_DANGEROUS_PREFIXES`: they read files, run SQL given as text, change settings or state."""

SERVER_DANGEROUS_PREFIXES: dict[str, tuple[str, ...]] = {
    "postgres": (
        "pg_read_",  # pg_read_file, pg_read_binary_file
        "pg_ls_",  # pg_ls_dir, pg_ls_logdir, pg_ls_waldir, pg_ls_tmpdir, ...
        "pg_file_",  # adminpack: pg_file_write, pg_file_rename, pg_file_unlink
        "lo_",  # lo_import, lo_export, lo_get, lo_put, lo_from_bytea, lo_unlink, ...
        "dblink",
        "pg_sleep",
        "pg_terminate_",
        "pg_cancel_",
        "pg_reload_",
        "pg_rotate_",
        "pg_promote",
        "pg_switch_",
        "pg_create_",
        "pg_drop_",
        "pg_replication_",
        "pg_logical_",
        "pg_stat_reset",
        "pg_backup_",
        "pg_start_backup",
        "pg_stop_backup",
        "pg_import_",
        "pg_advisory_",
        "pg_try_advisory_",
        "pg_wal_replay_",
        "pg_log_backend_",
    ),
    "duckdb": (),
}
"""Per server dialect, prefixes of lower-case function names the guard refuses."""

SERVER_TABLE_FUNCTIONS: dict[str, frozenset[str] | None] = {
    "postgres": None,  # any, unless refused by name above
    "duckdb": frozenset(
        {
            "range",
            "generate_series",
            "exploding_generate_series",
            "unnest",
            "explode",
        }  # sqlglot's names
    ),
}
"""Per server dialect, the table-valued functions allowed in FROM (None: any not refused by
name). DuckDB's others read files or URLs, list the catalog or run SQL given as text."""

_FILE_LIKE = re.compile(
    r"[/\\*?~]|://|\.(csv|tsv|txt|parquet|json|jsonl|ndjson|gz|zst|xlsx|arrow|db|duckdb|sqlite3?)$",
    re.IGNORECASE,
)
"""A DuckDB table name that is a file path, glob or URL (DuckDB reads `FROM 'file.csv'`)."""

MAX_SQL_CHARS = 100_000
"""Longer SQL is refused before parsing (about 10 ms per 1,000 characters)."""

NON_QUERY_KEYWORDS: dict[str, RefusalRule] = {
    "ATTACH": RefusalRule.ATTACH,
    "DETACH": RefusalRule.ATTACH,
    "PRAGMA": RefusalRule.PRAGMA,
    "VACUUM": RefusalRule.MAINTENANCE,
    "ANALYZE": RefusalRule.MAINTENANCE,
    "REINDEX": RefusalRule.MAINTENANCE,
    "BEGIN": RefusalRule.TRANSACTION,
    "END": RefusalRule.TRANSACTION,
    "COMMIT": RefusalRule.TRANSACTION,
    "ROLLBACK": RefusalRule.TRANSACTION,
    "SAVEPOINT": RefusalRule.TRANSACTION,
    "RELEASE": RefusalRule.TRANSACTION,
    "EXPLAIN": RefusalRule.NOT_A_QUERY,
    "REPLACE": RefusalRule.WRITE,
}
"""SQLite statements refused by their first keyword, before parsing."""

ONLY_QUERIES = "only SELECT, UNION/INTERSECT/EXCEPT and WITH queries may run"

WRITE_NODES: tuple[type[exp.Expr], ...] = (
    exp.DML,
    exp.DDL,
    exp.Drop,
    exp.Alter,
    exp.Merge,
    exp.Copy,
    exp.LoadData,
)
"""Node types that modify data or schema; refused anywhere in the tree."""

NON_QUERY_NODES: dict[type[exp.Expr], RefusalRule] = {
    exp.Attach: RefusalRule.ATTACH,
    exp.Detach: RefusalRule.ATTACH,
    exp.Pragma: RefusalRule.PRAGMA,
    exp.Analyze: RefusalRule.MAINTENANCE,
    exp.Transaction: RefusalRule.TRANSACTION,
    exp.Commit: RefusalRule.TRANSACTION,
    exp.Rollback: RefusalRule.TRANSACTION,
    exp.Set: RefusalRule.NOT_A_QUERY,
    exp.Use: RefusalRule.NOT_A_QUERY,
}
"""Statements that are not queries, by the rule that refuses them."""


@dataclass(frozen=True)
class Refusal:
    """A refused statement: the rule that fired and a one-line explanation."""

    rule: RefusalRule
    message: str


@dataclass(frozen=True)
class Accepted:
    """An accepted statement and its syntax tree."""

    tree: exp.Query


def check_sql(
    sql: str, *, dialect: str = "sqlite", max_chars: int = MAX_SQL_CHARS
) -> Accepted | Refusal:
    """Accept `sql` if it is exactly one read-only query, else say which rule refuses it."""
    if len(sql) > max_chars:
        return Refusal(
            RefusalRule.TOO_LONG, f"the SQL has {len(sql)} characters, more than {max_chars}"
        )
    try:
        tokens = tokenize(sql, dialect)
    except (SqlglotError, RecursionError) as exc:
        return Refusal(RefusalRule.PARSE_ERROR, f"cannot parse the SQL: {first_line(exc)}")
    statements = split_statements(tokens)
    if not statements:
        return Refusal(RefusalRule.EMPTY, "no statement to run")
    if len(statements) > 1:
        return _multiple(len(statements))
    keyword = _keyword(statements[0][0])
    if keyword in NON_QUERY_KEYWORDS:
        return _keyword_refusal(keyword, NON_QUERY_KEYWORDS[keyword])
    try:
        trees = parse_tokens(tokens, sql, dialect)
    except (SqlglotError, RecursionError) as exc:
        return Refusal(RefusalRule.PARSE_ERROR, f"cannot parse the SQL: {first_line(exc)}")
    if not trees:
        return Refusal(RefusalRule.EMPTY, "no statement to run")
    if len(trees) > 1:
        return _multiple(len(trees))
    return _check_tree(trees[0], keyword, _dialect_key(dialect), sql)


def is_allowed(sql: str, *, dialect: str = "sqlite") -> bool:
    """Whether `check_sql` accepts `sql`."""
    return isinstance(check_sql(sql, dialect=dialect), Accepted)


def _multiple(count: int) -> Refusal:
    return Refusal(
        RefusalRule.MULTIPLE_STATEMENTS, f"exactly one statement is allowed, found {count}"
    )


def _keyword(token: Token) -> str:
    """The statement's first word, upper-cased ("" for a quoted name or a parenthesis)."""
    if token.token_type == TokenType.IDENTIFIER or not token.text[:1].isalpha():
        return ""
    return token.text.upper()


def _keyword_refusal(keyword: str, rule: RefusalRule) -> Refusal:
    if rule is RefusalRule.WRITE:
        return Refusal(rule, f"{keyword} modifies the database")
    return Refusal(rule, f"{keyword} is not a query: {ONLY_QUERIES}")


def _dialect_key(dialect: str) -> str:
    """The key of a dialect's deny-lists ("postgresql" and "postgres" alike)."""
    name = dialect.lower()
    return "postgres" if name in ("postgres", "postgresql") else name


def _check_tree(tree: exp.Expr, keyword: str, dialect: str, sql: str) -> Accepted | Refusal:
    refusal = _check_root(tree, keyword) or _check_nodes(tree, dialect, sql)
    if refusal is not None:
        return refusal
    if not isinstance(tree, exp.Query):  # unreachable after _check_root; narrows the type
        return Refusal(RefusalRule.NOT_A_QUERY, f"{keyword or _kind(tree)} is not a query")
    return Accepted(tree)


def _check_root(tree: exp.Expr, keyword: str) -> Refusal | None:
    if isinstance(tree, exp.Command):
        return _command_refusal(tree)
    for node_type, rule in NON_QUERY_NODES.items():
        if isinstance(tree, node_type):
            return _keyword_refusal(keyword or type(tree).__name__.upper(), rule)
    if isinstance(tree, WRITE_NODES):
        return Refusal(RefusalRule.WRITE, f"{_kind(tree)} modifies the database")
    if not _is_query(tree):
        return Refusal(
            RefusalRule.NOT_A_QUERY, f"{keyword or _kind(tree)} is not a query: {ONLY_QUERIES}"
        )
    return None


def _check_nodes(tree: exp.Expr, dialect: str, sql: str) -> Refusal | None:
    for node in tree.walk():
        if isinstance(node, exp.Command):
            return _command_refusal(node)
        if isinstance(node, WRITE_NODES):
            return Refusal(
                RefusalRule.WRITE,
                f"{_kind(node)} inside a query modifies the database (data-modifying CTE?)",
            )
        if isinstance(node, tuple(NON_QUERY_NODES)):
            return Refusal(RefusalRule.NOT_A_QUERY, f"{_kind(node)} inside a query")
        if isinstance(node, exp.Select) and node.args.get("into") is not None:
            return Refusal(RefusalRule.SELECT_INTO, "SELECT ... INTO creates a table")
        if isinstance(node, exp.Select) and node.args.get("locks"):
            return Refusal(
                RefusalRule.LOCK, "SELECT ... FOR UPDATE/SHARE locks rows: only plain reads may run"
            )
        if dialect in SERVER_DANGEROUS_FUNCTIONS:
            refusal = _server_refusal(node, dialect, sql)
        else:
            refusal = _function_refusal(node)
        if refusal is not None:
            return refusal
    return None


def _server_refusal(node: exp.Expr, dialect: str, sql: str) -> Refusal | None:
    """The refusal of a function call or table in a server dialect's query, if any."""
    name = _function_name(node)
    if name is None:
        return None
    is_table = isinstance(node, exp.Table)
    called = not is_table or isinstance(node.this, exp.Anonymous | exp.Func)
    if called and (
        name in SERVER_DANGEROUS_FUNCTIONS[dialect]
        or name.startswith(SERVER_DANGEROUS_PREFIXES[dialect])
    ):
        return Refusal(
            RefusalRule.DANGEROUS_FUNCTION,
            f"{name} is not allowed: it reaches outside the database's tables or changes state",
        )
    if not is_table:
        return None
    allowed = SERVER_TABLE_FUNCTIONS.get(dialect)
    if called:
        if allowed is not None and name not in allowed:
            return Refusal(
                RefusalRule.TABLE_FUNCTION,
                f"table function {name} is not allowed: only range, generate_series and unnest "
                "may be used in FROM (others read files or run SQL given as text)",
            )
        return None
    if dialect == "duckdb" and (_FILE_LIKE.search(node.name) or _single_quoted(node, sql)):
        return Refusal(
            RefusalRule.DANGEROUS_FUNCTION,
            f"reading the file {node.name!r} is not allowed: only the database's tables are read",
        )
    return None


def _single_quoted(table: exp.Expr, sql: str) -> bool:
    """Whether a table's name was written as a string literal (`FROM 'data.csv'` in DuckDB)."""
    start = table.this.meta.get("start") if isinstance(table.this, exp.Expr) else None
    return isinstance(start, int) and sql[start : start + 1] == "'"


def _function_refusal(node: exp.Expr) -> Refusal | None:
    name = _function_name(node)
    if name is None:
        return None
    if name in DANGEROUS_FUNCTIONS | DANGEROUS_TABLES:
        return Refusal(
            RefusalRule.DANGEROUS_FUNCTION,
            f"{name} is not allowed: it reaches outside the database's tables",
        )
    if not isinstance(node, exp.Table):
        return None
    if name.startswith("pragma_"):
        return Refusal(
            RefusalRule.PRAGMA,
            f"table-valued PRAGMA function {name} is not allowed: PRAGMAs are not queries",
        )
    if name in TABLE_FUNCTIONS or isinstance(node.this, exp.Anonymous | exp.Func):
        return Refusal(
            RefusalRule.TABLE_FUNCTION,
            f"table-valued function {name} is not allowed: the read-only engine cannot "
            "declare its virtual table",
        )
    return None


def _is_query(tree: exp.Expr) -> bool:
    while isinstance(tree, exp.Subquery):
        tree = tree.this
    return isinstance(tree, exp.Select | exp.SetOperation)


def _command_refusal(node: exp.Command) -> Refusal:
    keyword = str(node.this or "").upper()
    if keyword in NON_QUERY_KEYWORDS:
        return _keyword_refusal(keyword, NON_QUERY_KEYWORDS[keyword])
    if keyword in ("INSERT", "UPDATE", "DELETE", "ALTER", "CREATE", "DROP"):
        return Refusal(RefusalRule.WRITE, f"{keyword} modifies the database")
    return Refusal(
        RefusalRule.COMMAND,
        f"{keyword or 'statement'} could not be fully parsed, so it cannot be checked",
    )


def _function_name(node: exp.Expr) -> str | None:
    """Lower-case name of a function call, a table-valued function or a table, else None."""
    if isinstance(node, exp.Anonymous):
        return str(node.this).lower()
    if isinstance(node, exp.Func):
        return node.sql_name().lower()
    if isinstance(node, exp.Table) and isinstance(node.this, exp.Anonymous | exp.Func):
        return _function_name(node.this)
    if isinstance(node, exp.Table):
        return node.name.lower() or None
    return None


def _kind(node: exp.Expr) -> str:
    key = node.key.upper()
    kind = node.args.get("kind")
    return f"{key} {str(kind).upper()}" if isinstance(kind, str) and kind else key
