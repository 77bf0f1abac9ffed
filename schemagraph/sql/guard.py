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

The guard is the first of two locks. `execute` also opens the file read-only and installs an
SQLite authorizer, so a statement the parser misreads still cannot write (see `execute.py`).
"""

from __future__ import annotations

import enum
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

TABLE_FUNCTIONS: frozenset[str] = frozenset({"json_each", "json_tree", "dbstat", "sqlite_stmt"})
"""Eponymous virtual tables SQLite offers by name; like `pragma_*` and any table-valued call,
refused: the read-only authorizer denies the schema entry SQLite makes to declare them."""

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
    return _check_tree(trees[0], keyword)


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


def _check_tree(tree: exp.Expr, keyword: str) -> Accepted | Refusal:
    refusal = _check_root(tree, keyword) or _check_nodes(tree)
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
        refusal = _function_refusal(node)
        if refusal is not None:
            return refusal
    return None


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
