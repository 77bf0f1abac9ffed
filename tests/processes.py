"""The processes a test started, found by process group: a command started in a new session
(`start_new_session=True`) leads a group that every process it starts joins, orphaned or not."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path


def group_members(pgid: int) -> set[int]:
    """Live processes (zombies excepted) of process group `pgid`, from /proc."""
    members = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # state, ppid, pgrp, ...
        if int(fields[2]) == pgid and fields[0] != "Z":
            members.add(int(entry.name))
    return members


def command_line(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def wait_until_gone(pgid: int, seconds: float) -> None:
    """Wait until group `pgid` has no live process; fail after `seconds`."""
    deadline = time.monotonic() + seconds
    while left := group_members(pgid):
        assert time.monotonic() < deadline, f"still running after {seconds} s: {sorted(left)}"
        time.sleep(0.1)


def wait_for(condition: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"{what} did not happen within {seconds} s"
        time.sleep(0.1)
