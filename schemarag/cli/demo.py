"""`schemarag demo`: the main job on the embedded default, over the bundled sample schemas.

Loads the sample (eight Spider databases), prints the graph and a few traversals, builds the
knowledge base offline (template synthesis, ICRL with rule feedback, local embedder, embedded
Qdrant), prints the build report (a second run is incremental and finishes at once), and answers
a few questions with the retriever. SQL generation needs a language model: with SCHEMARAG_LLM
set it runs too, otherwise the demo says which settings to provide.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
from pathlib import Path

from indexer import (
    BuildConfig,
    BuildServices,
    build_index,
    make_chain_runner,
    make_feedback,
    make_synthesizer,
)
from indexer.building.metered import CallCounter, CountingEmbedder
from providers import CachedEmbedder, ProviderCache, at_precision
from retriever import Retriever
from schemagraph import (
    TraversalConfig,
    build_graph,
    counted,
    create_table_text,
    enumerate_traversals,
    graph_stats,
    sample_database,
)
from schemagraph.sources.remembered import source_records
from schemarag.cli.common import DEMO_STORE, add_command, load
from schemarag.cli.retrieve import cached, make_query_embedder
from schemarag.samples import SAMPLE_SOURCE, SPIDER_SAMPLE
from schemarag.settings import Settings
from store import StoreLocation

QUESTIONS = (
    "How many pets does each student own?",
    "Which stadium hosted the most concerts?",
    "What is the average horsepower of cars made in 1980?",
)


def register(sub: argparse._SubParsersAction) -> None:
    demo = add_command(sub, "demo")
    demo.add_argument("--traversals", type=int, default=2, help="traversals to print (default 2)")
    demo.add_argument(
        "--store", type=Path, default=DEMO_STORE, help=f"where to build (default {DEMO_STORE})"
    )
    demo.set_defaults(func=cmd_demo)


def cmd_demo(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    location = StoreLocation.parse(args.store)  # a bad --store stops the demo before any work
    print(f"== 1. Loading the bundled sample schemas ({SAMPLE_SOURCE})")
    catalog = load([SAMPLE_SOURCE])
    graph = build_graph(catalog)
    stats = graph_stats(graph)
    print(
        f"{counted(stats.databases, 'database')}, {counted(stats.tables, 'table')}, "
        f"{counted(stats.foreign_keys, 'foreign key')} joining "
        f"{counted(stats.foreign_key_edges, 'pair')} of tables"
    )
    config = TraversalConfig(seed=0)
    traversals = enumerate_traversals(graph, config)
    print(f"{len(traversals)} traversals (cutoff {config.cutoff}, seed {config.seed})")
    joins = [t for t in traversals if len(t.tables) == config.cutoff][: args.traversals]
    for traversal in joins:
        db = catalog.database(traversal.db_id)
        print(f"\n-- traversal {' -> '.join(traversal.path)}")
        print(create_table_text(db, traversal.tables, sample_database(db, seed=config.seed)))

    print(f"\n== 2. Building the knowledge base at {args.store} (offline: templates + ICRL)")
    build = BuildConfig(traversal=config)
    runner = make_chain_runner(
        make_synthesizer("template", None),
        make_feedback("rule", None),
        chains=build.chains,
        iterations=build.iterations,
    )
    with ProviderCache(settings.cache_path) as cache:
        counter = CallCounter()
        build_embedder = at_precision(settings.embedder(), "auto")  # as `index build` does
        cached_embedder = CachedEmbedder(CountingEmbedder(build_embedder, counter), cache)
        services = BuildServices(
            runner,
            "template",
            cached_embedder,
            usage=lambda: {"provider_calls": counter.calls, "cache_hits": cache.stats().hits},
        )
        report = build_index(
            catalog, location, services, build, sources=source_records([SAMPLE_SOURCE])
        )
    for line in report.lines():
        print(line)

    print("\n== 3. Retrieval: which database, which tables?")
    embedder = make_query_embedder(settings, None)
    with Retriever.open(
        args.store, embedder, vocabulary_embedder=cached(settings, embedder)
    ) as retriever:
        for question in QUESTIONS:
            result = retriever.retrieve(question, top_databases=3)
            best = result.databases[0]
            others = ", ".join(f"{d.db_id} {d.score:.2f}" for d in result.databases[1:])
            print(f"\nQ: {question}")
            print(
                f"   -> {best.db_id} (score {best.score:.2f}, confidence {result.confidence:.2f}); "
                f"tables {', '.join(best.chosen_tables)}; then {others}; "
                f"{result.timings.get('total_ms', 0):.0f} ms"
            )
            if result.examples:
                print(f"   nearest synthetic example: {result.examples[0].question}")

    me, store = _invocation(), shlex.quote(_relative(args.store))
    print("\n== 4. SQL generation")
    if settings.llm_spec is None:
        for line in no_llm_lines(me, store):
            print(line)
    else:
        print(f'run: {me} ask "{QUESTIONS[0]}" --store {store} --execute')

    print("\n== Next: query what the demo built")
    for command in try_commands(me, store, shlex.quote(_relative(SPIDER_SAMPLE))):
        print(f"  {command}")
    return 0


def no_llm_lines(me: str, store: str) -> list[str]:
    """What to set for generation, the model run in process included (named by its path when
    `benchmarks/fetch_local_model.py` has fetched one here)."""
    fetched = sorted(Path(".schemarag/models").glob("*.gguf"))
    local = shlex.quote(str(fetched[0])) if fetched else "PATH.gguf"
    fetch = (
        ""
        if fetched
        else "; `python benchmarks/fetch_local_model.py` fetches Qwen2.5-Coder-0.5B, 491 MB"
    )
    return [
        "skipped: generation needs a language model. Set SCHEMARAG_LLM (or pass --llm SPEC):",
        "  SCHEMARAG_LLM=anthropic:MODEL with ANTHROPIC_API_KEY",
        "  SCHEMARAG_LLM=openai:MODEL with SCHEMARAG_OPENAI_BASE_URL (a local server)",
        f"  SCHEMARAG_LLM=llamacpp:{local} (a GGUF model run in process: "
        f"`pip install 'schemarag[local]'`{fetch})",
        f'then: {me} ask "QUESTION" --store {store} --execute',
    ]


def try_commands(me: str, store: str, sample: str) -> list[str]:
    """Commands that query the demo's store and sample (the README's first examples)."""
    db = f"{sample}/database/concert_singer/concert_singer.sqlite"
    return [
        f'{me} retrieve "Which singers are from France?" --store {store}',
        f"{me} catalog show spider:{sample} --db concert_singer",
        f"{me} sql run --db {db} \"SELECT Name, Country FROM singer WHERE Country = 'France'\"",
    ]


def _invocation() -> str:
    """How to call this schemarag from the user's shell: its name if PATH finds this one,
    else its path (`.venv/bin/schemarag` after `make demo`)."""
    script = Path(sys.executable).parent / "schemarag"
    found = shutil.which("schemarag")
    if found and Path(found).resolve() == script.resolve():
        return "schemarag"
    return shlex.quote(_relative(script)) if script.exists() else f"{sys.executable} -m schemarag"


def _relative(path: Path) -> str:
    """`path` relative to the working folder when it lies below it, else absolute."""
    absolute = Path(os.path.abspath(path))
    try:
        return str(absolute.relative_to(Path.cwd()))
    except ValueError:
        return str(absolute)
