"""`schemarag mcp`: the knowledge base as an MCP server, for assistants and agents.

Serves the store `serve` serves (new builds swap in without a restart) over stdio, the transport
desktop clients start (Claude Desktop, Claude Code, Cursor), or streamable HTTP at
http://HOST:PORT/mcp with `--transport http`: on 127.0.0.1 by default, any other address only
with an API key (SCHEMARAG_API_KEY, the HTTP API's). `--source` gives the catalog the index was
built from (default: the sources the store's build recorded, loaded once the index answers:
`find_tables` and `list_databases` name tables from the store until then): without any, only
`find_tables`, `list_databases` and `check_sql` (which then says what it lacks) are offered.
`generate_sql` is offered when SCHEMARAG_LLM names a language model (and `--source` is given).
"""

from __future__ import annotations

import argparse
import os
import sys

from schemarag.cli.common import add_command, add_served_store, at_least, fraction

DEFAULT_PORT = 8765


def register(sub: argparse._SubParsersAction) -> None:
    parser = add_command(sub, "mcp")
    parser.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default="stdio",
        help="stdio (default: what desktop clients start) or streamable HTTP",
    )
    parser.add_argument("--host", default="127.0.0.1", help="with --transport http")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="with --transport http")
    add_served_store(parser)
    parser.add_argument(
        "--source",
        action="append",
        metavar="KIND:PATH",
        help="catalog the index was built from, repeatable (default: the sources the store's "
        "build recorded): enables describe_tables, run_sql and (with SCHEMARAG_LLM) generate_sql",
    )
    parser.add_argument(
        "--examples", type=at_least(0), default=3, help="example questions find_tables returns"
    )
    parser.add_argument(
        "--abstain-below",
        type=fraction,
        default=None,
        help="confidence under which find_tables proposes no database",
    )
    parser.add_argument(
        "--budget",
        type=at_least(200),
        default=3000,
        help="describe_tables' default token budget (default 3000)",
    )
    parser.add_argument(
        "--timeout", type=float, default=5.0, metavar="S", help="run_sql's time limit (default 5)"
    )
    parser.set_defaults(func=cmd_mcp)


def cmd_mcp(args: argparse.Namespace) -> int:
    from providers import ConfigurationError, MissingDependencyError
    from retriever import ABSTAIN_THRESHOLD
    from schemarag.cli.serve import check_exposure
    from schemarag.settings import Settings
    from store import StoreLocation

    settings = Settings.from_env()
    if args.transport == "http":
        check_exposure(args.host, settings.api_key)
        if not 0 < args.port < 65536:
            raise ConfigurationError(f"--port must be in 1..65535, got {args.port}")
    if not 0 < args.timeout <= 300:
        raise ConfigurationError(f"--timeout must be in (0, 300] seconds, got {args.timeout:g}")
    StoreLocation.parse(args.store or settings.store_path)  # a file is refused here
    if args.abstain_below is None:
        args.abstain_below = ABSTAIN_THRESHOLD
    import importlib.util

    if importlib.util.find_spec("mcp") is None:  # optional: the SDK is imported below
        raise MissingDependencyError("mcp", "mcp", "schemarag mcp")
    from schemagraph import Catalog
    from schemagraph.sql import close_engines
    from schemarag.api import ApiOptions, ServedIndex
    from schemarag.cli.common import load_given_sources, use_remembered_sources
    from schemarag.cli.serve import store_source
    from schemarag.cli.stopping import Terminated
    from schemarag.mcp.estate import DescribeLimits, Estate, generation_pipeline
    from schemarag.pending_catalog import PendingCatalog

    options = ApiOptions.from_env()
    location = StoreLocation.parse(args.store or settings.store_path, collection=args.collection)
    manifest = use_remembered_sources(args, location)
    given = not getattr(args, "sources_remembered", False)
    source = store_source(args, settings)
    served = ServedIndex(source, interval_s=options.reload_interval_s)
    catalog: Catalog | PendingCatalog | None = None
    generate = None
    if args.source and (given or settings.llm_spec or manifest is None or not manifest.dialects):
        # a source typed on the command line is checked at once; generation reads the catalog;
        # a build that predates its dialects names nothing without it. The catalog first then
        # (loaded beside the index, the two held the interpreter lock in turns and the first
        # list_databases at 1,000 databases took 3 times longer)
        catalog = load_given_sources(args)
        if settings.llm_spec:
            generate = generation_pipeline(catalog, settings.llm())
    elif args.source:  # remembered by the build, which loaded it: the index first, so that
        # find_tables answers before the catalog has loaded
        catalog = PendingCatalog(lambda: load_given_sources(args), after=lambda: served.settled)
    served.start()
    estate = Estate(
        served,
        catalog,
        generate=generate,
        describe=DescribeLimits(budget_tokens=args.budget),
        timeout_s=args.timeout,
        manifest=manifest,
    )
    if isinstance(catalog, PendingCatalog):
        catalog.start()
    try:  # the SDK (its import takes a while the index is loading for)
        from schemarag.mcp.run import run_http, run_stdio
        from schemarag.mcp.server import create_server
    except ImportError as exc:
        served.stop()
        raise MissingDependencyError(exc.name or "mcp", "mcp", "schemarag mcp") from exc
    server = create_server(estate)
    where = "stdio" if args.transport == "stdio" else f"http://{args.host}:{args.port}/mcp"
    print(
        f"schemarag: MCP server for {source.where} on {where}"
        + (
            f" (API key {'required' if settings.api_key else 'off'})"
            if args.transport == "http"
            else ""
        )
        + (
            ""
            if estate.has_catalog
            else "; no catalog (no --source, none remembered): describe_tables and run_sql are "
            "off, check_sql cannot answer"
        ),
        file=sys.stderr,
    )

    def close() -> None:
        served.stop()
        source.close()
        close_engines()

    try:
        if args.transport == "stdio":
            run_stdio(server)
        else:
            run_http(
                server,
                host=args.host,
                port=args.port,
                api_key=settings.api_key,
                max_body_bytes=options.max_body_bytes,
            )
    except (Terminated, KeyboardInterrupt) as stop:
        if args.transport != "stdio":
            raise
        # The SDK reads stdin on a worker thread that no signal wakes, and the interpreter
        # would wait for it at exit (until the client closes stdin): leave without it.
        close()
        interrupted = isinstance(stop, KeyboardInterrupt)
        print(
            f"schemarag: {'interrupted' if interrupted else 'terminated (SIGTERM)'}",
            file=sys.stderr,
        )
        sys.stderr.flush()
        os._exit(130 if interrupted else 143)
    finally:
        close()
    return 0
