"""The allow-list in front of every untrusted query: one read-only query, or a named refusal.

The guard parses the SQL with sqlglot and accepts exactly one statement whose root is a query
(SELECT, UNION / INTERSECT / EXCEPT, a parenthesized query, WITH of queries, recursive CTEs
included). Everything else is refused with a `RefusalRule` that says which rule fired:

- anything that writes or changes the schema, at the root or nested (a data-modifying CTE);
- ATTACH / DETACH, PRAGMA, VACUUM, ANALYZE, REINDEX, transactions, EXPLAIN: not queries;
- sqlglot's unparsed fallback `exp.Command`, because an unparsed statement cannot be checked;
- functions that reach outside the database (`load_extension`, `readfile`, `writefile`, ...).

The guard is the first of two locks. `execute` also opens the file read-only and installs an
SQLite authorizer, so a statement the parser misreads still cannot write (see `execute.py`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from sqlglot import exp
from sqlglot.errors import SqlglotError

from schemagraph.sql._parse import first_line, parse_statements


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
    NOT_A_QUERY = "not_a_query"
    AUTHORIZER = "authorizer"
    """Not raised by the guard: the SQLite authorizer denied an action at prepare time."""


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

MAX_SQL_CHARS = 100_000
"""Longer SQL is refused before parsing: parse time is not covered by the query timeout."""

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
        statements = parse_statements(sql, dialect)
    except (SqlglotError, RecursionError) as exc:
        return Refusal(RefusalRule.PARSE_ERROR, f"cannot parse the SQL: {first_line(exc)}")
    if not statements:
        return Refusal(RefusalRule.EMPTY, "no statement to run")
    if len(statements) > 1:
        return Refusal(
            RefusalRule.MULTIPLE_STATEMENTS,
            f"exactly one statement is allowed, found {len(statements)}",
        )
    return _check_tree(statements[0])


def is_allowed(sql: str, *, dialect: str = "sqlite") -> bool:
    """Whether `check_sql` accepts `sql`."""
    return isinstance(check_sql(sql, dialect=dialect), Accepted)


def _check_tree(tree: exp.Expr) -> Accepted | Refusal:
    for check in (_check_root, _check_nodes):
        refusal = check(tree)
        if refusal is not None:
            return refusal
    if not isinstance(tree, exp.Query):  # unreachable after _check_root; narrows the type
        return Refusal(RefusalRule.NOT_A_QUERY, f"not a query: {_kind(tree)}")
    return Accepted(tree)


def _check_root(tree: exp.Expr) -> Refusal | None:
    if isinstance(tree, exp.Command):
        return _command_refusal(tree)
    for node_type, rule in NON_QUERY_NODES.items():
        if isinstance(tree, node_type):
            name = type(tree).__name__.upper()
            return Refusal(rule, f"{name} is not allowed: only queries may run")
    if isinstance(tree, WRITE_NODES):
        return Refusal(RefusalRule.WRITE, f"{_kind(tree)} modifies the database")
    if not _is_query(tree):
        return Refusal(
            RefusalRule.NOT_A_QUERY,
            f"only queries (SELECT, UNION/INTERSECT/EXCEPT, WITH) may run; got {_kind(tree)}",
        )
    return None


def _check_nodes(tree: exp.Expr) -> Refusal | None:
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
        name = _function_name(node)
        if name is not None and name in DANGEROUS_FUNCTIONS | DANGEROUS_TABLES:
            return Refusal(
                RefusalRule.DANGEROUS_FUNCTION,
                f"{name} is not allowed: it reaches outside the database's tables",
            )
    return None


def _is_query(tree: exp.Expr) -> bool:
    while isinstance(tree, exp.Subquery):
        tree = tree.this
    return isinstance(tree, exp.Select | exp.SetOperation)


def _command_refusal(node: exp.Command) -> Refusal:
    keyword = str(node.this or "").upper()
    if keyword in ("VACUUM", "REINDEX", "ANALYZE"):
        return Refusal(RefusalRule.MAINTENANCE, f"{keyword} is not allowed: only queries may run")
    if keyword in ("REPLACE", "INSERT", "UPDATE", "DELETE", "ALTER", "CREATE", "DROP"):
        return Refusal(RefusalRule.WRITE, f"{keyword} modifies the database")
    return Refusal(
        RefusalRule.COMMAND,
        f"{keyword or 'statement'} could not be fully parsed, so it cannot be checked",
    )


def _function_name(node: exp.Expr) -> str | None:
    """Lower-case name of a function call or table-valued function, else None."""
    if isinstance(node, exp.Anonymous):
        return str(node.this).lower()
    if isinstance(node, exp.Func):
        return node.sql_name().lower()
    if isinstance(node, exp.Table) and isinstance(node.this, exp.Anonymous | exp.Func):
        return _function_name(node.this)
    if isinstance(node, exp.Table) and node.name.lower() in DANGEROUS_TABLES:
        return node.name.lower()
    return None


def _kind(node: exp.Expr) -> str:
    key = node.key.upper()
    kind = node.args.get("kind")
    return f"{key} {str(kind).upper()}" if isinstance(kind, str) and kind else key
