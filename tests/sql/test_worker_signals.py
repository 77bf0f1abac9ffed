"""A query's worker process never outlives the command that started it: SIGTERM stops `sql run`
in the middle of a query with one line and exit 143, and a worker whose caller was killed
(SIGKILL) while it runs a query ends by itself within a second or so."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.processes import command_line, group_members, wait_for, wait_until_gone

pytestmark = pytest.mark.slow

QUERYING_CPU_S = 2.0
NEVER_ENDING = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
)


def start_query(db: Path) -> tuple[subprocess.Popen[str], int]:
    """`sql run` of a query that runs for a minute, in its own session; returns the process
    and its worker's pid once the worker runs the query (it has used more CPU than starting
    takes: about 0.5 s)."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "schemarag",
            "sql",
            "run",
            "--db",
            str(db),
            "--timeout",
            "60",
            NEVER_ENDING,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )

    def workers() -> list[int]:
        return [p for p in group_members(proc.pid) if "schemagraph.sql.worker" in command_line(p)]

    def querying() -> bool:
        return any(cpu_seconds(p) > QUERYING_CPU_S for p in workers()) or proc.poll() is not None

    wait_for(querying, 60, "a worker running the query")
    assert proc.poll() is None, proc.communicate()
    return proc, workers()[0]


def cpu_seconds(pid: int) -> float:
    try:
        stat = (Path("/proc") / str(pid) / "stat").read_text()
    except OSError:
        return 0.0
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.parametrize("whole_group", [False, True])
def test_sigterm_stops_a_running_query_and_its_worker(whole_group: bool, concert_db: Path) -> None:
    proc, _worker = start_query(concert_db)
    (os.killpg if whole_group else os.kill)(proc.pid, signal.SIGTERM)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 143, err
    assert (out, err) == ("", "schemarag: terminated (SIGTERM)\n")
    wait_until_gone(proc.pid, 3)


def test_a_worker_whose_caller_is_killed_mid_query_ends(concert_db: Path) -> None:
    proc, worker = start_query(concert_db)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    assert worker in group_members(proc.pid) or not group_members(proc.pid)
    wait_until_gone(proc.pid, 3)
