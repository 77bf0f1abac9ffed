"""The routes: retrieval, generation, users' examples, index information, health, readiness and
metrics.

Retrieval awaits `RetrievalBatcher` (one thread runs the retrievals, their embeddings in
batches); retrieval with pooling and generation call language models and run on Starlette's
thread pool. The errors they let through are answered by `schemarag.api.error_statuses`.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, PlainTextResponse

from generator import GenerateRequest
from indexer.building.status import manifest_summary
from schemarag.api.batching import RetrievalBatcher
from schemarag.api.error_statuses import install_error_statuses
from schemarag.api.errors import ApiError, error_response
from schemarag.api.examples import CATALOG_WAIT_S, ExampleIntake
from schemarag.api.generation import Generation
from schemarag.api.metrics import CONTENT_TYPE, Registry
from schemarag.api.models import (
    ErrorBody,
    ExamplesRequest,
    ExamplesResponse,
    GenerateRequestBody,
    GenerateResponse,
    Health,
    IndexInfo,
    Readiness,
    RetrieveRequest,
    RetrieveResponse,
    SqlCheckRequest,
    SqlCheckResponse,
)
from schemarag.api.served import IndexNotReadyError, Loaded, ServedIndex
from schemarag.pending_catalog import catalog_of

log = logging.getLogger(__name__)

__all__ = ["install_routes"]

BUILD_HEADER = "X-Schemarag-Build"
EXAMPLES_PATH = "/v1/examples"
#: what each route's `ProviderError`s come from, as its 502 message says
PROVIDERS: Mapping[str, str] = {
    "/v1/retrieve": "model provider",
    "/v1/generate": "language model",
    EXAMPLES_PATH: "embedder",
}


def _errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    descriptions = {
        400: "the body cannot be read as JSON (not JSON, not UTF-8, nested too deeply); the "
        "message says why and where",
        401: "missing or wrong API key",
        408: "the request body did not arrive in full in time (a Content-Length larger than it)",
        409: "another build is running on the store; retry after it (Retry-After)",
        413: "the body is over the server's size limit (SCHEMARAG_MAX_BODY_BYTES; "
        "SCHEMARAG_MAX_EXAMPLES_BYTES for /v1/examples)",
        415: "a body that is not JSON and says so in its Content-Type (no Content-Type, "
        "or a form or plain text that holds JSON, is read as JSON)",
        422: "JSON that fails validation (the message names the field)",
        501: "not configured on this server",
        502: "a language model call failed",
        503: "no index loaded yet (the message says whether one is loading), or the vector "
        "store is unreachable",
    }
    return {s: {"model": ErrorBody, "description": descriptions[s]} for s in statuses}


def _not_ready(served: ServedIndex) -> ApiError:
    """The 503 of a request that needs a build while none is served: what the server is
    doing about it (`ServedIndex.pending`), and for an empty store, how to make one."""
    where = served.source.where
    pending = served.pending
    now = time.monotonic()
    retry_after = 2
    if pending.state == "loading":
        message = (
            f"the index is loading: build {pending.build} of {where}, started "
            f"{now - pending.since:.0f} s ago; retry in a moment"
        )
    elif pending.state == "failed":
        retry_after = max(1, math.ceil(pending.retry_at - now))
        message = (
            f"no index loaded: build {pending.build} of {where} failed to load "
            f"({pending.error}); the next try is in {retry_after} s (details in the server log)"
        )
    elif pending.state == "unreachable":
        message = f"no index loaded yet: cannot reach {where} to find a build ({pending.error})"
    elif pending.state == "starting":
        message = f"no index loaded yet: the server is starting and looking for a build in {where}"
    else:
        message = (
            f"no index loaded yet: {where} has no build; build one with `schemarag index build`"
            " (the server picks it up without a restart)"
        )
    return ApiError(503, "not_ready", message, headers={"Retry-After": str(retry_after)})


@contextmanager
def _leased(served: ServedIndex, request: Request) -> Iterator[Loaded]:
    try:
        with served.lease() as loaded:
            request.state.build_id = loaded.build_id
            yield loaded
    except IndexNotReadyError:
        raise _not_ready(served) from None


def install_routes(
    app: FastAPI,
    served: ServedIndex,
    generation: Generation,
    registry: Registry,
    batcher: RetrievalBatcher,
    examples: ExampleIntake,
) -> None:
    """Add the routes to `app` itself (not through an included router), so that route
    templates are visible to the metrics middleware."""
    install_error_statuses(app, PROVIDERS)
    _query_routes(app.router, served, generation, batcher)
    _index_routes(app.router, served, generation, examples)
    _health_routes(app.router, served, registry)


def _query_routes(
    router: APIRouter, served: ServedIndex, generation: Generation, batcher: RetrievalBatcher
) -> None:
    """`/v1/retrieve` and `/v1/generate`."""

    @router.post(
        "/v1/retrieve",
        response_model=RetrieveResponse,
        responses=_errors(400, 401, 408, 413, 415, 422, 501, 502, 503),
        summary="Rank the databases and tables for a question",
        tags=["retrieval"],
    )
    async def retrieve(body: RetrieveRequest, request: Request) -> Any:
        """The same result as `schemarag retrieve --json`. The build that answered is in the
        `X-Schemarag-Build` response header."""
        request.state.question = body.question
        with _leased(served, request) as loaded:
            retriever = loaded.for_request(body.pool)
            if retriever is None:
                raise ApiError(
                    501,
                    "not_configured",
                    "pool: schema pooling needs a language model on the server "
                    "(start it with `schemarag serve --pool SPEC`)",
                    "pool",
                )
            if body.pool:  # a language model call: on a thread of its own
                result = await run_in_threadpool(
                    partial(retriever.retrieve, dialect=body.dialect),
                    body.question,
                    body.top_databases,
                    body.top_tables,
                )
            else:
                result = await batcher.retrieve(
                    retriever, body.question, body.top_databases, body.top_tables, body.dialect
                )
        return JSONResponse(result.as_dict(), headers={BUILD_HEADER: str(loaded.build_id)})

    @router.post(
        "/v1/generate",
        response_model=GenerateResponse,
        responses=_errors(400, 401, 408, 413, 415, 422, 501, 502, 503),
        summary="Generate SQL for a question",
        tags=["generation"],
    )
    def generate(body: GenerateRequestBody, request: Request) -> Any:
        """Retrieval (unless `db_id` is given), then the chosen generation strategy. Needs the
        catalog (`serve --source`) and a language model (`SCHEMARAG_LLM`); 501 otherwise."""
        request.state.question = body.question
        request.state.db_id = body.db_id
        spec = GenerateRequest(
            body.question,
            db_id=body.db_id,
            tables=tuple(body.tables) if body.tables is not None else None,
            strategy=body.strategy,
            execute=body.execute,
            max_rows=body.max_rows,
            top_databases=body.top_databases,
            top_tables=body.top_tables,
            dialect=body.dialect,
        )
        generation.check()
        if body.tables is not None:
            unknown = generation.unknown_table(body.tables, body.db_id)
            if unknown is not None:
                raise ApiError(422, "invalid_request", f"tables: {unknown}", "tables")
        if body.db_id is not None:
            result = generation.run(spec, None)
        else:
            with _leased(served, request) as loaded:
                result = generation.run(spec, loaded.retriever)
        return JSONResponse(result.as_dict())


def _index_routes(
    router: APIRouter, served: ServedIndex, generation: Generation, examples: ExampleIntake
) -> None:
    """`/v1/examples`, `/v1/sql/check` and `/v1/index`."""

    @router.post(
        EXAMPLES_PATH,
        response_model=ExamplesResponse,
        responses=_errors(400, 401, 408, 409, 413, 415, 422, 501, 502, 503),
        summary="Add users' (question, SQL) examples to the knowledge base",
        tags=["index"],
    )
    def add_examples(body: ExamplesRequest) -> Any:
        """Validates each pair against the catalog the index was built from (`serve --source`;
        501 without it): its database is in the catalog and the served build, the SQL is one
        read-only query over real tables and columns and runs where the database has a file.
        The valid ones are kept across rebuilds and published in a new build at once, which
        this server loads within about a second; the others come back in `rejected` with the
        reason. The same as `schemarag index add-examples`."""
        pairs = [(e.question, e.sql, e.db_id) for e in body.examples]
        report = examples.add(pairs, body.source)
        return JSONResponse(report.as_dict())

    @router.post(
        "/v1/sql/check",
        response_model=SqlCheckResponse,
        responses=_errors(400, 401, 408, 413, 415, 422, 501, 503),
        summary="Verify a query's tables and columns against the catalog, without running it",
        tags=["sql"],
    )
    def check_sql(body: SqlCheckRequest) -> Any:
        """Parses the query in the database's dialect, refuses anything but one read-only
        query (as running SQL does), and resolves every table and column through its scope
        (CTEs, aliases, UNNEST and FLATTEN, nested fields) against the catalog the server was
        started with (`serve --source`; 501 without it). The same as `schemarag sql check
        --json`."""
        from schemagraph.sql.check import check_sql as check

        pending = examples.catalog if examples.catalog is not None else generation.catalog
        catalog = catalog_of(pending, CATALOG_WAIT_S)
        if catalog is None:
            raise ApiError(
                501,
                "not_configured",
                "checking SQL needs the catalog: start the server with `--source KIND:PATH`",
            )
        if body.database not in catalog:
            raise ApiError(
                422,
                "invalid_request",
                f"database: no database {body.database!r} in the catalog "
                f"({len(catalog)} databases)",
                "database",
            )
        result = check(catalog.database(body.database), body.sql, catalog)
        return JSONResponse(result.as_dict())

    @router.get(
        "/v1/index",
        response_model=IndexInfo,
        responses=_errors(401, 503),
        summary="The build being served",
        tags=["index"],
    )
    def index(request: Request) -> Any:
        with _leased(served, request) as loaded:
            return IndexInfo(
                store=served.source.where,
                build_id=loaded.build_id,
                loaded_at=loaded.loaded_at.isoformat(timespec="seconds"),
                latest_build=served.source.latest_build(),
                reloads=served.reloads,
                **manifest_summary(loaded.manifest),
            )


def _health_routes(router: APIRouter, served: ServedIndex, registry: Registry) -> None:
    """`/healthz`, `/readyz` (both with HEAD) and `/metrics`."""

    @router.get("/healthz", response_model=Health, summary="Liveness", tags=["health"])
    async def healthz() -> Any:
        """200 while the process serves HTTP; needs no API key. `HEAD` answers the same
        status without the body."""
        return Health()

    @router.get(
        "/readyz",
        response_model=Readiness,
        responses={503: {"model": ErrorBody, "description": "no index loaded yet"}},
        summary="Readiness: an index is loaded",
        tags=["health"],
    )
    async def readyz() -> Any:
        """200 once a build is loaded (and from then on, across reloads); needs no API key.
        `HEAD` answers the same status without the body."""
        current = served.current
        if current is None:
            error = _not_ready(served)
            return error_response(503, error.code, error.message, None, error.headers)
        return Readiness(ready=True, build_id=current.build_id)

    # Load balancers probe with HEAD. Routes of their own, left out of the schema: one
    # operation per route there, and a HEAD answer has no body to describe.
    for path, probe in (("/healthz", healthz), ("/readyz", readyz)):
        router.add_api_route(path, probe, methods=["HEAD"], include_in_schema=False)

    @router.get(
        "/metrics",
        response_class=PlainTextResponse,
        responses={200: {"content": {"text/plain": {}}}, **_errors(401)},
        summary="Prometheus metrics",
        tags=["health"],
    )
    async def metrics() -> Any:
        """Request counts and latency histograms per route, in-flight requests, the served
        build and its reloads, in the Prometheus text format."""
        return PlainTextResponse(registry.render(), media_type=CONTENT_TYPE)
