"""What a sample of a database holds: `DatabaseSample`, its `TableSample`s, their cell values.

Filled by `schemagraph.samples` (SQLite files) and `schemagraph.live_samples` (live servers).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from schemagraph.model import fold

__all__ = ["DatabaseSample", "TableSample", "Value", "clip"]

Value = str | int | float | bytes | None


@dataclass(frozen=True)
class TableSample:
    table: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Value, ...], ...]
    row_count: int
    #: distinct non-empty text values per text column (capped), in the engine's order
    text_values: dict[str, tuple[str, ...]]

    def column_values(self, column: str) -> list[Value]:
        """The sampled rows' values of `column` (any case), or [] when it was not sampled."""
        position = self._positions.get(fold(column))
        return [] if position is None else [row[position] for row in self.rows]

    def texts(self, column: str) -> tuple[str, ...]:
        """The distinct text values of `column` (any case), or () when it has none."""
        return self._texts.get(fold(column), ())

    # Looked up by folded name, once per sample: a scan per column is quadratic in the width,
    # and warehouse tables have hundreds of columns.
    @cached_property
    def _positions(self) -> dict[str, int]:
        positions: dict[str, int] = {}
        for position, column in enumerate(self.columns):
            positions.setdefault(fold(column), position)
        return positions

    @cached_property
    def _texts(self) -> dict[str, tuple[str, ...]]:
        texts: dict[str, tuple[str, ...]] = {}
        for column, values in self.text_values.items():
            texts.setdefault(fold(column), values)
        return texts


@dataclass(frozen=True)
class DatabaseSample:
    db_id: str
    tables: dict[str, TableSample]  # keyed by folded table name

    def table(self, name: str) -> TableSample | None:
        return self.tables.get(fold(name))


def clip(value: Value, max_chars: int) -> Value:
    """`value` as a sample keeps it: text cut to `max_chars`, bytes replaced by their length."""
    if isinstance(value, str) and len(value) > max_chars:
        return value[: max_chars - 1] + "…"
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    return value
