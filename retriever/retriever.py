"""`Retriever`: a question in, ranked databases and tables out.

    retriever = Retriever.open(".schemarag/store")  # the embedder its build names
    result = retriever.retrieve("How many singers are from France?")
    result.databases[0].db_id, result.databases[0].chosen_tables, result.confidence

Everything heavy happens once, in `open`: the knowledge base, the table entries and vectors, the
BM25 index, the value index, the embedded schema vocabulary. A query embeds the question once
(and, in a worker thread meanwhile, its words that no schema name or earlier query explains),
runs one search over the synthetic questions (in memory for a folder, in Qdrant for a server),
turns its hits into votes (`retriever.votes`) and ranks with a few numpy operations
(`retriever.ranking`; `retriever.fusion` for how the signals are combined).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import numpy.typing as npt

from providers import LLM, Embedder, StructuredOutputError, make_embedder
from retriever.config import DEFAULT_CONFIG, RetrieverConfig
from retriever.errors import RetrieverError
from retriever.examples import ExamplePicker
from retriever.fusion import (
    Signals,
)
from retriever.knowledge import KnowledgeBase, QuestionHit, served_build
from retriever.lexical import SchemaLinker, TableBM25
from retriever.pooling import reorder
from retriever.prepared import Prepared, prepare
from retriever.question_index import Cells
from retriever.ranking import Ranker
from retriever.result import Example, RetrievalResult
from retriever.semantic import SemanticLinker, threshold_for
from retriever.signal import extra_weights, score_signals
from retriever.tables import TableEntry, group_by_database
from retriever.text import normalize_question
from retriever.votes import QuestionVotes
from schemagraph.model import fold
from store.location import StoreLocation
from store.manifest import Manifest

log = logging.getLogger(__name__)


class Retriever:
    """Ranks the databases and tables of a knowledge base for a question.

    `entries`/`vectors`: the table documents and their embeddings (row-aligned); `kb`: the
    knowledge base whose synthetic questions vote (None: table signals only); `config`: how it
    ranks (`RetrieverConfig`); `pool_llm`: LLM for schema pooling (None: off). With
    `config.semantic` it embeds the schema vocabulary here, once, with `vocabulary_embedder`
    when given (pass the same model behind a `providers.CachedEmbedder` so the next open reads
    it from the cache).
    """

    def __init__(
        self,
        entries: Sequence[TableEntry],
        vectors: npt.NDArray[np.float32],
        embedder: Embedder,
        *,
        kb: KnowledgeBase | None = None,
        config: RetrieverConfig = DEFAULT_CONFIG,
        pool_llm: LLM | None = None,
        vocabulary_embedder: Embedder | None = None,
    ) -> None:
        if not entries:
            raise RetrieverError("the knowledge base has no tables")
        if vectors.shape != (len(entries), embedder.dim):
            raise RetrieverError(
                f"vectors must have shape ({len(entries)}, {embedder.dim}), got {vectors.shape}"
            )
        self.entries = list(entries)
        self.vectors = np.asarray(vectors, dtype=np.float32)
        self.embedder = embedder
        self.kb = kb
        self.config = config
        self.pool_llm = pool_llm
        groups = group_by_database(self.entries)
        self.db_ids = [self.entries[idx[0]].db_id for idx in groups.values()]
        self._db_members = [np.asarray(idx, dtype=np.int64) for idx in groups.values()]
        self._db_of = np.zeros(len(self.entries), dtype=np.int64)
        for pos, idx in enumerate(self._db_members):
            self._db_of[idx] = pos
        self._entry_pos = {e.key: i for i, e in enumerate(self.entries)}
        self.votes = QuestionVotes(
            len(self.db_ids),
            len(self.entries),
            {key: i for i, key in enumerate(groups)},
            self._entry_pos,
            config.weights.temperature,
        )
        self.examples = ExamplePicker(self.entries, self._db_members)
        #: normalized synthetic questions never used as hits (the benchmark masks template
        #: records that happen to equal an evaluated question)
        self.masked: frozenset[str] = frozenset()
        #: past `config.table_cells_from` tables, the dense table signal is exact only in the cells
        #: near the question (`retriever.question_index.Cells.estimate`)
        self.table_cells = (
            Cells(self.vectors, probe=config.table_probe)
            if len(self.entries) >= config.table_cells_from
            else None
        )
        self.bm25 = TableBM25(self.entries)
        self.linker = SchemaLinker(self.entries)
        self.semantic: SemanticLinker | None = None
        self._executor: ThreadPoolExecutor | None = None
        if config.semantic:
            started = time.perf_counter()
            self.semantic = SemanticLinker(
                self.entries,
                self._db_of,
                len(self.db_ids),
                vocabulary_embedder or embedder,
                threshold=threshold_for(embedder.name),
            )
            # embeds a question's unknown units while `signals` embeds the question itself
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="schemarag-semantic")
            log.info(
                "semantic linker: %d schema names in %.1fs",
                len(self.semantic.names),
                time.perf_counter() - started,
            )
        #: the configuration's own signals (`retriever.signal`), opened on this retriever
        self.extra_signals = [spec.open(self) for spec in config.signals]
        weights = config.weights
        if config.signals:
            weights = weights.with_extra(extra_weights(config.signals, self.extra_signals))
        #: fusion, twins, table choice and confidence (`retriever.ranking`)
        self.ranker = Ranker(
            self.entries,
            self.vectors,
            self.db_ids,
            self._db_members,
            self._db_of,
            config=config,
            weights=weights,
            table_cells=self.table_cells,
            manifest=kb.manifest if kb is not None else None,
        )

    # -- construction ------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        store: str | Path | StoreLocation,
        embedder: Embedder | Callable[[str], Embedder] | None = None,
        *,
        collection: str = "schemarag",
        api_key: str | None = None,
        in_memory: bool | None = None,
        config: RetrieverConfig = DEFAULT_CONFIG,
        pool_llm: LLM | None = None,
        vocabulary_embedder: Embedder | Callable[[Embedder], Embedder] | None = None,
        served: tuple[str, Manifest] | None = None,
    ) -> Retriever:
        """A retriever over the served build of `store` (a folder or a Qdrant server URL): the
        one opener of the CLI, the HTTP app and the MCP server.

        `embedder`: the one the build used (its `name` is in the build's manifest), or a
        function that makes it from the embedder spec the manifest names, or None for
        `providers.make_embedder` of that spec. `in_memory`: search the synthetic questions
        from memory rather than through Qdrant (default: for a folder; see
        `retriever.knowledge`); `config`, `pool_llm`: as for `Retriever`;
        `vocabulary_embedder`: as for `Retriever`, or a function of the embedder; `served`:
        the build and manifest the caller read (`retriever.knowledge.served_build`), else
        read here, once."""
        location = (
            store
            if isinstance(store, StoreLocation)
            else StoreLocation.parse(store, collection=collection, api_key=api_key)
        )
        served = served if served is not None else served_build(location)
        if embedder is None or (callable(embedder) and not isinstance(embedder, Embedder)):
            make = embedder if embedder is not None else make_embedder
            embedder = make(served[1].embedder_spec())
        if vocabulary_embedder is not None and not isinstance(vocabulary_embedder, Embedder):
            vocabulary_embedder = vocabulary_embedder(embedder)
        kb = KnowledgeBase.open(
            location, embedder_name=embedder.name, in_memory=in_memory, served=served
        )
        try:
            entries, vectors = kb.table_entries()
            return cls(
                entries,
                vectors,
                embedder,
                kb=kb,
                config=config,
                pool_llm=pool_llm,
                vocabulary_embedder=vocabulary_embedder,
            )
        except BaseException:
            kb.close()
            raise

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False)
        if self.kb is not None:
            self.kb.close()

    def __enter__(self) -> Retriever:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def prepare(self, questions: Sequence[str]) -> list[Prepared]:
        """Many questions' embeddings and nearest synthetic questions, computed together for
        `retrieve(..., prepared=)` (`retriever.prepared.prepare`)."""
        return prepare(questions, self.embedder, self.semantic, self.kb, self.config.question_hits)

    def signals(
        self, question: str, prepared: Prepared | None = None
    ) -> tuple[Signals, list[QuestionHit], dict[str, float]]:
        """The raw signals of `question` (embedded and searched here unless `prepared`), the
        question hits, and the time each step took."""
        timings: dict[str, float] = {}
        t0 = time.perf_counter()
        if prepared is not None:
            pending = prepared.links
        else:
            pending = self.semantic.start(question, self._executor) if self.semantic else None
        vector = self.embedder.embed_query(question) if prepared is None else prepared.vector
        t1 = time.perf_counter()
        timings["embed_ms"] = (t1 - t0) * 1000
        hits: list[QuestionHit] = []
        if self.kb is not None:
            if prepared is None:
                hits = self.kb.search_questions(vector, self.config.question_hits)
            else:
                hits = prepared.hits
            if self.masked:
                hits = [h for h in hits if normalize_question(h.question) not in self.masked]
        t2 = time.perf_counter()
        timings["questions_ms"] = (t2 - t1) * 1000
        if self.table_cells is not None:
            dense = self.table_cells.estimate(vector).astype(np.float64)
        else:
            dense = (self.vectors @ vector).astype(np.float64)
        bm25 = self.bm25.scores(question)
        links = self.linker.link(question)
        t3 = time.perf_counter()
        timings["tables_ms"] = (t3 - t2) * 1000
        table_signals = {
            "dense": dense,
            "bm25": bm25,
            "names": links.names,
            "values": links.values,
        }
        database_signals = {}
        if self.semantic is not None and pending is not None:
            semantic = self.semantic.finish(pending)
            table_signals["semantic"] = semantic.tables
            database_signals["semantic"] = semantic.databases
            t3b = time.perf_counter()
            timings["semantic_ms"] = (t3b - t3) * 1000
            t3 = t3b
        if self.extra_signals:
            table_extra, database_extra = score_signals(
                self.extra_signals, question, vector, len(self.entries), len(self.db_ids)
            )
            table_signals.update(table_extra)
            database_signals.update(database_extra)
            t3b = time.perf_counter()
            timings["signals_ms"] = (t3b - t3) * 1000
            t3 = t3b
        votes = self.votes.of(hits)
        signals = Signals(
            table=table_signals,
            db_votes=votes.db_votes,
            table_votes=votes.table_votes,
            vector=vector,
            database=database_signals,
            user_db=votes.user_db,
            user_table=votes.user_table,
            synthetic_best=votes.synthetic_best,
            user_share=votes.user_share,
        )
        return signals, hits, timings

    def retrieve(
        self,
        question: str,
        top_databases: int = 5,
        top_tables: int = 10,
        *,
        prepared: Prepared | None = None,
        dialect: str | None = None,
    ) -> RetrievalResult:
        """Rank databases and tables for `question` (the module docstring); `prepared`: its
        embedding and hits, made with others' (`prepare`); `dialect`: see `Ranker.rank`."""
        if not question.strip():
            raise RetrieverError("the question is empty")
        if top_databases < 1 or top_tables < 1:
            raise RetrieverError("top_databases and top_tables must be >= 1")
        started = time.perf_counter()
        signals, hits, timings = self.signals(question, prepared)
        t0 = time.perf_counter()
        ranked = self.ranker.rank(question, signals, hits, top_databases, top_tables, dialect)
        databases = list(ranked.databases)
        timings["fuse_ms"] = (time.perf_counter() - t0) * 1000
        t1 = time.perf_counter()
        examples: list[Example] = []
        if self.config.examples and self.kb is not None and signals.vector is not None:
            examples = self.examples.pick(
                question, signals.vector, hits, ranked.best, self.kb, self.config.examples
            )
        timings["examples_ms"] = (time.perf_counter() - t1) * 1000
        timings["total_ms"] = (time.perf_counter() - started) * 1000
        pooled, pooling_error = False, None
        if self.pool_llm is not None:
            t2 = time.perf_counter()
            try:
                databases = reorder(
                    self.pool_llm,
                    question,
                    databases,
                    self.config.pool_candidates,
                    lambda db, table: self.entries[self._entry_pos[(fold(db), fold(table))]].text,
                )
                pooled = True
            except StructuredOutputError as exc:
                # A reply the model botched costs this question its pooling, not its answer;
                # an unreachable provider or a bad key still fails the call.
                log.warning("pooling reply not used, ranking kept: %s", exc)
                pooling_error = f"unusable reply: {exc.reason}"
            timings["pooling_ms"] = (time.perf_counter() - t2) * 1000
        return RetrievalResult(
            question=question,
            databases=tuple(databases),
            tables=ranked.tables,
            confidence=round(ranked.confidence, 4),
            abstained=ranked.confidence < self.config.abstain_below,
            examples=tuple(examples),
            timings={k: round(v, 3) for k, v in timings.items()},
            pooled=pooled,
            twins=ranked.twins,
            pooling_error=pooling_error,
            also_in=ranked.also_in,
        )
