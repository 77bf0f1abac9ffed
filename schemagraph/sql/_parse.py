"""Parsing helpers shared by the guard, hardness and table extraction."""

from __future__ import annotations

import sqlglot
from sqlglot import exp


def parse_statements(sql: str, dialect: str) -> list[exp.Expr]:
    """The statements of `sql`, without empty ones (`;;`, or a trailing `; -- comment`).

    Raises sqlglot's `SqlglotError` (or `RecursionError` on absurd nesting) when it cannot parse.
    """
    return [
        statement
        for statement in sqlglot.parse(sql, read=dialect)
        if statement is not None and not isinstance(statement, exp.Semicolon)
    ]


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message, for one-line errors."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
