"""A stopped build stops: SIGTERM (what `timeout`, systemd, Kubernetes and CI send) or SIGINT at
any stage exits with one line and leaves no process and no lock, and the next build resumes from
the journal; SIGKILL of the build alone leaves synthesis processes that end by themselves.

Real `schemarag index build` processes with two synthesis processes and real signals. The build
runs in a new session, so every process it started (synthesis processes, their SQL workers) has
its process group; the build is held at a stage by a pause patched into that process only (the
sample builds in seconds), which prints `stage NAME` on stdout once the build is there.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from store import StoreLocation
from store.location import running_build
from tests.processes import group_members, wait_until_gone

pytestmark = pytest.mark.slow

HELD = r"""
import functools, os, sys, time
from pathlib import Path

import indexer.building.synthesize as build
import store.location as store
import providers.hashing_embedder as hashing
import schemarag.cli.index as cli_index
from schemarag.cli import main

stage, flag, *argv = sys.argv[1:]
flag = Path(flag)

def hold(name):
    # one write: two synthesis processes may be held at once, and their lines must not mix
    os.write(1, f"stage {name}\n".encode())
    time.sleep(600)

# small journal batches, so that a build has journaled some and not all when it is held
cli_index.BuildConfig = functools.partial(cli_index.BuildConfig, batch_traversals=4)

journal_chunk = build._journal_chunk
def journaled(*args, **kwargs):
    journal_chunk(*args, **kwargs)
    flag.touch()
build._journal_chunk = journaled

if stage == "synthesis":  # a synthesis process holds a chunk after the first is journaled
    run_forked = build._run_forked
    def run(chunk):
        result = run_forked(chunk)
        if flag.exists():
            hold("synthesis")
        return result
    build._run_forked = run
elif stage == "embedding":  # the build embeds a chunk's questions
    embed = hashing.HashingEmbedder.embed_documents
    def embedding(self, texts):
        if flag.exists():
            hold("embedding")
        return embed(self, texts)
    hashing.HashingEmbedder.embed_documents = embedding
elif stage == "loading":  # the first points are in the build's collection
    printer = cli_index.progress_printer
    def progress_printer():
        show = printer()
        def held(name, done, total):
            show(name, done, total)
            if name == "load":
                hold("loading")
        return held
    cli_index.progress_printer = progress_printer
elif stage == "publishing":  # CURRENT names the build, PENDING still does too
    publish = store.StoreLocation.publish
    def publishing(self, build_id, client):
        publish(self, build_id, client)
        hold("publishing")
    store.StoreLocation.publish = publishing
sys.exit(main(argv))
"""

BUILD_OPTIONS = [
    "--embedder",
    "hashing:64",
    "--no-cache",
    "--chains",
    "1",
    "--iterations",
    "1",
    "--max-per-database",
    "2",
    "--processes",
    "2",
]
PROGRESS = re.compile(r"^(synthesized|loaded|embedded) \d+/\d+ ")
RESUMED = re.compile(r"^resumed build (\S+): (\d+) of (\d+) traversals already done$", re.M)


def build_argv(source: str, store: Path) -> list[str]:
    return ["-v", "index", "build", source, "--store", str(store), *BUILD_OPTIONS]


def _default_signals() -> None:
    signal.pthread_sigmask(signal.SIG_SETMASK, [])  # a blocked signal is inherited too
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def start_held(stage: str, source: str, store: Path) -> subprocess.Popen[str]:
    """A build in its own session, returned once it is held at `stage`."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            HELD,
            stage,
            str(store.parent / "journaled"),
            *build_argv(source, store),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        # as a terminal starts it: a process inherits ignored and blocked signals, and an
        # earlier test may have left this one's so (the build then hung in the full suite)
        preexec_fn=_default_signals,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if line.strip() != f"stage {stage}":
        proc.kill()
        raise AssertionError(f"the build was never held at {stage}: {line}{proc.communicate()}")
    return proc


def stderr_lines(err: str) -> list[str]:
    """What the build said on stderr besides its progress and INFO lines."""
    return [
        line
        for line in err.splitlines()
        if not PROGRESS.match(line) and not RESUMED.match(line) and not line.startswith("INFO ")
    ]


def next_build(source: str, store: Path) -> tuple[str, str, str]:
    """Runs the next (plain) build; returns its build id, its stderr and its report."""
    done = subprocess.run(
        [sys.executable, "-m", "schemarag", *build_argv(source, store)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert stderr_lines(done.stderr) == [], done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith("build ") or "index up to date" in first, done.stdout
    return first.split()[1] if first.startswith("build ") else "", done.stderr, done.stdout


@pytest.mark.parametrize("stage", ["synthesis", "embedding", "loading"])
def test_sigterm_at_a_stage_stops_everything_and_the_next_build_resumes(
    stage: str, sample_dir: Path, tmp_path: Path
) -> None:
    source, store = f"spider:{sample_dir}", tmp_path / "kb"
    proc = start_held(stage, source, store)
    location = StoreLocation.parse(store)
    pending = location.pending()
    assert pending is not None and running_build(location) is not None
    if stage == "synthesis":
        assert len(group_members(proc.pid)) >= 3  # the build and its two synthesis processes

    os.kill(proc.pid, signal.SIGTERM)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert stderr_lines(err) == ["schemarag: terminated (SIGTERM)"], err
    wait_until_gone(proc.pid, 3)
    assert running_build(location) is None

    build_id, log, report = next_build(source, store)
    assert build_id == pending and f"resuming interrupted build {pending}" in log
    if stage == "loading":  # everything was journaled: nothing is synthesized again
        assert " 0 traversals to synthesize" in log
    else:
        journaled = re.search(r"\((\d+) already journaled\)", log)
        assert journaled is not None and int(journaled[1]) > 0, log
    # the build says it resumed, at once, and its report counts what was done as reused
    resumed = RESUMED.search(log)
    assert resumed is not None, log
    lines = log.splitlines()
    assert lines.index(resumed[0]) < min(i for i, s in enumerate(lines) if PROGRESS.match(s))
    done, total = int(resumed[2]), int(resumed[3])
    assert resumed[1] == pending and 0 < done <= total, log
    assert f"(resumed: {done} of {total} traversals" in report.splitlines()[0], report
    counts = re.search(r"traversals \d+ \((\d+) reused, (\d+) synthesized", report)
    assert counts is not None and (int(counts[1]), int(counts[2])) == (done, total - done), report
    assert location.current() == pending and location.pending() is None


def test_sigterm_while_publishing_leaves_the_published_build_served(
    sample_dir: Path, tmp_path: Path
) -> None:
    source, store = f"spider:{sample_dir}", tmp_path / "kb"
    proc = start_held("publishing", source, store)
    location = StoreLocation.parse(store)
    published = location.current()
    assert published is not None and location.pending() == published

    os.kill(proc.pid, signal.SIGTERM)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert stderr_lines(err) == ["schemarag: terminated (SIGTERM)"], err
    wait_until_gone(proc.pid, 3)
    assert running_build(location) is None

    next_build(source, store)  # up to date: the build it finds published is whole
    assert location.current() == published and location.pending() is None
    assert (location.build_dir(published) / "manifest.json").exists()


@pytest.mark.parametrize(
    ("signum", "whole_group", "status", "line"),
    [
        (signal.SIGTERM, True, 143, "schemarag: terminated (SIGTERM)"),  # as `timeout` sends it
        (signal.SIGINT, True, 130, "schemarag: interrupted"),  # Ctrl-C in a terminal
    ],
)
def test_a_signal_to_the_build_or_its_group_during_synthesis_stops_it_the_same(
    signum: int, whole_group: bool, status: int, line: str, sample_dir: Path, tmp_path: Path
) -> None:
    source, store = f"spider:{sample_dir}", tmp_path / "kb"
    proc = start_held("synthesis", source, store)
    pending = StoreLocation.parse(store).pending()
    (os.killpg if whole_group else os.kill)(proc.pid, signum)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == status, err
    assert stderr_lines(err) == [line], err
    wait_until_gone(proc.pid, 3)
    assert running_build(StoreLocation.parse(store)) is None
    assert next_build(source, store)[0] == pending


def test_sigkill_of_the_build_alone_leaves_processes_that_end_and_a_free_lock(
    sample_dir: Path, tmp_path: Path
) -> None:
    source, store = f"spider:{sample_dir}", tmp_path / "kb"
    proc = start_held("synthesis", source, store)
    location = StoreLocation.parse(store)
    pending = location.pending()
    workers = group_members(proc.pid) - {proc.pid}
    assert len(workers) >= 2  # the synthesis processes (and their SQL workers)

    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    wait_until_gone(proc.pid, 5)
    assert running_build(location) is None
    assert next_build(source, store)[0] == pending


def test_a_stopped_pool_has_ended_its_manager_thread_before_the_interpreter_exits() -> None:
    """Left running, the pool's manager thread closes its wake-up pipe while the exit hook of
    `concurrent.futures` may write to it: a traceback after "interrupted"."""
    import multiprocessing
    import time
    from concurrent.futures import ProcessPoolExecutor

    from indexer.building.synthesize import _stop_processes_unless_done

    pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"))
    pool.submit(time.sleep, 30)
    manager = pool._executor_manager_thread
    assert manager is not None and manager.is_alive()
    assert _stop_processes_unless_done(pool)(KeyboardInterrupt, None, None) is False
    assert not manager.is_alive()
