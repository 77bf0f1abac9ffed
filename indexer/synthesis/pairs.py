"""The values synthesis passes around, and the two seams of the ICRL loop.

A `Synthesizer` turns a `SynthesisRequest` (one traversal of one database, with its sampled
values, the questions already written for it and the current feedback) into `QAPair`s. A
`FeedbackProducer` turns a pair and its `Reward` into the `Feedback` that steers the next attempt.
Implementations do not subclass these protocols (DESIGN.md, "Seams"): the template synthesizer
(`indexer.synthesis.templates`), the LLM synthesizer (`indexer.synthesis.llm_synthesizer`),
and the rule and LLM feedback producers (`indexer.synthesis.feedback`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from schemagraph.model import Database
from schemagraph.samples import DatabaseSample
from schemagraph.traversals import Traversal

if TYPE_CHECKING:
    from indexer.synthesis.reward import Reward


@dataclass(frozen=True)
class QAPair:
    """One synthetic question with the SQL that answers it."""

    question: str
    sql: str


@dataclass(frozen=True)
class Feedback:
    """An instruction for the next attempt.

    `text` is what an LLM synthesizer reads. `operators` are SQL operators or keywords the next
    attempt should use (upper case, as in `indexer.synthesis.feedback.OPERATORS`, e.g. "GROUP BY",
    "HAVING", "LIKE", "SUBQUERY"); the template synthesizer builds its next query to contain all
    of them, so the ones to add come first and the ones worth keeping may follow.
    """

    text: str
    operators: tuple[str, ...] = ()


@dataclass(frozen=True)
class SynthesisRequest:
    """What a synthesizer gets: one traversal of `db`, its sampled values (None when the
    database has no data), the questions already written for this traversal, the current
    feedback and the feedback given before it (the ICRL state), how many pairs are wanted and
    the seed that makes the answer reproducible."""

    db: Database
    traversal: Traversal
    sample: DatabaseSample | None
    previous: tuple[QAPair, ...] = ()
    feedback: Feedback | None = None
    count: int = 1
    seed: int = 0
    feedback_history: tuple[Feedback, ...] = ()

    def __post_init__(self) -> None:
        if self.count < 1:
            raise ValueError(f"count must be >= 1, got {self.count}")
        if self.traversal.db_id.casefold() != self.db.id.casefold():
            raise ValueError(
                f"traversal is of database {self.traversal.db_id!r}, not of db {self.db.id!r}"
            )


@runtime_checkable
class Synthesizer(Protocol):
    """Writes (question, SQL) pairs for one traversal. `name` identifies the implementation in
    records and reports ("template", "anthropic:claude-sonnet-4-5")."""

    @property
    def name(self) -> str: ...

    def synthesize(self, request: SynthesisRequest) -> list[QAPair]: ...


@runtime_checkable
class FeedbackProducer(Protocol):
    """Turns a pair and its reward into an instruction for the next attempt."""

    def feedback(self, request: SynthesisRequest, pair: QAPair, reward: Reward) -> Feedback: ...


ChainRunner = Callable[[Database, Traversal, DatabaseSample | None, int], list[dict[str, Any]]]
"""Synthesizes the records of one traversal: (db, traversal, sample, seed) → list of dicts with
question, sql, tables, reward trajectory, iteration and per-record stats
(`indexer.synthesis.chains.make_chain_runner`)."""
