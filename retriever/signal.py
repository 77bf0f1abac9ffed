"""A ranking signal of one's own: one module, and one line of `RetrieverConfig`.

    class Freshness:                      # in its own module
        name, level = "freshness", "table"

        def __init__(self, retriever): ...    # opened once, from the retriever's entries
        def score(self, question, vector): ...  # one number per table

    RetrieverConfig(signals=(SignalSpec(Freshness, table=0.3, database=0.1),))

A `Signal` is opened once per retriever (the spec's `open`, given the `Retriever`, so it can read
the table entries, the knowledge base and the embedder) and scores each question with one array:
per table for `level = "table"` (aligned with `Retriever.entries`), per database for `"database"`
(aligned with `Retriever.db_ids`). Fusion treats it as the built-in signals it resembles
(`retriever.fusion`): scaled over the pool (divided by its maximum, negatives to 0), a table
signal weighs `table` in the table scores and, by its best table, `database` in the database
scores; a database signal weighs `database` there. Its raw array is in `Retriever.signals()`,
under its name, beside the built-in ones.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

import numpy as np
import numpy.typing as npt

from retriever.errors import RetrieverError
from retriever.fusion import DATABASE_SIGNALS

if TYPE_CHECKING:
    from retriever.retriever import Retriever

__all__ = ["Signal", "SignalSpec"]


class Signal(Protocol):
    """One question's evidence per table or per database (see the module docstring)."""

    name: str
    level: Literal["table", "database"]

    def score(
        self, question: str, vector: npt.NDArray[np.float32] | None
    ) -> npt.NDArray[np.float64]: ...


@dataclass(frozen=True)
class SignalSpec:
    """A signal to open with every retriever, and its weights (see the module docstring)."""

    open: Callable[[Retriever], Signal]
    table: float = 0.0
    database: float = 0.0


def score_signals(
    signals: Sequence[Signal],
    question: str,
    vector: npt.NDArray[np.float32] | None,
    tables: int,
    databases: int,
) -> tuple[dict[str, npt.NDArray[np.float64]], dict[str, npt.NDArray[np.float64]]]:
    """Each signal's scores of `question`, table signals then database signals by name,
    checked: one number per table (of `tables`) or per database (of `databases`)."""
    out: tuple[dict[str, npt.NDArray[np.float64]], dict[str, npt.NDArray[np.float64]]] = ({}, {})
    for signal in signals:
        values = np.asarray(signal.score(question, vector), dtype=np.float64)
        size = tables if signal.level == "table" else databases
        if values.shape != (size,):
            raise RetrieverError(
                f"signal {signal.name!r} scored {values.shape}, not one number per "
                f"{signal.level} ({size})"
            )
        out[0 if signal.level == "table" else 1][signal.name] = values
    return out


def extra_weights(
    specs: Sequence[SignalSpec], signals: Sequence[Signal]
) -> tuple[tuple[str, float, float], ...]:
    """(name, table weight, database weight) of each configured signal, checked: a name of
    its own, a known level, no table weight for a database signal."""
    taken = set(DATABASE_SIGNALS)
    out = []
    for spec, signal in zip(specs, signals, strict=True):
        if signal.name in taken:
            raise RetrieverError(f"signal name {signal.name!r} is taken: give it another")
        if signal.level not in ("table", "database"):
            raise RetrieverError(
                f"signal {signal.name!r}: level must be 'table' or 'database', got {signal.level!r}"
            )
        if signal.level == "database" and spec.table:
            raise RetrieverError(f"signal {signal.name!r} scores databases: it has no table weight")
        taken.add(signal.name)
        out.append((signal.name, spec.table, spec.database))
    return tuple(out)
