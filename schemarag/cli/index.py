"""`schemarag index build` and `schemarag index status` (and, from `schemarag.cli.examples`,
the commands for users' examples)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from indexer import (
    BuildConfig,
    BuildServices,
    auto_processes,
    build_index,
    index_status,
    make_chain_runner,
    make_feedback,
    make_synthesizer,
)
from indexer.building.metered import CallCounter, CountingEmbedder, CountingLLM, MeteredLLM
from indexer.synthesis.batch_api import make_batching
from providers import (
    LLM,
    CachedEmbedder,
    CachedLLM,
    Embedder,
    ProviderCache,
    UsageMeter,
    at_precision,
)
from schemagraph.sources.remembered import source_records
from schemarag.cli.common import (
    add_command,
    add_output,
    add_precision,
    add_sources,
    add_traversal_options,
    load_sources,
    print_json,
    traversal_config,
)
from schemarag.cli.examples import register_example_commands
from schemarag.settings import Settings
from store import CollectionLayout, StoreLocation

#: families (and containment groups) listed by `index status` before "... N more"
FAMILY_LINES = 20


def register(sub: argparse._SubParsersAction) -> None:
    index = add_command(sub, "index")
    index_sub = index.add_subparsers(dest="index_command", metavar="COMMAND", required=True)

    build = index_sub.add_parser("build", help="build or update the knowledge base (incremental)")
    add_sources(build)
    add_store_options(build)
    build.add_argument(
        "--synthesizer",
        default="template",
        help="template (offline default) or an LLM spec such as anthropic:claude-sonnet-4-5",
    )
    build.add_argument(
        "--feedback",
        default=None,
        help="ICRL feedback: rule (offline) or an LLM spec; default: the synthesizer's LLM, "
        "else rule",
    )
    build.add_argument(
        "--embedder", default=None, help="embedder spec (default: settings, minilm+schema)"
    )
    add_precision(
        build,
        default="auto",
        help="MiniLM's precision (default auto: bfloat16 where the CPU runs it natively, as the "
        "server embeds questions; 1.45x faster, cosine 0.99997 with fp32)",
    )
    build.add_argument("--iterations", type=int, default=2, help="ICRL iterations (default 2)")
    build.add_argument("--chains", type=int, default=3, help="questions per traversal (default 3)")
    build.add_argument("--full", action="store_true", help="rebuild everything, not only changes")
    build.add_argument(
        "--routing-keys",
        action="store_true",
        help="on warehouses, also index each traversal's pairs as SQLite's phrasing would write "
        "them, to vote and never be shown (Spider 2.0-lite: +2.9 db_R@1 from tables.json, "
        "+2.2 from the engines' exports, where twins as one lose 1.1)",
    )
    build.add_argument("--concurrency", type=int, default=4, help="parallel synthesis calls")
    build.add_argument(
        "--processes",
        type=int,
        default=None,
        help="processes for offline synthesis (default: one per core; 0: none)",
    )
    build.add_argument(
        "--batch",
        action="store_true",
        help="send LLM calls through the Anthropic Message Batches API, --concurrency at a time "
        "(use a large --concurrency, e.g. 500)",
    )
    build.add_argument("--no-execute", action="store_true", help="validate SQL without running it")
    build.add_argument("--no-cache", action="store_true", help="do not use the provider cache")
    add_output(build, "--report", metavar="OUT.json", help="write the build report")
    layout = build.add_argument_group(
        "Qdrant server layout", "how a server store holds the collections (docs/OPERATIONS.md)"
    )
    layout.add_argument("--shards", type=int, help="shards of the question collection")
    layout.add_argument("--replicas", type=int, help="copies of every shard (replication factor)")
    layout.add_argument("--on-disk", action="store_true", help="vectors and payloads on disk")
    layout.add_argument(
        "--quantize", action="store_true", help="int8 scalar quantization, kept in RAM"
    )
    add_traversal_options(build)
    build.set_defaults(func=cmd_build)

    status = index_sub.add_parser("status", help="what the store holds and when it was built")
    add_store_options(status)
    status.add_argument("--json", action="store_true", help="print JSON")
    status.set_defaults(func=cmd_status)
    register_example_commands(index_sub, add_store_options, store_location)


def add_store_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store", default=None, help="folder (embedded Qdrant) or http(s) URL of a Qdrant server"
    )
    parser.add_argument("--collection", default="schemarag", help="collection name prefix")


def store_location(args: argparse.Namespace, settings: Settings) -> StoreLocation:
    return StoreLocation.parse(
        args.store or settings.store_path,
        collection=args.collection,
        api_key=settings.qdrant_api_key,
    )


def cmd_build(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    catalog = load_sources(args)
    location = store_location(args, settings)
    meter = UsageMeter(settings.prices)
    cache = None if args.no_cache else ProviderCache(settings.cache_path)
    counter = CallCounter()
    try:
        embedder: Embedder = CountingEmbedder(
            at_precision(settings.embedder(args.embedder), args.precision), counter
        )
        if cache is not None:
            embedder = CachedEmbedder(embedder, cache)
        llm: LLM | None = None
        spec = args.synthesizer if args.synthesizer != "template" else args.feedback
        if spec not in (None, "rule"):
            provider: LLM = settings.llm(spec)
            if args.batch:
                provider = make_batching(provider, max_pending=args.concurrency)
            llm = CountingLLM(provider, counter)
            if cache is not None:
                llm = CachedLLM(llm, cache)
            llm = MeteredLLM(llm, meter, "index", batch=args.batch)
        synthesizer = make_synthesizer(args.synthesizer, llm)
        feedback = make_feedback(args.feedback, llm)
        config = BuildConfig(
            traversal=traversal_config(args),
            chains=args.chains,
            iterations=args.iterations,
            seed=args.seed,
            full=args.full,
            concurrency=args.concurrency,
            processes=(auto_processes() if llm is None else 0)
            if args.processes is None
            else args.processes,
            execute_sql=not args.no_execute,
            layout=CollectionLayout(args.shards, args.replicas, args.on_disk, args.quantize),
            routing_keys=args.routing_keys,
        )
        services = BuildServices(
            synthesize=make_chain_runner(
                synthesizer,
                feedback,
                chains=config.chains,
                iterations=config.iterations,
                execute_sql=config.execute_sql,
                repair_llm=llm,
            ),
            synthesizer_name=synthesizer.name,
            embedder=embedder,
            progress=progress_printer(),
            notify=lambda line: print(line, file=sys.stderr, flush=True),
            usage=lambda: {
                "provider_calls": counter.calls,
                "cache_hits": cache.stats().hits if cache is not None else 0,
                "usage": meter.report(),
            },
            offline=llm is None,
        )
        report = build_index(
            catalog,
            location,
            services,
            config,
            sources=source_records(
                args.sources,
                schemas=[p for group in args.schemas for p in group],
                exclude=[p for group in args.exclude for p in group],
            ),
        )
    finally:
        if cache is not None:
            cache.close()
    for line in report.lines():
        print(line)
    if args.report:
        args.report.write_text(json.dumps(report.as_dict(), indent=2))
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    status = index_status(store_location(args, settings))
    if args.json:
        print_json(status)
        return 0
    pending = None
    if status.get("running"):
        pending = f"building     {status['pending']} now ({status['running']})"
    elif status.get("pending"):
        pending = (
            f"pending      {status['pending']} (an interrupted build; the next build resumes it)"
        )
    if not status.get("build_id"):
        print(f"no index at {status['store']}: build one with `schemarag index build SOURCE...`")
        if pending:
            print(pending)
        return 1
    print(f"store        {status['store']}")
    print(f"build        {status['build_id']} (created {status['created_at']})")
    print(f"databases    {status['databases']}, tables {status['tables']}")
    print(f"questions    {status['questions']}")
    kept = status.get("user_examples_kept", 0)
    in_build = status.get("user_examples") or 0
    if kept or in_build:
        print(
            f"user examples {in_build} in this build, {kept} kept"
            + (f" ({kept - in_build} left out: a table changed since)" if kept > in_build else "")
        )
    print(f"embedder     {status['embedder']} ({status['dim']} dims)")
    print(f"synthesizer  {status['synthesizer']}")
    if status.get("sources"):
        print(f"sources      {' '.join(status['sources'])}")
    for group in status["twins"]:
        kind = "identical" if group["identical"] else f"similarity {group['similarity']}"
        differ = "; ".join(f"{m} alone has {', '.join(n)}" for m, n in group["only"].items())
        print(
            f"twins        {', '.join(group['members'])} ({kind}{'; ' + differ if differ else ''})"
        )
    containment = status.get("containment", [])
    for group in containment[:FAMILY_LINES]:
        copies = "; ".join(f"{copy} adds {_some(group['adds'][copy])}" for copy in group["copies"])
        print(f"contained    {group['base']} in {copies}")
    if len(containment) > FAMILY_LINES:
        print(f"contained    ... {len(containment) - FAMILY_LINES} more (index status --json)")
    families = status.get("families", [])
    for family in families[:FAMILY_LINES]:
        low, high = family["range"]
        print(
            f"family       {family['database']}.{family['pattern']} "
            f"({family['tables']} tables, {low} to {high})"
        )
    if len(families) > FAMILY_LINES:
        print(f"family       ... {len(families) - FAMILY_LINES} more (index status --json)")
    if pending:
        print(pending)
    return 0


def _some(names: list[str], shown: int = 3) -> str:
    """`a, b, c and 5 more`."""
    more = len(names) - shown
    return ", ".join(names[:shown]) + (f" and {more} more" if more > 0 else "")


#: what each build stage counts, as the progress lines say it
STAGES = {
    "synthesize": ("synthesizing", "synthesized", "traversals"),
    "load": ("loading", "loaded", "questions into the store"),
    "tables": ("embedding", "embedded", "table documents"),
}


def progress_printer() -> Callable[[str, int, int], None]:
    """Progress of every build stage on stderr: a bar on a terminal, a line per 10 % otherwise
    (so a log shows that a long stage is moving)."""
    tty = sys.stderr.isatty()
    last: dict[str, int] = {}

    def show(stage: str, done: int, total: int) -> None:
        doing, did, what = STAGES.get(stage, (stage, stage, "items"))
        percent = 100 * done // max(total, 1)
        if tty:
            bar = "#" * (percent // 4)
            print(f"\r{doing:<12} [{bar:<25}] {done}/{total}", end="", file=sys.stderr)
            if done >= total:
                print(file=sys.stderr)
        elif percent // 10 != last.get(stage, -1) // 10 or done >= total:
            print(f"{did} {done}/{total} {what} ({percent}%)", file=sys.stderr)
        last[stage] = percent

    return show
