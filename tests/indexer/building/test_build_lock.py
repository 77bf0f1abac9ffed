"""One store, one builder: a second build fails at once naming the holder, a killed build leaves
no stale lock; and a build that stops on an error before finishing anything leaves no PENDING."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from indexer import BuildConfig, BuildError, BuildServices, build_index
from indexer import index_status as status_of
from providers import HashingEmbedder
from schemagraph import Database, DatabaseSample, Traversal, TraversalConfig, load_catalog
from store import StoreLocation

CONFIG = BuildConfig(traversal=TraversalConfig(max_per_database=2, walks=1), chains=1, iterations=1)

SLOW_BUILD = """
import sys, time
from indexer import *
from store import StoreLocation
from providers import HashingEmbedder
from schemagraph import load_catalog, TraversalConfig
inner = make_chain_runner(make_synthesizer("template", None), make_feedback("rule", None),
                          chains=1, iterations=1)
def slow(db, t, s, seed):
    time.sleep(0.2)
    return inner(db, t, s, seed)
config = BuildConfig(traversal=TraversalConfig(max_per_database=2, walks=1), chains=1,
                     iterations=1, batch_traversals=2, concurrency=1)
report = build_index(load_catalog([sys.argv[1]]), StoreLocation.parse(sys.argv[2]),
                     BuildServices(slow, "template", HashingEmbedder(64)), config)
print("built", report.build_id)
"""


def start_slow_build(source: str, store: Path) -> subprocess.Popen[str]:
    """A real build process that takes a few seconds; returns once it holds the lock."""
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_BUILD, source, str(store)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while status_of(StoreLocation.parse(store))["running"] is None:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the build never took the lock"
        time.sleep(0.05)
    return proc


def cli_build(source: str, store: Path) -> subprocess.CompletedProcess[str]:
    options = ["--embedder", "hashing:64", "--no-cache", "--chains", "1", "--max-per-database", "2"]
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "schemarag",
            "index",
            "build",
            source,
            "--store",
            str(store),
            *options,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_second_build_fails_at_once_naming_the_holder(sample_dir: Path, tmp_path: Path) -> None:
    source, store = f"spider:{sample_dir}", tmp_path / "kb"
    first = start_slow_build(source, store)
    try:
        started = time.monotonic()
        second = cli_build(source, store)
        assert second.returncode == 2
        assert time.monotonic() - started < 30  # it did not wait for the first build
        (line,) = second.stderr.strip().splitlines()
        assert "another build is running on this store" in line
        assert f"pid {first.pid} on {socket.gethostname()}, since 20" in line
        running = status_of(StoreLocation.parse(store))["running"]
        assert running is not None and f"pid {first.pid}" in running
    finally:
        out, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    location = StoreLocation.parse(store)
    assert location.current() == out.split()[-1] and location.pending() is None
    # the first build's folder is whole: its journal and its collections are still there
    build = location.build_dir(location.current() or "")
    assert {p.name for p in build.iterdir()} >= {"manifest.json", "journal.sqlite", "qdrant"}
    assert status_of(location)["running"] is None


def test_a_killed_build_leaves_no_stale_lock(sample_dir: Path, tmp_path: Path) -> None:
    source, store = f"spider:{sample_dir}", tmp_path / "kb"
    first = start_slow_build(source, store)
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    assert status_of(StoreLocation.parse(store))["running"] is None
    again = cli_build(source, store)
    assert again.returncode == 0, again.stderr
    assert StoreLocation.parse(store).pending() is None


def test_records_without_a_question_keep_their_stats_and_are_not_indexed(
    sample_dir: Path, tmp_path: Path
) -> None:
    """A synthesizer that dropped a question (a duplicate, say) returns a record holding only
    its stats: such records must not be embedded or indexed, and must not crash the build."""
    catalog = load_catalog([f"spider:{sample_dir}"])

    def synthesize(
        db: Database, t: Traversal, s: DatabaseSample | None, seed: int
    ) -> list[dict[str, Any]]:
        kept = {"question": f"what is in {t.id}?", "sql": f"SELECT 1 FROM {t.tables[0]}"}
        return [
            {**kept, "tables": [t.tables[0]], "stats": {"dropped": 0}},
            {"stats": {"dropped": 1}},
        ]

    location = StoreLocation.parse(tmp_path / "kb")
    report = build_index(
        catalog, location, BuildServices(synthesize, "fake", HashingEmbedder(64)), CONFIG
    )
    assert report.questions == report.traversals_synthesized
    assert report.dropped == report.traversals_synthesized


def test_a_build_that_fails_before_finishing_anything_leaves_no_pending(
    sample_dir: Path, tmp_path: Path
) -> None:
    catalog = load_catalog([f"spider:{sample_dir}"])

    def broken(db: Database, t: Traversal, s: DatabaseSample | None, seed: int) -> Any:
        raise RuntimeError("the synthesizer is misconfigured")

    location = StoreLocation.parse(tmp_path / "kb")
    with pytest.raises(BuildError, match="synthesis failed for all"):
        build_index(catalog, location, BuildServices(broken, "fake", HashingEmbedder(64)), CONFIG)
    assert location.pending() is None and location.current() is None
    assert location.builds() == []
