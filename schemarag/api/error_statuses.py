"""The HTTP status, error code and message of each error a route lets through.

Routes raise the packages' own errors and never translate them: `ERROR_STATUSES` says how each
is answered, and `install_error_statuses` registers it as FastAPI exception handlers. An error
is answered by the nearest of its classes in the table (a `StoreBusyError` by its own row, a
`BuildError` by `IndexerError`'s); an error of no class here is a bug, answered 500 by
`schemarag.api.errors`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from generator.errors import GeneratorError, RetrievalNeededError
from indexer.errors import IndexerError, StoreBusyError, StoreError
from providers import ProviderError
from retriever.errors import RetrieverError, StoreNotReadyError
from schemagraph.errors import CatalogError, SchemaGraphError
from schemarag.api.errors import error_response
from schemarag.api.examples import ExamplesUnavailableError
from schemarag.api.generation import GenerationUnavailableError

__all__ = ["ERROR_STATUSES", "ErrorStatus", "install_error_statuses", "store_errors"]


@dataclass(frozen=True)
class ErrorStatus:
    """How an error is answered: `status` and `code`; `prefix`: what its message starts with
    (`{provider}`: what the route calls, see `install_error_statuses`); `field`: the request
    field at fault, when the request named one (the route puts it in `request.state`);
    `retry_after`: seconds for a Retry-After header."""

    status: int
    code: str
    prefix: str = ""
    field: str | None = None
    retry_after: int | None = None


INVALID = ErrorStatus(422, "invalid_request")

ERROR_STATUSES: Mapping[type[Exception], ErrorStatus] = {
    GenerationUnavailableError: ErrorStatus(501, "not_configured"),
    ExamplesUnavailableError: ErrorStatus(501, "not_configured"),
    StoreNotReadyError: ErrorStatus(503, "not_ready"),
    RetrievalNeededError: ErrorStatus(503, "not_ready"),
    StoreBusyError: ErrorStatus(409, "busy", retry_after=5),
    StoreError: ErrorStatus(503, "not_ready", retry_after=5),
    CatalogError: ErrorStatus(422, "invalid_request", field="db_id"),
    SchemaGraphError: INVALID,
    RetrieverError: INVALID,
    GeneratorError: INVALID,
    IndexerError: INVALID,
    ProviderError: ErrorStatus(502, "upstream_error", prefix="{provider}: "),
}


def store_errors() -> Mapping[type[Exception], ErrorStatus]:
    """The errors of an unreachable or failing Qdrant server (imported here, with the client)."""
    import httpx
    from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

    unavailable = ErrorStatus(503, "store_unavailable", prefix="vector store: ")
    return {
        ResponseHandlingException: unavailable,
        UnexpectedResponse: unavailable,
        httpx.TransportError: unavailable,
    }


def install_error_statuses(app: FastAPI, providers: Mapping[str, str]) -> None:
    """Answer the errors of `ERROR_STATUSES` and `store_errors()` on every route of `app`.
    `providers`: route path -> what that route's `ProviderError`s come from ("embedder", ...)."""
    table = {**ERROR_STATUSES, **store_errors()}

    async def answer(request: Request, exc: Exception) -> JSONResponse:
        rule = next(table[cls] for cls in type(exc).__mro__ if cls in table)
        route = request.scope.get("route")
        provider = providers.get(getattr(route, "path", ""), "model provider")
        named = rule.field is not None and getattr(request.state, rule.field, None) is not None
        return error_response(
            rule.status,
            rule.code,
            rule.prefix.format(provider=provider) + str(exc),
            rule.field if named else None,
            {"Retry-After": str(rule.retry_after)} if rule.retry_after is not None else None,
        )

    for cls in table:
        app.add_exception_handler(cls, answer)
