"""What a retrieval returns: ranked databases with ranked tables, confidence, examples, timings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from retriever.twins import AlsoIn, TwinNote


@dataclass(frozen=True)
class RankedTable:
    """A table of a ranked database. `chosen`: part of the joinable set proposed for
    generation. `bridge`: on the foreign-key path that joins the chosen tables, not matched by
    the question itself; `joins`: the two tables that path joins (a bridge's only). `family`:
    when the table stands for a family of sharded tables (`schemagraph.families`), its pattern,
    member count, first and last member and suffix range, so that generation can pick the
    shards."""

    name: str
    score: float
    chosen: bool = False
    bridge: bool = False
    family: Mapping[str, Any] | None = None
    joins: tuple[str, str] | None = None


@dataclass(frozen=True)
class RankedDatabase:
    """`tables`: the database's best tables by score, at most the `top_tables` asked for, the
    chosen ones among them; `bridges`: the tables the join path adds beyond those (they count
    toward no limit); `chosen_tables`: the chosen tables and every bridge, in join order, the
    schema to generate SQL against (given: from the flags when left empty)."""

    db_id: str
    score: float
    tables: tuple[RankedTable, ...]
    bridges: tuple[RankedTable, ...] = ()
    chosen_tables: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.chosen_tables:
            joinable = [t.name for t in self.tables if t.chosen or t.bridge]
            joinable += [t.name for t in self.bridges]
            object.__setattr__(self, "chosen_tables", tuple(joinable))


@dataclass(frozen=True)
class Example:
    """A (question, SQL) record for few-shot prompting; `origin`: `synthetic`, or `user` for an
    example a person wrote."""

    question: str
    sql: str
    db_id: str
    tables: tuple[str, ...]
    similarity: float
    skeleton: str = ""
    origin: str = "synthetic"


@dataclass(frozen=True)
class RetrievalResult:
    """`databases` best first; `tables` the pool-wide table ranking as (db_id, table);
    `confidence` in [0, 1]; `abstained` when it is below the retriever's threshold (no
    database here seems to fit; the ranking is still given); `timings` in milliseconds;
    `twins`: the best database's twins ranked with it, and what told it apart;
    `pooling_error`: why the pooling model's reply was not used (the ranking is then the
    retriever's own); `also_in`: the ranked databases, right after the best one, that are its
    mirrors or extended copies (or it theirs) and hold every table chosen in it, and the tables
    each adds (`retriever.twins`)."""

    question: str
    databases: tuple[RankedDatabase, ...]
    tables: tuple[tuple[str, str], ...]
    confidence: float
    abstained: bool
    examples: tuple[Example, ...] = ()
    timings: dict[str, float] = field(default_factory=dict)
    pooled: bool = False
    twins: TwinNote | None = None
    pooling_error: str | None = None
    also_in: tuple[AlsoIn, ...] = ()

    @property
    def database(self) -> RankedDatabase | None:
        """The best database, or None when the retriever abstained."""
        return None if self.abstained or not self.databases else self.databases[0]

    def as_dict(self) -> dict[str, Any]:
        """The JSON form (`schemarag retrieve --json`, the HTTP API). Written out rather than
        `dataclasses.asdict`, which deep-copies every field: a third of the HTTP answer's cost."""
        return {
            "question": self.question,
            "databases": [
                {
                    "db_id": db.db_id,
                    "score": db.score,
                    "tables": [_table(t) for t in db.tables],
                    "bridges": [_table(t) for t in db.bridges],
                    "chosen_tables": list(db.chosen_tables),
                }
                for db in self.databases
            ],
            "tables": [{"db_id": d, "table": t} for d, t in self.tables],
            "confidence": self.confidence,
            "abstained": self.abstained,
            "examples": [
                {
                    "question": e.question,
                    "sql": e.sql,
                    "db_id": e.db_id,
                    "tables": list(e.tables),
                    "similarity": e.similarity,
                    "skeleton": e.skeleton,
                    "origin": e.origin,
                }
                for e in self.examples
            ],
            "timings": dict(self.timings),
            "pooled": self.pooled,
            "twins": self.twins.as_dict() if self.twins is not None else None,
            "pooling_error": self.pooling_error,
            "also_in": [a.as_dict() for a in self.also_in],
        }


def _table(t: RankedTable) -> dict[str, Any]:
    return {
        "name": t.name,
        "score": t.score,
        "chosen": t.chosen,
        "bridge": t.bridge,
        "family": dict(t.family) if t.family is not None else None,
        "joins": list(t.joins) if t.joins is not None else None,
    }
