"""Plain ASGI middleware: observation (request id, log line, metrics) and the guard (API key,
body size). Pure ASGI rather than `BaseHTTPMiddleware`, which costs a task per request.

Order, outermost first: `Observe` → `Guard` → the app. So a request refused by the guard is
still logged and counted, and an exception that escapes the app becomes the standard 500 body.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import re
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, MutableMapping, Sequence
from datetime import UTC, datetime
from typing import Any

from starlette.routing import BaseRoute, Match

from schemarag.api.errors import send_error
from schemarag.api.metrics import Registry

__all__ = ["DOCS_ASSETS", "OPEN_PATHS", "Guard", "Observe", "is_open"]

access_log = logging.getLogger("schemarag.api.access")
log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Routes that answer without the API key: the health checks of orchestrators, and the API's
#: documentation (the schema, the Swagger UI and ReDoc pages), which holds no data: a browser
#: cannot send a bearer key to load a page, and Swagger UI's "Authorize" sends it on the calls.
OPEN_PATHS = frozenset(
    {"/healthz", "/readyz", "/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc"}
)
#: Where the documentation pages' scripts and styles are served from (the package's copy).
DOCS_ASSETS = "/docs/assets"


def is_open(path: str) -> bool:
    """True for a path served without the API key (`OPEN_PATHS`, the documentation assets)."""
    return path in OPEN_PATHS or path.startswith(DOCS_ASSETS + "/")


_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
#: JSON media types: application/json and application/*+json
_JSON_TYPE = re.compile(r"^application/(?:[a-z0-9.!#$&^_-]+\+)?json$")
#: what clients send JSON as without being told: `curl -d` (a form's type), plain text
_LENIENT_TYPES = frozenset({"application/x-www-form-urlencoded", "text/plain"})


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return str(value.decode("latin-1"))
    return None


class Observe:
    """Gives each request an id (`X-Request-ID`, the client's when it is sane), counts it,
    times it, and writes one JSON log line per request to the `schemarag.api.access` logger:
    method, route template, path, status, latency, request id, served build. The question text
    is logged only when `log_questions` is on (routes put it in `scope["state"]`)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        routes: Callable[[], Sequence[BaseRoute]],
        registry: Registry,
        log_questions: bool = False,
    ) -> None:
        self.app = app
        self.routes = routes
        self.log_questions = log_questions
        self.requests = registry.counter(
            "schemarag_http_requests_total", "HTTP requests answered", ("method", "route", "status")
        )
        self.latency = registry.histogram(
            "schemarag_http_request_duration_seconds",
            "time from request to the end of the response",
            ("method", "route"),
        )
        self.in_flight = registry.gauge("schemarag_http_requests_in_flight", "requests in progress")

    def route_of(self, scope: Scope) -> str:
        """The route template, so that metrics have few label values; `unmatched` for 404s."""
        routed = scope.get("route")
        if routed is not None and hasattr(routed, "path"):
            return str(routed.path)
        for route in self.routes():
            match, _ = route.matches(scope)
            if match != Match.NONE:
                return str(getattr(route, "path", "unmatched"))
        return "unmatched"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        given = _header(scope, b"x-request-id")
        request_id = given if given and _REQUEST_ID.match(given) else uuid.uuid4().hex
        scope.setdefault("state", {})["request_id"] = request_id
        status = 500
        response_started = False

        async def observed_send(message: Message) -> None:
            nonlocal status, response_started
            if message["type"] == "http.response.start":
                status = int(message["status"])
                response_started = True
                headers = list(message.get("headers", ()))
                headers.append((b"x-request-id", request_id.encode("latin-1")))
                message["headers"] = headers
            await send(message)

        self.in_flight.inc()
        try:
            await self.app(scope, receive, observed_send)
        except Exception:
            log.exception("unhandled error on %s %s", scope.get("method"), scope.get("path"))
            status = 500
            if not response_started:
                await send_error(
                    send,
                    500,
                    "internal_error",
                    "internal server error",
                    headers=[("x-request-id", request_id)],
                )
        finally:
            self.in_flight.dec()
            elapsed = time.perf_counter() - started
            method = str(scope.get("method", ""))
            route = self.route_of(scope)
            self.requests.inc(method, route, str(status))
            self.latency.observe(elapsed, method, route)
            if access_log.isEnabledFor(logging.INFO):
                access_log.info(
                    "%s", json.dumps(self._record(scope, method, route, status, elapsed))
                )

    def _record(
        self, scope: Scope, method: str, route: str, status: int, elapsed: float
    ) -> dict[str, Any]:
        state = scope.get("state", {})
        client = scope.get("client")
        record: dict[str, Any] = {
            "ts": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "event": "request",
            "method": method,
            "route": route,
            "path": scope.get("path"),
            "status": status,
            "latency_ms": round(elapsed * 1000, 2),
            "request_id": state.get("request_id"),
            "client": client[0] if client else None,
        }
        if state.get("build_id"):
            record["build_id"] = state["build_id"]
        if self.log_questions and state.get("question") is not None:
            record["question"] = state["question"]
        return record


class Guard:
    """Refuses, with the standard error body: requests without the right bearer key (when
    `api_key` is set; `is_open` paths excepted) with 401, bodies over `max_body_bytes` with
    413 and bodies that have not arrived in full within `body_timeout_s` with 408 (a
    Content-Length larger than the body sent), both naming the field `body`. The body is read
    here, up to the limit, and replayed to the app, so chunked uploads are held to the same
    limit and deadline as ones with a Content-Length. `path_limits`: paths with a body limit
    of their own (`POST /v1/examples` carries many pairs). `json_bodies`: the app reads JSON
    only, so a body sent as a form or as plain text (`curl -d '{...}'` sends a form's
    Content-Type) that starts like JSON is passed on as JSON, and a non-empty body of any other
    type that is not JSON is refused with 415 naming the header."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        api_key: str | None,
        max_body_bytes: int,
        body_timeout_s: float = 10.0,
        path_limits: Mapping[str, int] | None = None,
        json_bodies: bool = False,
    ) -> None:
        self.app = app
        self.json_bodies = json_bodies
        self.api_key = api_key.encode("utf-8") if api_key else None
        self.max_body_bytes = max_body_bytes
        self.body_timeout_s = body_timeout_s
        self.path_limits = dict(path_limits or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.api_key is not None and not is_open(str(scope.get("path", ""))):
            problem = self._auth_problem(_header(scope, b"authorization"))
            if problem is not None:
                await send_error(
                    send, 401, "unauthorized", problem, headers=[("www-authenticate", "Bearer")]
                )
                return
        if scope.get("method") not in _BODY_METHODS:
            await self.app(scope, receive, send)
            return
        limit = self.path_limits.get(str(scope.get("path", "")), self.max_body_bytes)
        too_large = f"body: the request body must be at most {limit} bytes"
        declared = _header(scope, b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await send_error(send, 413, "body_too_large", too_large, "body")
            return
        chunks: list[bytes] = []
        size = 0
        deadline = asyncio.get_running_loop().time() + self.body_timeout_s
        while True:
            try:
                async with asyncio.timeout_at(deadline):
                    message = await receive()
            except TimeoutError:
                await self._body_timeout(send, declared, size)
                return
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await send_error(send, 413, "body_too_large", too_large, "body")
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if self.json_bodies and (problem := _read_as_json(scope, body)) is not None:
            await send_error(send, 415, "unsupported_media_type", problem)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _body_timeout(self, send: Send, declared: str | None, size: int) -> None:
        """408, and the connection closed: the rest of the body may still come, and must not
        be read as the next request."""
        waited = f"{self.body_timeout_s:g} s"
        if declared is not None:
            problem = (
                f"body: Content-Length is {declared} bytes but {size} arrived in {waited}; "
                "send the whole body, or a Content-Length that counts it"
            )
        else:
            problem = f"body: the request body did not end within {waited} ({size} bytes came)"
        await send_error(
            send, 408, "request_timeout", problem, "body", headers=[("connection", "close")]
        )

    def _auth_problem(self, header: str | None) -> str | None:
        assert self.api_key is not None
        if not header:
            return "missing API key: send the header 'Authorization: Bearer KEY'"
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return "malformed Authorization header: expected 'Bearer KEY'"
        if not hmac.compare_digest(token.strip().encode("utf-8"), self.api_key):
            return "invalid API key"
        return None


def _read_as_json(scope: Scope, body: bytes) -> str | None:
    """Why `body` cannot be read as JSON given its Content-Type (None: it can). A JSON type or
    none is read as JSON; a form or plain text that starts like JSON is relabelled
    `application/json` in `scope`; an empty body is left to the app."""
    declared = _header(scope, b"content-type")
    media = (declared or "").split(";", 1)[0].strip().lower()
    if not media or _JSON_TYPE.match(media) or not body.strip():
        return None
    if media in _LENIENT_TYPES and body.lstrip()[:1] in (b"{", b"["):
        headers = [(k, v) for k, v in scope.get("headers", ()) if k != b"content-type"]
        scope["headers"] = [*headers, (b"content-type", b"application/json")]
        return None
    return (
        f"Content-Type: {declared} is not JSON; send a JSON object with the header "
        "'Content-Type: application/json'"
    )
