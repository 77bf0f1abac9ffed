"""What a command imports before it does its work: the CLI loads the module of the command it
runs, and no command loads a library it does not use (torch, the Qdrant client, FastAPI)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from schemarag.cli import main

REPO = Path(__file__).resolve().parents[2]
#: libraries that cost a second or more to import and that only some commands need
HEAVY = ("torch", "sentence_transformers", "transformers", "qdrant_client", "fastapi", "uvicorn")
#: what `--version` and `--help` do not need either
LIBRARIES = (*HEAVY, "numpy", "sqlglot", "networkx", "httpx", "rank_bm25")


def loaded_by(code: str, watched: tuple[str, ...] = HEAVY, env: dict | None = None) -> list[str]:
    """The `watched` modules imported once `code` has run in a fresh interpreter."""
    script = textwrap.dedent(code) + textwrap.dedent(
        f"""
        import json, sys
        print(json.dumps(sorted(m for m in {list(watched)!r} if m in sys.modules)))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr
    loaded: list[str] = json.loads(out.stdout.strip().splitlines()[-1])
    return loaded


def run_cli(argv: list[str]) -> str:
    return f"""
        import contextlib, io, sys
        from schemarag.cli import main
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                status = main({argv!r})
            except SystemExit as exit:
                status = exit.code
        assert status == 0, status
        """


def test_importing_the_cli_loads_no_model_store_or_web_library():
    assert loaded_by("import schemarag.cli") == []


@pytest.mark.parametrize("argv", [["--version"], ["--help"]])
def test_version_and_help_load_no_library_at_all(argv):
    assert loaded_by(run_cli(argv), LIBRARIES) == []


def test_every_command_is_listed_and_each_parses_its_own_options():
    for argv in (
        ["catalog", "show", "spider:x"],
        ["graph", "stats", "spider:x"],
        ["sql", "tables", "SELECT 1"],
    ):
        with pytest.raises(SystemExit) as exit:
            main([*argv, "--no-such-option"])
        assert exit.value.code == 2


def test_sql_run_and_catalog_show_load_no_model_store_or_web_library(sample_dir):
    db = sample_dir / "database/concert_singer/concert_singer.sqlite"
    assert loaded_by(run_cli(["sql", "run", "--db", str(db), "SELECT 1"])) == []
    catalog = ["catalog", "show", f"spider:{sample_dir}", "--db", "concert_singer"]
    assert loaded_by(run_cli(catalog)) == []


def test_retrieve_on_a_minilm_store_loads_neither_torch_nor_qdrant(tmp_path, sample_dir):
    pytest.importorskip("sentence_transformers", reason="needs the minilm extra")
    store = tmp_path / "store"
    source = f"sqlite:{sample_dir / 'database/pets_1/pets_1.sqlite'}"
    build = ["index", "build", source, "--store", str(store), "--embedder", "minilm"]
    assert main([*build, "--no-cache", "--chains", "1"]) == 0
    env = {"SCHEMARAG_CACHE": str(tmp_path / "cache.sqlite"), "PATH": "/usr/bin:/bin"}
    question = "How many pets does each student own?"
    retrieve = ["retrieve", question, "--store", str(store), "--json"]

    assert loaded_by(run_cli(retrieve), env=env) == []


@pytest.mark.parametrize(
    "package",
    [
        "schemagraph",
        "schemagraph.sql",
        "indexer",
        "retriever",
        "generator",
        "providers",
        "schemarag",
        "evaluation",
    ],
)
def test_every_public_name_of_a_package_loads_on_first_use(package):
    """The packages import their modules when a name is first used: each name must resolve,
    in a fresh interpreter, to what its module defines (not to a module of the same name)."""
    script = f"""
        import importlib, types
        package = importlib.import_module({package!r})
        print([n for n in package.__all__ if isinstance(getattr(package, n), types.ModuleType)])
    """
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], cwd=REPO, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_no_command_but_bench_imports_an_evaluation_module(sample_dir):
    """`evaluation` is what benchmarks use: the CLI and its other commands never load it."""
    watched = ("evaluation",)
    assert loaded_by("import schemarag.cli", watched) == []
    db = sample_dir / "database/concert_singer/concert_singer.sqlite"
    for argv in (
        ["--version"],
        ["sql", "run", "--db", str(db), "SELECT 1"],
        ["catalog", "show", f"spider:{sample_dir}", "--db", "concert_singer"],
    ):
        assert loaded_by(run_cli(argv), watched) == [], argv


def test_the_retriever_and_the_servers_do_not_import_the_build() -> None:
    # the manifest's readers need its layout, not the build's config (which loads synthesis and
    # networkx: 300 modules, a few tenths of a second before every server's first answer)
    code = "import retriever.retriever, schemarag.api.served, schemarag.mcp.estate"
    assert loaded_by(code, ("networkx", "indexer.synthesis.pairs", "indexer.building.config")) == []
