"""`schemarag serve` stops when told and leaves nothing behind: SIGTERM ends it (exit 143, one
line) with no process left; SIGKILL of the `--workers` supervisor alone leaves workers that end
by themselves within seconds. Real servers in their own sessions, real signals."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.processes import group_members, wait_until_gone

pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(store: Path, tmp_path: Path, *options: str) -> subprocess.Popen[str]:
    """A server in its own session, returned once it answers /healthz."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHEMARAG_")}
    env["SCHEMARAG_CACHE"] = str(tmp_path / "cache.sqlite")
    argv = ["serve", "--store", str(store), "--port", str(port), "--no-access-log", *options]
    proc = subprocess.Popen(
        [sys.executable, "-m", "schemarag", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while True:
        assert proc.poll() is None, proc.communicate()
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
                sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                if sock.recv(100).startswith(b"HTTP/1.1 200"):
                    return proc
        except OSError:
            pass
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.2)


def test_sigterm_stops_the_server_with_one_line_and_no_process_left(
    built_store: Path, tmp_path: Path
) -> None:
    proc = start_server(built_store, tmp_path)
    os.kill(proc.pid, signal.SIGTERM)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert err.splitlines()[-1] == "schemarag: terminated (SIGTERM)", err
    assert "Traceback" not in err
    wait_until_gone(proc.pid, 3)


def test_workers_end_when_their_supervisor_is_killed(built_store: Path, tmp_path: Path) -> None:
    proc = start_server(built_store, tmp_path, "--workers", "2")
    assert len(group_members(proc.pid)) >= 3  # the supervisor and its two workers
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    wait_until_gone(proc.pid, 5)


def test_sigterm_stops_the_supervisor_and_its_workers(built_store: Path, tmp_path: Path) -> None:
    proc = start_server(built_store, tmp_path, "--workers", "2")
    os.kill(proc.pid, signal.SIGTERM)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode in (0, 143), err
    assert "Traceback" not in err
    wait_until_gone(proc.pid, 3)
