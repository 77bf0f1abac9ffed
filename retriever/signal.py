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

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol

import numpy as np
import numpy.typing as npt

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
