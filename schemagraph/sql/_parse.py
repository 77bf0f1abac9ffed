"""Parsing helpers shared by the guard, hardness and table extraction.

sqlglot logs a warning ("... contains unsupported syntax. Falling back to parsing as a
'Command'") for statements it does not model (REPLACE INTO, EXPLAIN, VACUUM INTO, ...). Our
callers turn such a statement into a refusal or an error that names it, so the warning is
noise on the user's terminal: it is dropped, in the parsing thread only, while these helpers
parse. Other sqlglot warnings, and the same warning from anyone else's parse, still appear.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ParseError
from sqlglot.tokens import Token, TokenType

FALLBACK_WARNING = "Falling back to parsing as a 'Command'"
"""The part of sqlglot's warning for an unmodelled statement that `_QuietFallback` drops."""

_state = threading.local()


class _QuietFallback(logging.Filter):
    """Drops sqlglot's Command-fallback warning while this thread is inside `_quiet()`."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not getattr(_state, "quiet", False):
            return True
        return FALLBACK_WARNING not in record.getMessage()


logging.getLogger("sqlglot").addFilter(_QuietFallback())


@contextmanager
def _quiet() -> Iterator[None]:
    previous = getattr(_state, "quiet", False)
    _state.quiet = True
    try:
        yield
    finally:
        _state.quiet = previous


def tokenize(sql: str, dialect: str) -> list[Token]:
    """sqlglot's tokens for `sql` (comments dropped). Raises `SqlglotError` when it cannot."""
    return Dialect.get_or_raise(dialect).tokenize(sql)


def split_statements(tokens: list[Token]) -> list[list[Token]]:
    """The tokens of each non-empty statement, split at top-level `;`."""
    statements: list[list[Token]] = [[]]
    for token in tokens:
        if token.token_type == TokenType.SEMICOLON:
            statements.append([])
        else:
            statements[-1].append(token)
    return [statement for statement in statements if statement]


def parse_tokens(tokens: list[Token], sql: str, dialect: str) -> list[exp.Expr]:
    """The statements `tokens` (from `tokenize(sql, dialect)`) hold, without empty ones.

    Raises sqlglot's `SqlglotError` (or `RecursionError` on absurd nesting) when it cannot parse,
    also where sqlglot's parser itself fails on odd input (SQLite's `->` with nothing around it
    raises a `TypeError` inside it).
    """
    with _quiet():
        try:
            parsed = Dialect.get_or_raise(dialect).parser().parse(tokens, sql)
        except (TypeError, ValueError, AttributeError, IndexError) as exc:
            raise ParseError(f"cannot parse this SQL ({type(exc).__name__} in sqlglot)") from None
    return [
        statement
        for statement in parsed
        if statement is not None and not isinstance(statement, exp.Semicolon)
    ]


def parse_statements(sql: str, dialect: str) -> list[exp.Expr]:
    """The statements of `sql`, without empty ones (`;;`, or a trailing `; -- comment`).

    Raises sqlglot's `SqlglotError` (or `RecursionError` on absurd nesting) when it cannot parse.
    """
    return parse_tokens(tokenize(sql, dialect), sql, dialect)


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message, for one-line errors."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
