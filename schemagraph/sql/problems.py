"""What `schemagraph.sql.check` finds wrong with a query: `Problem`s of a few kinds, each naming
the name at fault and the nearest real ones, collected once per kind and name."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from schemagraph.model import fold

#: nearest names offered for an unknown one
SUGGESTIONS = 3
#: how alike (difflib ratio) a name must be to be offered
CUTOFF = 0.6


class ProblemKind(enum.StrEnum):
    """What is wrong with a checked query; stable codes for the CLI, the API and tools."""

    REFUSED = "refused"
    """The guard of `run_sql` refused it: not parsed, several statements, a write..."""
    UNKNOWN_TABLE = "unknown_table"
    UNKNOWN_COLUMN = "unknown_column"
    NOT_UNNESTED = "not_unnested"
    """A path into a repeated (ARRAY) column, read without `UNNEST`."""


@dataclass(frozen=True)
class Problem:
    """One problem: `name` is the name at fault as the SQL writes it (for a refusal, the guard's
    rule), `suggestions` the nearest real names, as the SQL should write them."""

    kind: ProblemKind
    message: str
    name: str = ""
    suggestions: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "message": self.message,
            "name": self.name,
            "suggestions": list(self.suggestions),
        }


class Problems:
    """The problems of one query, the first of each kind and name kept."""

    def __init__(self) -> None:
        self._found: dict[tuple[str, str], Problem] = {}

    def add(self, kind: ProblemKind, name: str, message: str, suggestions: tuple[str, ...]) -> None:
        key = (kind.value, fold(name))
        if key not in self._found:
            self._found[key] = Problem(kind, message, name, suggestions)

    def all(self) -> tuple[Problem, ...]:
        return tuple(self._found.values())


def nearest(message: str, suggestions: Iterable[str]) -> str:
    listed = list(suggestions)
    return f"{message}; nearest: {'; '.join(listed)}" if listed else message
