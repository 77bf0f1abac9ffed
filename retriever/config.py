"""`RetrieverConfig`: how a `Retriever` ranks, as one value.

    config = RetrieverConfig(examples=0, abstain_below=0.2)
    Retriever.open(store, embedder, config=config)

The configuration holds numbers and switches only; the models a retriever calls (the query
embedder, the schema-vocabulary embedder, a pooling LLM) are passed to it beside the config.
"""

from __future__ import annotations

from dataclasses import dataclass

from retriever.errors import RetrieverError
from retriever.fusion import DEFAULT_WEIGHTS, FusionWeights
from retriever.signal import SignalSpec

#: Default abstain threshold on `RetrievalResult.confidence` (see `Retriever.confidence`).
ABSTAIN_THRESHOLD = 0.3


@dataclass(frozen=True)
class RetrieverConfig:
    """`weights`: how the signals combine (`retriever.fusion`); `question_hits`: how many
    synthetic questions one query fetches; `abstain_below`: confidence under which the result
    says no database fits; `examples`: few-shot records per result; `pool_candidates`: the
    databases a pooling LLM chooses among; `semantic`: link question words to schema names by
    embedding (`retriever.semantic`)."""

    weights: FusionWeights = DEFAULT_WEIGHTS
    question_hits: int = 50
    abstain_below: float = ABSTAIN_THRESHOLD
    examples: int = 3
    pool_candidates: int = 5
    semantic: bool = True
    #: signals of one's own, beside the built-in ones (`retriever.signal`)
    signals: tuple[SignalSpec, ...] = ()
    #: a table is "chosen" in its database (and completed along foreign keys) when its score is
    #: at least `choose_ratio` of the best table's score there, `max_chosen` at most
    choose_ratio: float = 0.4
    max_chosen: int = 4
    #: the confidence's bonus when a cell value or a table name of the database is matched
    lexical_bonus: float = 0.1
    #: estates with this many tables score the dense table signal by cells (`Cells.estimate`)
    table_cells_from: int = 20_000
    #: the table cells a question probes: at 10,000 databases (44,044 tables, 420 cells) 32 gave
    #: Spider dev the same recall as 64 and 0.8 ms less p50; 26 lost 0.06 tab_R@5 (the decision
    #: log of docs/BENCHMARKS.md)
    table_probe: int = 32
    #: with cells, the databases ranked first whose tables' dense scores are then made exact
    refined_databases: int = 10

    def __post_init__(self) -> None:
        if self.question_hits < 1:
            raise RetrieverError(f"question_hits must be >= 1, got {self.question_hits}")
        if not 0.0 <= self.abstain_below <= 1.0:
            raise RetrieverError(f"abstain_below must be in [0, 1], got {self.abstain_below}")
        if self.examples < 0:
            raise RetrieverError(f"examples must be >= 0, got {self.examples}")


#: The configuration `Retriever` uses unless given another.
DEFAULT_CONFIG = RetrieverConfig()
