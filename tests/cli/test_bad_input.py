"""Every CLI command against bad input: exit status 2, one line on stderr naming the file or
argument, no traceback, and nothing changed in the stores it was pointed at."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from schemarag.cli import main

NOT_UTF8 = "how many \udcff\udcfe pets"  # what Python makes of argv bytes ff fe (PEP 383)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, sample_dir: Path) -> dict[str, str]:
    """Paths the bad inputs point at: a built store, a store with a damaged manifest, an empty
    store, a regular file, malformed sources, and what `sql eval` reads."""
    root = tmp_path_factory.mktemp("bad-input")
    env = pytest.MonkeyPatch()
    env.setenv("SCHEMARAG_CACHE", str(root / "cache.sqlite"))
    store = root / "store"
    argv = ["index", "build", f"spider:{sample_dir}", "--store", str(store)]
    assert main([*argv, "--embedder", "hashing:64", "--no-cache", "--chains", "1"]) == 0
    damaged = root / "damaged"
    shutil.copytree(store, damaged)
    (manifest,) = damaged.glob("builds/*/manifest.json")
    manifest.write_text(manifest.read_text()[:100])
    (root / "empty").mkdir()
    (root / "file").write_text("not a folder")
    (root / "bad.json").write_text('[{"db_id": "x", ')
    (root / "garbage.sql").write_text("CREATE TABLLE (((\n")
    (root / "gold.txt").write_text("SELECT 1\tpets_1\n")
    (root / "pred.txt").write_text("SELECT 1\n")
    env.undo()
    return {
        "sample": str(sample_dir),
        "store": str(store),
        "damaged": str(damaged),
        "empty": str(root / "empty"),
        "file": str(root / "file"),
        "badjson": str(root / "bad.json"),
        "garbage": str(root / "garbage.sql"),
        "gold": str(root / "gold.txt"),
        "pred": str(root / "pred.txt"),
        "dir": str(root),
        "db": str(sample_dir / "database/pets_1/pets_1.sqlite"),
        "nowhere": str(root / "no/such/folder/out.json"),
    }


# (argv, what the one line must name); {name} is a path of `world`.
CASES: list[tuple[list[str], str]] = [
    ([], "COMMAND"),
    (["demo", "--bogus"], "--bogus"),
    (["nosuch"], "nosuch"),
    (["catalog", "show", "spider:{badjson}"], "{badjson}"),
    (["catalog", "show", "spider:{dir}/missing"], "{dir}/missing"),
    (["catalog", "show", "ddl:{garbage}"], "{garbage}"),
    (["catalog", "show", "oops:{sample}"], "oops"),
    (["catalog", "show", "docs:{badjson}"], "docs:"),
    (["catalog", "show", "spider:{sample}", "docs:{badjson}"], "{badjson}"),
    (["catalog", "show", "spider:{sample}", "docs:{dir}/missing.yaml"], "missing.yaml"),
    (["index", "build", "spider:{sample}", "dbt:{badjson}", "--store", "{store}"], "{badjson}"),
    (["catalog", "show", "spider:{sample}", "--db", "nope"], "nope"),
    (["catalog", "show", "spider:{sample}", "--bogus"], "--bogus"),
    (["graph", "stats", "spider:{badjson}"], "{badjson}"),
    (["graph", "stats", "spider:{sample}", "--cutoff", "x"], "--cutoff"),
    (["graph", "walks", "spider:{sample}", "--db", "nope"], "nope"),
    (["index", "build", "spider:{sample}", "--store", "{file}"], "{file}"),
    (
        [
            *["index", "build", "spider:{sample}", "--store", "{store}"],
            *["--embedder", "hashing:64", "--precision", "bf16"],
        ],
        "minilm embedder only",
    ),
    (["index", "build", "spider:{sample}", "--store", "{file}/sub"], "{file}"),
    (["index", "build", "spider:{sample}", "--store", "{damaged}"], "manifest"),
    (
        ["index", "build", "spider:{sample}", "--store", "{store}", "--report", "{nowhere}"],
        "--report",
    ),
    (["index", "build", "spider:{sample}", "--store", "{store}", "--report", "{dir}"], "--report"),
    (["index", "build", "spider:{badjson}", "--store", "{store}"], "{badjson}"),
    (["index", "build", "spider:{sample}", "--store", "{store}", "--replicas", "2"], "--store"),
    (["index", "build", "spider:{sample}", "--store", "{store}", "--bogus"], "--bogus"),
    (["index", "status", "--store", "{file}"], "{file}"),
    (["index", "status", "--store", "{damaged}"], "manifest"),
    (["retrieve", "how many pets", "--store", "{file}"], "{file}"),
    (["retrieve", "how many pets", "--store", "{damaged}"], "manifest"),
    (["retrieve", "how many pets", "--store", "{empty}"], "{empty}"),
    (["retrieve", NOT_UTF8, "--store", "{store}"], "question"),
    (["retrieve", "", "--store", "{store}"], "question"),
    (["retrieve", "   ", "--store", "{store}"], "question"),
    (["retrieve", "x" * 100_000, "--store", "{store}"], "question"),
    (
        ["retrieve", "how many pets", "--store", "{store}", "--top-databases", "0"],
        "--top-databases",
    ),
    (
        ["retrieve", "how many pets", "--store", "{store}", "--abstain-below", "2"],
        "--abstain-below",
    ),
    (["ask", NOT_UTF8, "--db", "pets_1", "--source", "spider:{sample}"], "question"),
    (["ask", "", "--db", "pets_1", "--source", "spider:{sample}"], "question"),
    (["ask", "how many pets", "--db", "nope", "--source", "spider:{sample}"], "nope"),
    (["ask", "how many pets", "--store", "{damaged}"], "manifest"),
    (["serve", "--store", "{file}"], "{file}"),
    (["serve", "--port", "x"], "--port"),
    (["sql", "run", "--db", "{dir}/missing.sqlite", "SELECT 1"], "missing.sqlite"),
    (["sql", "run", "--db", "{db}", "--timeout", "x", "SELECT 1"], "--timeout"),
    (
        [
            "sql",
            "eval",
            "--gold",
            "{gold}",
            "--pred",
            "{pred}",
            "--db-dir",
            "{sample}/database",
            "--json",
            "{dir}",
        ],
        "--json",
    ),
    (
        [
            "sql",
            "eval",
            "--gold",
            "{gold}",
            "--pred",
            "{pred}",
            "--db-dir",
            "{sample}/database",
            "--json",
            "{nowhere}",
        ],
        "--json",
    ),
    (
        ["sql", "eval", "--gold", "{dir}/missing.txt", "--pred", "{pred}", "--db-dir", "{sample}"],
        "missing.txt",
    ),
    (["sql", "hardness", "SELEC x FRM"], "parse"),
    (["sql", "tables", "SELEC x FRM"], "parse"),
    (["bench", "recall", "--data", "{dir}/missing"], "{dir}/missing"),
    (["bench", "recall", "--data", "{sample}", "--json", "{dir}"], "--json"),
    (
        ["bench", "recall", "--data", "{sample}", "--embedder", "hashing", "--precision", "bf16"],
        "--precision",
    ),
    (["bench", "actor-critic", "--json", "{nowhere}"], "--json"),
    (["bench", "voting", "--data", "{dir}/missing"], "{dir}/missing"),
    (["bench", "ex", "--data", "{dir}/missing"], "{dir}/missing"),
    (["demo", "--store", "{file}"], "{file}"),
]


def snapshot(*folders: str) -> dict[str, tuple[int, int]]:
    """Every file below `folders` with its size and modification time. The build lock file is
    left out: a build that stops on bad input still took (and gave back) the store's lock."""
    return {
        str(path): (path.stat().st_size, path.stat().st_mtime_ns)
        for folder in folders
        for path in Path(folder).rglob("*")
        if path.is_file() and path.name != "build.lock"
    }


@pytest.mark.parametrize(("argv", "names"), CASES, ids=[" ".join(c[0])[:60] for c in CASES])
def test_bad_input_is_one_line_and_exit_2(
    argv: list[str],
    names: str,
    world: dict[str, str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SCHEMARAG_CACHE", str(Path(world["dir"]) / "cache.sqlite"))
    monkeypatch.setenv("SCHEMARAG_LLM", "scripted:SELECT 1")
    before = snapshot(world["store"], world["damaged"], world["empty"])
    try:
        status = main([arg.format(**world) for arg in argv])
    except SystemExit as exc:  # argparse
        status = exc.code
    err = capsys.readouterr().err
    assert status == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert names.format(**world) in lines[0]
    assert snapshot(world["store"], world["damaged"], world["empty"]) == before


def test_question_bytes_that_are_not_utf8_from_a_real_command_line(world: dict[str, str]) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "schemarag", "retrieve", b"how many \xff\xfe pets"],
        capture_output=True,
        timeout=120,
        env={**os.environ, "SCHEMARAG_CACHE": str(Path(world["dir"]) / "cache.sqlite")},
    )
    err = result.stderr.decode()
    assert result.returncode == 2
    assert err.strip().splitlines() == [
        "schemarag retrieve: error: argument question: not UTF-8 text (byte 0xff at position "
        "9); pass the question as UTF-8 (see schemarag retrieve --help)"
    ]
