"""The server as clients meet it, over raw sockets: a real `schemarag serve` process (uvicorn
with httptools, its default) and the same app under uvicorn's h11 implementation (the factory
each `--workers` process runs). HEAD on the health checks, request bodies whose Content-Length
lies, and a store path that is a file, refused before anything listens.

What a client gets for framing the HTTP parser itself rejects is uvicorn's, not the app's: the
last test pins it, so that a change there is noticed (docs/OPERATIONS.md says what it is).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

BODY = b'{"question": "How many singers are from France?"}'
BODY_TIMEOUT_S = 1.0
STARTUP_S = 60.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_env(tmp_path: Path) -> dict[str, str]:
    """This environment without the server's settings, with a cache of its own and a short
    body deadline."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHEMARAG_")}
    env.update(
        SCHEMARAG_CACHE=str(tmp_path / "cache.sqlite"),
        SCHEMARAG_BODY_TIMEOUT=str(BODY_TIMEOUT_S),
        PYTHONUNBUFFERED="1",
    )
    return env


def exchange(port: int, raw: bytes, *, timeout: float = 15.0) -> bytes:
    """Send `raw`, then read until the server closes the connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(raw)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    return received


def parse(response: bytes) -> tuple[int, dict[str, str], bytes]:
    head, _, body = response.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), headers, body


def first_response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """The first response on a connection that may stay open: its head, and as many body
    bytes as its Content-Length says."""
    received = b""
    while b"\r\n\r\n" not in received:
        received += sock.recv(65536)
    status, headers, body = parse(received)
    while len(body) < int(headers["content-length"]):
        body += sock.recv(65536)
    return status, headers, body[: int(headers["content-length"])]


def request(method: str, path: str, headers: str = "", body: bytes = b"") -> bytes:
    return f"{method} {path} HTTP/1.1\r\nHost: test\r\n{headers}\r\n".encode("latin-1") + body


@contextmanager
def running(argv: list[str], env: dict[str, str], cwd: Path, port: int) -> Iterator[int]:
    """Start a server process, wait until it answers /healthz, stop it at the end."""
    log = cwd / f"server-{port}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(argv, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + STARTUP_S
        while True:
            if process.poll() is not None:
                raise AssertionError(f"the server stopped: {log.read_text()[-2000:]}")
            try:
                reply = exchange(port, request("GET", "/healthz", "Connection: close\r\n"))
                if parse(reply)[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"the server did not start: {log.read_text()[-2000:]}")
            time.sleep(0.1)
        yield port
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def serve_argv(store: Path, port: int) -> list[str]:
    return [sys.executable, "-m", "schemarag", "serve", "--store", str(store), "--port", str(port)]


def h11_argv(port: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "uvicorn",
        "schemarag.cli.serve:worker_app",
        "--factory",
        "--http",
        "h11",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]


def worker_args(store: Path) -> str:
    """What `serve --workers` passes its worker processes (SCHEMARAG_SERVE_ARGS)."""
    return json.dumps(
        {
            "store": str(store),
            "collection": "schemarag",
            "embedder": None,
            "source": None,
            "pool": None,
            "examples": 3,
            "abstain_below": 0.3,
            "log_questions": None,
            "no_access_log": False,
        }
    )


@pytest.fixture(scope="module", params=["httptools", "h11"])
def server(
    request: pytest.FixtureRequest, built_store: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, int]]:
    """(HTTP implementation, port) of a server over the built store, ready."""
    tmp_path = tmp_path_factory.mktemp(request.param)
    env = server_env(tmp_path)
    port = free_port()
    if request.param == "httptools":
        argv = serve_argv(built_store, port)
    else:
        argv = h11_argv(port)
        env["SCHEMARAG_SERVE_ARGS"] = worker_args(built_store)
    with running(argv, env, tmp_path, port):
        deadline = time.monotonic() + STARTUP_S
        while parse(exchange(port, request_ready()))[0] != 200:
            assert time.monotonic() < deadline, "no build loaded"
            time.sleep(0.1)
        yield request.param, port


def request_ready() -> bytes:
    return request("GET", "/readyz", "Connection: close\r\n")


@pytest.mark.parametrize("path", ["/healthz", "/readyz"])
def test_head_on_a_health_check_answers_its_status_without_a_body(
    server: tuple[str, int], path: str
) -> None:
    _, port = server
    status, headers, body = parse(exchange(port, request("HEAD", path, "Connection: close\r\n")))
    assert (status, body) == (200, b"")
    assert headers["content-type"] == "application/json"
    got = parse(exchange(port, request("GET", path, "Connection: close\r\n")))
    assert got[0] == 200 and json.loads(got[2])


def test_head_readyz_is_503_while_no_build_is_served(tmp_path: Path) -> None:
    port = free_port()
    with running(serve_argv(tmp_path / "empty", port), server_env(tmp_path), tmp_path, port):
        raw = request("HEAD", "/readyz", "Connection: close\r\n")
        status, headers, body = parse(exchange(port, raw))
    assert (status, body) == (503, b"")
    assert headers["retry-after"] == "2"


@pytest.mark.parametrize(
    ("headers", "body", "words"),
    [
        (f"Content-Length: {len(BODY) + 40}\r\n", BODY, f"Content-Length is {len(BODY) + 40}"),
        ("Transfer-Encoding: chunked\r\n", b"5\r\n" + BODY[:5] + b"\r\n", "did not end"),
    ],
    ids=["content-length-too-large", "chunked-stalls"],
)
def test_a_body_that_stops_short_is_408_with_the_error_body_and_the_connection_closed(
    server: tuple[str, int], headers: str, body: bytes, words: str
) -> None:
    _, port = server
    started = time.monotonic()
    raw = request("POST", "/v1/retrieve", f"Content-Type: application/json\r\n{headers}", body)
    # no "Connection: close" from the client: the server closes (the rest of the body, should
    # it come, must not be read as a request)
    status, got, reply = parse(exchange(port, raw))
    assert status == 408
    assert got["content-type"] == "application/json" and got["connection"] == "close"
    error = json.loads(reply)["error"]
    assert (error["code"], error["field"]) == ("request_timeout", "body")
    assert words in error["message"]
    assert BODY_TIMEOUT_S <= time.monotonic() - started < BODY_TIMEOUT_S + 10


@pytest.mark.parametrize("keep_alive", [False, True], ids=["connection-close", "keep-alive"])
def test_a_body_longer_than_its_content_length(server: tuple[str, int], keep_alive: bool) -> None:
    """The app reads Content-Length bytes, a cut JSON document, and answers the error body
    saying so. Except on a keep-alive connection under httptools: it parses the bytes after
    the declared body at once, as the next request, in the same read, and uvicorn answers that
    one's parse error (plain text) and closes the connection before the app's answer is sent."""
    http, port = server
    headers = "Content-Type: application/json\r\nContent-Length: 20\r\n"
    if not keep_alive:
        headers += "Connection: close\r\n"
    with socket.create_connection(("127.0.0.1", port), timeout=15) as sock:
        sock.sendall(request("POST", "/v1/retrieve", headers, BODY))
        status, got, body = first_response(sock)
    if http == "httptools" and keep_alive:
        assert (status, got["content-type"]) == (400, "text/plain; charset=utf-8")
        return
    assert status == 400
    error = json.loads(body)["error"]
    assert error["field"] == "body" and "the JSON is cut short" in error["message"]


@pytest.mark.parametrize(
    "headers",
    [
        "Content-Length: abc\r\n",
        "Content-Length: -1\r\n",
        "Content-Length: 99999999999999999999999\r\n",
        f"Content-Length: {len(BODY)}\r\nContent-Length: 5\r\n",
    ],
    ids=["not-a-number", "negative", "huge", "two-values"],
)
def test_framing_the_http_parser_rejects_is_answered_by_uvicorn_before_the_app(
    server: tuple[str, int], headers: str
) -> None:
    _, port = server
    raw = request("POST", "/v1/retrieve", f"Content-Type: application/json\r\n{headers}", BODY)
    status, got, reply = parse(exchange(port, raw))
    assert (status, got["content-type"]) == (400, "text/plain; charset=utf-8")
    assert reply == b"Invalid HTTP request received."


def test_serve_refuses_a_store_that_is_a_file_before_listening(tmp_path: Path) -> None:
    store = tmp_path / "kb"
    store.write_text("a file")
    port = free_port()
    done = subprocess.run(
        serve_argv(store, port),
        env=server_env(tmp_path),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith(f"schemarag: error: {store}: the store must be a folder")
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        pass
