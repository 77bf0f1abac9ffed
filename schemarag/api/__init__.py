"""The HTTP API: FastAPI app, served by uvicorn through `schemarag serve`.

    from schemarag.api import ApiOptions, StoreSource, create_app
    app = create_app(settings, StoreSource(location, make_embedder=...), options=ApiOptions())

Modules:

- `app`         `create_app`, from explicit dependencies (settings, index source, options);
- `routes`      /v1/retrieve, /v1/generate, /v1/examples, /v1/index, /healthz, /readyz (GET
                and HEAD), /metrics; /docs, /redoc and /openapi.json come from `app` (public,
                offline);
- `models`      request and response bodies, with the input limits;
- `errors`      the one error body and the handlers that produce it;
- `error_statuses`  the status and code each error a route lets through is answered with;
- `middleware`  request id, access log, metrics (`Observe`); API key and body size (`Guard`);
- `served`      `ServedIndex`: the current build, leases, reload without a failed request;
- `store`       `StoreSource`: retrievers over a store and the probe that spots new builds;
- `batching`    `RetrievalBatcher`: concurrent retrievals on one thread, embeddings batched;
- `generation`  what /v1/generate needs (catalog, LLMs);
- `examples`    what /v1/examples needs (catalog, store, embedder);
- `metrics`     counters, gauges and histograms in the Prometheus text format;
- `options`     `ApiOptions`: limits, logging, reload cadence.

Errors answered (all `{"error": {"code", "message", "field"}}`)::

    401 unauthorized          missing, malformed or wrong bearer key
    404 not_found, 405 method_not_allowed
    408 request_timeout       the body did not arrive within ApiOptions.body_timeout_s (field
                              "body"; a Content-Length larger than the body sent)
    400 invalid_json          a body that cannot be read as JSON, saying why (field "body")
    422 invalid_request       JSON that fails validation: a field out of its limits (named in
                              `field`), or not one object
    409 busy                  POST /v1/examples while another build holds the store (Retry-After)
    413 body_too_large        the body is over ApiOptions.max_body_bytes (field "body"; for
                              /v1/examples, max_examples_body_bytes)
    501 not_configured        pooling, generation or examples asked for and not configured
    502 upstream_error        a language model call failed
    503 not_ready             no build loaded yet (Retry-After): loading which build, failed
                              with what, store unreachable, or empty
    503 store_unavailable     the Qdrant server cannot be reached
    500 internal_error        a bug; logged with its traceback, details not sent
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from schemarag.api.app import create_app
    from schemarag.api.generation import Generation
    from schemarag.api.options import ApiOptions
    from schemarag.api.served import IndexSource, ServedIndex
    from schemarag.api.store import StoreSource, prepare_query_embedder

#: each public name and its module, imported on first use: `schemarag mcp` reads the store
#: through `served` and `store` without paying a second for FastAPI and the app
_HOMES = {
    "ApiOptions": "options",
    "Generation": "generation",
    "IndexSource": "served",
    "ServedIndex": "served",
    "StoreSource": "store",
    "create_app": "app",
    "prepare_query_embedder": "store",
}

__all__ = [
    "ApiOptions",
    "Generation",
    "IndexSource",
    "ServedIndex",
    "StoreSource",
    "create_app",
    "prepare_query_embedder",
]


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
