"""The HTTP status, error code and message of each error a route lets through.

Routes raise the packages' own errors and never translate them: the application's one error
table (`schemarag.errors.ERRORS`, which the CLI and the MCP server read too) says how each is
answered, and `install_error_statuses` registers it as FastAPI exception handlers. An error of
no class there is a bug, answered 500 by `schemarag.api.errors`.
"""

from __future__ import annotations

from collections.abc import Mapping

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from schemarag.api.errors import error_response
from schemarag.errors import ERRORS, error_class, rule_for

__all__ = ["install_error_statuses"]


def install_error_statuses(app: FastAPI, providers: Mapping[str, str]) -> None:
    """Answer the errors of `schemarag.errors.ERRORS` on every route of `app`. `providers`:
    route path -> what that route's `ProviderError`s come from ("embedder", ...)."""

    async def answer(request: Request, exc: Exception) -> JSONResponse:
        rule = rule_for(exc)
        assert rule is not None  # only the table's classes are handled here
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

    for name in ERRORS:
        app.add_exception_handler(error_class(name), answer)
