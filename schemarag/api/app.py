"""`create_app`: the FastAPI application, from explicit dependencies.

    source = StoreSource(StoreLocation.parse(".schemarag/store"), make_embedder=...)
    app = create_app(Settings.from_env(), source, options=ApiOptions())

Nothing here reads the environment or opens a store by itself: the caller (`schemarag serve`,
or a test) passes the settings, the index source and the options. The index loads on a
background thread when the app starts (its lifespan), so liveness answers at once.

The documentation pages (`/docs`, Swagger UI; `/redoc`) load their scripts and styles from the
package (`fastapi-offline` carries them), under `/docs/assets`: they work with no network, and
like `/openapi.json` they need no API key (they hold no data). With a key configured, the
schema declares it as an HTTP bearer scheme, so Swagger UI's "Authorize" button sends it.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi_offline import FastAPIOffline

from providers import LLM
from schemarag.api.batching import RetrievalBatcher
from schemarag.api.errors import install_error_handlers
from schemarag.api.examples import ExampleIntake
from schemarag.api.generation import Generation
from schemarag.api.metrics import Registry
from schemarag.api.middleware import DOCS_ASSETS, Guard, Observe, is_open
from schemarag.api.options import ApiOptions
from schemarag.api.routes import EXAMPLES_PATH, install_routes
from schemarag.api.served import IndexSource, ServedIndex
from schemarag.settings import Settings

log = logging.getLogger(__name__)

__all__ = ["create_app"]

DESCRIPTION = """\
Finds the databases and tables a natural-language question is about, across every database
in the knowledge base, and (when configured) generates the SQL.

When the server has an API key (`SCHEMARAG_API_KEY`), every route except `/healthz`,
`/readyz` and the documentation (`/docs`, `/redoc`, `/openapi.json`) needs the header
`Authorization: Bearer KEY` (here: the "Authorize" button). Errors always have the body
`{"error": {"code", "message", "field"}}`.
"""


def create_app(
    settings: Settings,
    source: IndexSource,
    *,
    options: ApiOptions | None = None,
    generation: Generation | None = None,
    pool_llm: LLM | None = None,
    registry: Registry | None = None,
    examples: ExampleIntake | None = None,
) -> FastAPI:
    """The app serving `source`'s current build. `generation`: what /v1/generate runs (None:
    501 naming what to configure); `pool_llm`: the LLM behind `pool: true`; `examples`: what
    POST /v1/examples adds examples with (None: 501 naming what to configure)."""
    options = options or ApiOptions()
    registry = registry or Registry()
    served = ServedIndex(
        source, interval_s=options.reload_interval_s, pool_llm=pool_llm, registry=registry
    )
    generation = generation or Generation.unavailable(
        "start the server with the catalog the index was built from (`--source KIND:PATH`) "
        "and a language model (SCHEMARAG_LLM)"
    )

    examples = examples or ExampleIntake.unavailable(
        "start the server with the catalog the index was built from (`--source KIND:PATH`)"
    )
    batcher = RetrievalBatcher()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        served.start()
        try:
            yield
        finally:
            batcher.close()
            served.stop()
            source.close()

    app = FastAPIOffline(
        title="schemarag",
        version="1",
        description=DESCRIPTION,
        lifespan=lifespan,
        static_url=DOCS_ASSETS,
        # a body without a Content-Type is read as JSON, as most JSON APIs do (`curl -d` sends
        # a form's type: `Guard(json_bodies=True)` reads that as JSON when it is)
        strict_content_type=False,
        # no call to validator.swagger.io: the page makes no request outside this server
        swagger_ui_parameters={"validatorUrl": None},
    )
    if settings.api_key:
        app.openapi = _with_bearer_scheme(app.openapi)  # type: ignore[method-assign]
    install_error_handlers(app)
    install_routes(app, served, generation, registry, batcher, examples)
    # add_middleware wraps what is there, so the last added is the outermost.
    app.add_middleware(
        Guard,
        api_key=settings.api_key,
        max_body_bytes=options.max_body_bytes,
        body_timeout_s=options.body_timeout_s,
        path_limits={EXAMPLES_PATH: options.max_examples_body_bytes},
        json_bodies=True,
    )
    app.add_middleware(
        Observe,
        routes=lambda: app.router.routes,
        registry=registry,
        log_questions=options.log_questions,
    )
    app.state.served = served
    app.state.registry = registry
    app.state.options = options
    return app


def _with_bearer_scheme(generate: Callable[[], dict[str, Any]]) -> Callable[[], dict[str, Any]]:
    """`generate` (FastAPI's schema, made once and cached), with the API key declared as an
    HTTP bearer scheme that every operation but the open ones requires."""
    done: list[dict[str, Any]] = []

    def openapi() -> dict[str, Any]:
        if not done:
            schema = generate()
            schemes = schema.setdefault("components", {}).setdefault("securitySchemes", {})
            schemes["apiKey"] = {
                "type": "http",
                "scheme": "bearer",
                "description": "the server's API key (SCHEMARAG_API_KEY)",
            }
            for path, operations in schema.get("paths", {}).items():
                if not is_open(path):
                    for operation in operations.values():
                        operation["security"] = [{"apiKey": []}]
            done.append(schema)
        return done[0]

    return openapi
