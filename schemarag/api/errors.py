"""One JSON shape for every error the server answers, and the handlers that produce it.

    {"error": {"code": "invalid_request", "message": "question: ...", "field": "question"}}

`code` is a stable machine-readable word, `message` a sentence for people, `field` the request
field at fault or null. Validation errors, 401/404/405 from routing, errors raised by the
middleware (auth, body size) and unexpected exceptions (500) all use it. A body that cannot be
read as JSON is a 400 (`invalid_json`), JSON that fails validation a 422 (`invalid_request`),
a body over the limit a 413 (`body_too_large`), as HTTP means them.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

log = logging.getLogger(__name__)

__all__ = [
    "ApiError",
    "error_payload",
    "error_response",
    "install_error_handlers",
    "send_error",
    "validation_details",
]

#: Default `code` per HTTP status.
STATUS_CODES: Mapping[int, str] = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    408: "request_timeout",
    413: "body_too_large",
    415: "unsupported_media_type",
    422: "invalid_request",
    429: "too_many_requests",
    500: "internal_error",
    501: "not_implemented",
    502: "upstream_error",
    503: "unavailable",
}

Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


class ApiError(Exception):
    """An error answer: HTTP status, code, message, optional field and extra headers."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        field: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.headers = dict(headers or {})


def error_payload(code: str, message: str, field: str | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "field": field}}


def error_response(
    status: int,
    code: str,
    message: str,
    field: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    return JSONResponse(
        error_payload(code, message, field), status_code=status, headers=dict(headers or {})
    )


async def send_error(
    send: Send,
    status: int,
    code: str,
    message: str,
    field: str | None = None,
    headers: Iterable[tuple[str, str]] = (),
) -> None:
    """Answer an error straight from ASGI middleware (no app, no Request object)."""
    body = json.dumps(error_payload(code, message, field)).encode("utf-8")
    raw = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode("ascii")),
        *((k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers),
    ]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


def validation_details(
    errors: Iterable[Mapping[str, Any]], body: Any = None
) -> tuple[str | None, str]:
    """The first invalid field and a message naming every problem, from pydantic errors.
    `body`: the request body as text, which a JSON syntax error is located in."""
    parts: list[str] = []
    first: str | None = None
    for error in errors:
        field = "body" if error.get("type") == "json_invalid" else _field(error.get("loc", ()))
        first = first or field
        message = str(error.get("msg", "invalid value"))
        if error.get("type") == "extra_forbidden":
            message = "unknown field"
        elif error.get("type") == "missing":
            message = "field required"
        elif field == "body" and error.get("type") in ("model_attributes_type", "dict_type"):
            message = "expected a JSON object (Content-Type: application/json)"
        elif error.get("type") == "json_invalid":
            message = _json_syntax(error, body)
        parts.append(f"{field}: {message}")
    return first, "; ".join(parts) or "invalid request"


def _field(loc: Iterable[Any]) -> str:
    """("body", "question") -> "question"; ("body", "examples", 3, "sql") -> "examples[3].sql";
    ("body",) -> "body"."""
    parts = list(loc)
    if parts[:1] == ["body"]:
        parts = parts[1:]
    field = ""
    for part in parts:
        field += f"[{part}]" if isinstance(part, int) else f"{'.' if field else ''}{part}"
    return field or "body"


def _json_syntax(error: Mapping[str, Any], body: Any) -> str:
    """Where and what the JSON syntax error is; a body whose text stops before the JSON
    document does is said to be cut short."""
    reason = str((error.get("ctx") or {}).get("error") or "invalid JSON")
    loc = error.get("loc", ())
    position = loc[-1] if loc and isinstance(loc[-1], int) else None
    where = reason
    if position is not None:  # "Expecting value", "Unterminated string starting at", ...
        where += f"{'' if reason.endswith(' at') else ' at'} character {position}"
    if isinstance(body, str) and (
        (position is not None and position >= len(body.rstrip())) or "Unterminated" in reason
    ):
        return (
            f"the JSON is cut short: the body ends after {len(body)} characters, inside the "
            f"document ({where}); send the whole document"
        )
    return f"not valid JSON: {where}"


def unreadable_body(cause: BaseException | None) -> str:
    """Why a body could not be read as JSON at all, from the exception FastAPI wrapped."""
    if isinstance(cause, RecursionError):
        return (
            "body: the JSON is nested too deeply to read; request bodies here are one object "
            "of strings, numbers, booleans and lists of strings"
        )
    if isinstance(cause, UnicodeDecodeError):
        return f"body: not UTF-8 text ({cause.reason} at byte {cause.start}); send UTF-8 JSON"
    return "body: the request body cannot be parsed; send UTF-8 JSON"


def install_error_handlers(app: FastAPI) -> None:
    """Route every error FastAPI and Starlette raise through `error_payload`."""

    async def api_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ApiError)
        return error_response(exc.status, exc.code, exc.message, exc.field, exc.headers)

    async def http_error(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        if exc.status_code == 400:  # FastAPI could not read the body (not UTF-8, say)
            return error_response(400, "invalid_json", unreadable_body(exc.__cause__), "body")
        code = STATUS_CODES.get(exc.status_code, "error")
        detail = exc.detail if isinstance(exc.detail, str) else code.replace("_", " ")
        if exc.status_code == 404:
            detail = f"no route {request.url.path}"
        elif exc.status_code == 405:
            detail = f"method {request.method} is not allowed on {request.url.path}"
        return error_response(exc.status_code, code, detail, None, exc.headers)

    async def invalid(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        errors = exc.errors()
        field, message = validation_details(errors, exc.body)
        if any(error.get("type") == "json_invalid" for error in errors):
            return error_response(400, "invalid_json", message, field)
        return error_response(422, "invalid_request", message, field)

    async def crashed(request: Request, exc: Exception) -> JSONResponse:
        log.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
        return error_response(500, "internal_error", "internal server error")

    app.add_exception_handler(ApiError, api_error)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(RequestValidationError, invalid)
    app.add_exception_handler(Exception, crashed)
