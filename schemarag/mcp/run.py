"""The transports: stdio (what desktop clients start) and streamable HTTP.

HTTP is the SDK's Starlette app at `/mcp` inside the HTTP API's `Guard` (`schemarag.api.
middleware`): the same bearer key (SCHEMARAG_API_KEY) and body limit as `serve`. On loopback
the SDK also checks the Host and Origin headers (DNS rebinding). uvicorn stops on SIGTERM and
raises the signal again once stopped, so the command ends with 143 like the others.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer

PATH = "/mcp"


def run_stdio(server: MCPServer) -> None:
    """Serve on stdin/stdout until the client closes stdin."""
    anyio.run(server.run_stdio_async)


def http_app(server: MCPServer, *, host: str, api_key: str | None, max_body_bytes: int) -> Any:
    """The ASGI app: the SDK's streamable HTTP endpoint at `PATH`, behind the API key."""
    from schemarag.api.middleware import Guard

    app = server.streamable_http_app(streamable_http_path=PATH, host=host)
    return Guard(app, api_key=api_key, max_body_bytes=max_body_bytes)


def run_http(
    server: MCPServer, *, host: str, port: int, api_key: str | None, max_body_bytes: int
) -> None:
    import uvicorn

    app = http_app(server, host=host, api_key=api_key, max_body_bytes=max_body_bytes)
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_config=None,
        access_log=False,
        server_header=False,
        timeout_graceful_shutdown=5,
    )
