"""Errors raised by the SQL toolkit for user mistakes.

    SchemaGraphError                (schemagraph.errors)
    └── SqlError                    root of the toolkit's user errors
        ├── DatabaseFileError       a database path that is missing or not an SQLite file
        ├── LimitsError             an execution limit out of range (names the argument)
        ├── SqlParseError           SQL that sqlglot cannot parse where a tree is required
        └── EvalInputError          a gold or prediction file that cannot be evaluated

A query that is refused, times out or fails is *not* an error here: `execute` returns a
`QueryError` value for it, because callers (critics, voters, the indexer) must handle it anyway.
"""

from __future__ import annotations

from schemagraph.errors import SchemaGraphError


class SqlError(SchemaGraphError):
    """Root of the SQL toolkit's user errors."""


class DatabaseFileError(SqlError):
    """A database path does not exist, is not a file, or is not an SQLite database."""


class LimitsError(SqlError):
    """An execution limit is out of range."""


class SqlParseError(SqlError):
    """SQL that must be parsed (hardness, table extraction) could not be parsed."""


class EvalInputError(SqlError):
    """A gold or prediction file is missing, malformed, misaligned, or names an unknown db."""
