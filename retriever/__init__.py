"""Retrieval: a question in, the right databases and tables out.

    from providers import make_embedder
    from retriever import Retriever

    with Retriever.open(".schemarag/store", make_embedder("minilm+schema")) as retriever:
        result = retriever.retrieve("How many singers are from France?")
    best = result.databases[0]
    best.db_id, best.chosen_tables, result.confidence, result.examples

Modules, each named after what it does:

- `knowledge`   the served build of a store: one Qdrant client, table points, question search;
- `tables`      `TableEntry`, one per table of the pool (from the store or a catalog);
- `lexical`     BM25 over table documents; linking to table names and indexed cell values;
- `semantic`    question words linked to schema names by embedding (survives synonyms);
- `fusion`      the signals, their weights (`DEFAULT_WEIGHTS`) and how they combine;
- `signal`      `Signal` and `SignalSpec`: a signal of one's own, one line of the config;
- `completion`  foreign-key path completion (bridge tables);
- `config`      `RetrieverConfig`: weights, hits, thresholds and switches as one value;
- `examples`    few-shot records by question skeleton;
- `pooling`     LLM-aided schema pooling (optional);
- `retriever`   `Retriever`, which ties them together.

The recall benchmark, its data sets, metrics and baselines are the `evaluation` package's.

Errors: `RetrieverError` and its subclasses (`retriever.errors`).
"""

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:
    from retriever.completion import complete_tables, fk_adjacency
    from retriever.config import ABSTAIN_THRESHOLD, DEFAULT_CONFIG, RetrieverConfig
    from retriever.errors import RetrieverError, StoreNotReadyError
    from retriever.fusion import DEFAULT_WEIGHTS, FusionWeights
    from retriever.knowledge import KnowledgeBase, QuestionHit, served_build
    from retriever.prepared import Prepared
    from retriever.result import Example, RankedDatabase, RankedTable, RetrievalResult
    from retriever.retriever import Retriever
    from retriever.signal import Signal, SignalSpec
    from retriever.tables import TableEntry, entries_from_catalog

__getattr__, __dir__, _ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "completion": ["complete_tables", "fk_adjacency"],
        "config": ["ABSTAIN_THRESHOLD", "DEFAULT_CONFIG", "RetrieverConfig"],
        "errors": ["RetrieverError", "StoreNotReadyError"],
        "fusion": ["DEFAULT_WEIGHTS", "FusionWeights"],
        "knowledge": ["KnowledgeBase", "QuestionHit", "served_build"],
        "result": ["Example", "RankedDatabase", "RankedTable", "RetrievalResult"],
        "prepared": ["Prepared"],
        "retriever": ["Retriever"],
        "signal": ["Signal", "SignalSpec"],
        "tables": ["TableEntry", "entries_from_catalog"],
    },
)

__all__ = [
    "ABSTAIN_THRESHOLD",
    "DEFAULT_CONFIG",
    "DEFAULT_WEIGHTS",
    "Example",
    "FusionWeights",
    "KnowledgeBase",
    "Prepared",
    "QuestionHit",
    "RankedDatabase",
    "RankedTable",
    "RetrievalResult",
    "Retriever",
    "RetrieverConfig",
    "RetrieverError",
    "Signal",
    "SignalSpec",
    "StoreNotReadyError",
    "TableEntry",
    "complete_tables",
    "entries_from_catalog",
    "fk_adjacency",
    "served_build",
]
