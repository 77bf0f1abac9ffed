"""`schemarag serve`: the HTTP API over a knowledge base, with uvicorn.

Listens on 127.0.0.1:8000 by default. Any other address needs an API key (SCHEMARAG_API_KEY):
without one the command stops with a one-line error and exit status 2, and so does a store path
that is a file (it would otherwise serve 503 for good). New builds of the store are picked up
while serving (see `schemarag.api.served`).

`--workers N` runs N server processes on one port (uvicorn's supervisor), each with its own
copy of the index and the model: Python runs one thread at a time per process, so on a machine
with several cores this is how retrieval uses them. Each worker rebuilds the app from the
command's options, passed in the environment variable `SCHEMARAG_SERVE_ARGS`.

Without `--source`, the catalog is loaded from the sources the store's build was made from
(recorded in its manifest), in the background once the index has loaded
(`schemarag.pending_catalog`): `/readyz` does not wait for it, the routes that read it do. A
recorded file or folder that moved stops the command with one line naming it and `--source`.
A catalog given with `--source`, or one generation needs, is read before the server starts.
"""

from __future__ import annotations

import argparse
import dataclasses
import ipaddress
import json
import logging
import os
import sys
from typing import TYPE_CHECKING, Any

from providers import LLM, ConfigurationError, Embedder, MissingDependencyError, ProviderCache
from retriever import ABSTAIN_THRESHOLD
from schemagraph.parent_watch import exit_with_parent
from schemarag.cli.common import (
    add_command,
    add_served_store,
    load_given_sources,
    use_remembered_sources,
)
from schemarag.settings import Settings
from store import StoreLocation

if TYPE_CHECKING:
    from fastapi import FastAPI

    from retriever import RetrieverConfig
    from schemarag.api import Generation, StoreSource

log = logging.getLogger(__name__)


def register(sub: argparse._SubParsersAction) -> None:
    parser = add_command(sub, "serve")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=8000)
    add_served_store(parser)
    parser.add_argument(
        "--source",
        action="append",
        metavar="KIND:PATH",
        help="catalog the index was built from, repeatable (default: the sources the store's "
        "build recorded); enables POST /v1/examples, and POST /v1/generate (with SCHEMARAG_LLM)",
    )
    parser.add_argument(
        "--pool", default=None, metavar="LLM", help="LLM spec behind `pool: true` (default: off)"
    )
    parser.add_argument("--examples", type=int, default=3, help="few-shot examples per answer")
    parser.add_argument(
        "--abstain-below",
        type=float,
        default=ABSTAIN_THRESHOLD,
        help=f"confidence under which no database is proposed (default {ABSTAIN_THRESHOLD})",
    )
    parser.add_argument(
        "--log-questions",
        action="store_true",
        default=None,
        help="put question text in the request log (default: off; SCHEMARAG_LOG_QUESTIONS)",
    )
    parser.add_argument(
        "--no-access-log", action="store_true", help="do not write one log line per request"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="server processes sharing the port, each with its own copy of the index "
        "(default 1; about one per two cores)",
    )
    parser.set_defaults(func=cmd_serve)


#: the options a worker process rebuilds its app from (see the module docstring)
ARGS_ENV = "SCHEMARAG_SERVE_ARGS"
SUPERVISOR = "supervisor_pid"
_WORKER_ARGS = (
    "store",
    "collection",
    "embedder",
    "source",
    "source_schemas",
    "source_exclude",
    "pool",
    "examples",
    "abstain_below",
    "log_questions",
    "no_access_log",
)


def is_loopback(host: str) -> bool:
    """True for localhost and loopback addresses (127.0.0.0/8, ::1); false for everything else,
    including 0.0.0.0, :: and host names other than localhost."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_exposure(host: str, api_key: str | None) -> None:
    if not api_key and not is_loopback(host):
        raise ConfigurationError(
            f"refusing to listen on {host} without an API key: set SCHEMARAG_API_KEY, "
            "or listen on 127.0.0.1"
        )


_BLAS_LIMIT: list[object] = []  # keeps the threadpoolctl limiter alive


def limit_blas_threads() -> None:
    """One BLAS thread per numpy call. A server gets its parallelism from concurrent requests;
    OpenBLAS threads per matrix product only spin against each other (measured with 16 clients
    on Spider: 77 ms of server CPU per request with the default, 29 ms with one thread)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        log.warning("threadpoolctl is not installed: BLAS keeps one thread per core")
        return
    _BLAS_LIMIT.append(threadpool_limits(limits=1, user_api="blas"))


def cmd_serve(args: argparse.Namespace) -> int:
    settings = Settings.from_env()
    check_exposure(args.host, settings.api_key)
    StoreLocation.parse(args.store or settings.store_path)  # a file is refused here
    use_remembered_sources(args, _location(args, settings))
    if not 0 < args.port < 65536:
        raise ConfigurationError(f"--port must be in 1..65535, got {args.port}")
    if not 1 <= args.workers <= 64:
        raise ConfigurationError(f"--workers must be in 1..64, got {args.workers}")
    try:  # the server extra is optional: import it only for this command
        import uvicorn

        from schemarag.api import ApiOptions
    except ImportError as exc:
        raise MissingDependencyError(exc.name or "fastapi", "server", "schemarag serve") from exc
    run_options: dict[str, Any] = {
        "host": args.host,
        "port": args.port,
        "log_config": None,
        "access_log": False,
        "server_header": False,
        "timeout_graceful_shutdown": 10,
    }
    if args.workers == 1:
        app = make_app(args, settings)
        where = app.state.served.source.where
    else:
        # each worker builds its own app (`worker_app`); the options are checked here, so that
        # a mistake is one line from this command and not a traceback per worker
        location = _location(args, settings)
        where = location.where
        ApiOptions.from_env()
        retriever_config(args)
        make_generation(settings, args)
        if args.pool:
            settings.llm(args.pool)
        options = {name: getattr(args, name, None) for name in _WORKER_ARGS}
        os.environ[ARGS_ENV] = json.dumps({**options, SUPERVISOR: os.getpid()})
    print(
        f"schemarag: serving {where} on http://{args.host}:{args.port} "
        f"(API key {'required' if settings.api_key else 'off'}"
        f"{f', {args.workers} workers' if args.workers > 1 else ''})",
        file=sys.stderr,
    )
    if args.workers == 1:
        uvicorn.run(app, **run_options)
    else:
        uvicorn.run(
            "schemarag.cli.serve:worker_app", factory=True, workers=args.workers, **run_options
        )
    return 0


def worker_app() -> FastAPI:
    """The app of one `--workers` process, from the options in `SCHEMARAG_SERVE_ARGS`. The
    process ends by itself when the supervisor is gone (killed: a stopped supervisor stops its
    workers itself)."""
    options = json.loads(os.environ[ARGS_ENV])
    if (supervisor := options.pop(SUPERVISOR, None)) is not None:
        exit_with_parent(supervisor)
    args = argparse.Namespace(**options)
    return make_app(args, Settings.from_env())


def _location(args: argparse.Namespace, settings: Settings) -> StoreLocation:
    return StoreLocation.parse(
        args.store or settings.store_path,
        collection=args.collection,
        api_key=settings.qdrant_api_key,
    )


def make_app(args: argparse.Namespace, settings: Settings) -> FastAPI:
    """The app `args` describe, with this process's logging and BLAS threads set up."""
    from schemagraph import Catalog
    from schemarag.api import ApiOptions, create_app
    from schemarag.api.examples import ExampleIntake
    from schemarag.pending_catalog import PendingCatalog

    options = ApiOptions.from_env()
    if args.log_questions:
        options = dataclasses.replace(options, log_questions=True)

    location = _location(args, settings)
    source = store_source(args, settings)
    pool_llm: LLM | None = settings.llm(args.pool) if args.pool else None
    generation = make_generation(settings, args)
    examples = None
    catalog: Catalog | PendingCatalog | None = generation.catalog
    if args.source and catalog is None:
        if getattr(args, "sources_remembered", False):  # loaded by the build: after the index
            catalog = PendingCatalog(
                lambda: load_given_sources(args), after=lambda: app.state.served.settled
            )
        else:  # typed on the command line: checked at once
            catalog = load_given_sources(args)
    if catalog is not None:
        examples = ExampleIntake(catalog, location, source.embedder)
    app = create_app(
        settings,
        source,
        options=options,
        generation=generation,
        pool_llm=pool_llm,
        examples=examples,
    )
    if isinstance(catalog, PendingCatalog):
        catalog.start()
    configure_logging(access=not args.no_access_log)
    limit_blas_threads()
    return app


def store_source(args: argparse.Namespace, settings: Settings) -> StoreSource:
    """The store of `args` (`--store`, `--collection`, `--embedder`, `--examples`,
    `--abstain-below`) as `serve` reads it: MiniLM answering from NumPy at once and from torch,
    on one thread, once loaded in the background (`WarmingEmbedder`), the schema
    vocabulary's vectors in the provider cache (closed with the source)."""
    from schemarag.api import StoreSource, prepare_query_embedder
    from schemarag.cli.retrieve import single_threaded

    single_threaded(torch=False)  # one question at a time: one BLAS thread is fastest

    def make_embedder(spec: str) -> Embedder:
        return prepare_query_embedder(settings.embedder(spec), warming=True)

    return StoreSource(
        _location(args, settings),
        make_embedder=make_embedder,
        embedder_spec=args.embedder,
        config=retriever_config(args),
        cache=ProviderCache(settings.cache_path),
    )


def retriever_config(args: argparse.Namespace) -> RetrieverConfig:
    """The retriever configuration of `args` (`--examples`, `--abstain-below`)."""
    from retriever import RetrieverConfig

    return RetrieverConfig(examples=args.examples, abstain_below=args.abstain_below)


def make_generation(settings: Settings, args: argparse.Namespace) -> Generation:
    """The generation setup: the catalog of `--source` (or the sources the store remembers)
    and the LLM of SCHEMARAG_LLM."""
    from generator import Models
    from schemarag.api import Generation

    missing = []
    if not args.source:
        missing.append("start the server with the catalog the index was built from (--source)")
    if not settings.llm_spec:
        missing.append("set SCHEMARAG_LLM to a language model spec")
    if missing:
        return Generation.unavailable(*missing)
    return Generation(load_given_sources(args), Models((settings.llm(),)), prices=settings.prices)


def configure_logging(*, access: bool) -> None:
    """Lifecycle lines (index loads and swaps) at INFO; one JSON line per request on stderr."""
    logging.getLogger("schemarag.api").setLevel(logging.INFO)
    access_log = logging.getLogger("schemarag.api.access")
    access_log.propagate = False
    access_log.handlers.clear()
    if access:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        access_log.addHandler(handler)
        access_log.setLevel(logging.INFO)
    else:
        access_log.setLevel(logging.WARNING)
