"""`schemarag catalog` / `graph` / `demo` as a user runs them."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from schemarag.cli import main

REPO = Path(__file__).resolve().parents[2]


def run(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "schemarag", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )


def readme_first_commands() -> list[list[str]]:
    """The README's first shell block after `make demo`, one argv per line."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text.split("does not put `schemarag` on your PATH", 1)[1].split("```sh\n", 1)[1]
    return [shlex.split(line) for line in block.split("```", 1)[0].splitlines()]


def test_catalog_show_lists_tables_columns_and_keys(
    sample_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["catalog", "show", f"spider:{sample_dir}", "--db", "pets_1"]) == 0
    out = capsys.readouterr().out
    assert "pets_1  (3 tables" in out
    assert "Pets: PetID* number, PetType text, pet_age number, weight number" in out
    assert "FK (PetID) -> Pets(PetID)" in out
    assert out.strip().endswith(
        "1 database, 3 tables, 14 columns, 2 foreign keys; 0 problems reported"
    )


def test_catalog_show_json(sample_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalog", "show", f"spider:{sample_dir}", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["databases"]) == 8
    assert data["problems"] == []
    assert {db["dialect"] for db in data["databases"]} == {"sqlite"}


def test_catalog_show_json_names_a_warehouse_as_its_engine_does(
    fixtures: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = fixtures / "warehouse"
    sources = [f"infoschema:{folder / 'bigquery'}", f"infoschema:{folder / 'snowflake'}"]
    assert main(["catalog", "show", *sources, "--json"]) == 0
    data = {db["db_id"]: db for db in json.loads(capsys.readouterr().out)["databases"]}
    bigquery, snowflake = data["acme-retail-prod"], data["SHOP_DB"]
    assert (bigquery["dialect"], snowflake["dialect"]) == ("bigquery", "snowflake")
    assert bigquery["tables"][0]["name"] == "crm__customers"
    assert bigquery["tables"][0]["sql_name"] == "`acme-retail-prod.crm.customers`"
    assert "SHOP_DB.SALES.ORDERS" in {t["sql_name"] for t in snowflake["tables"]}


def test_graph_stats_json(sample_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["graph", "stats", f"spider:{sample_dir}", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["databases"] == 8 and data["tables"] == 53
    assert data["traversals"] == sum(data["traversals_by_size"].values())
    assert (data["foreign_keys"], data["foreign_key_edges"], data["parallel_keys"]) == (45, 43, 2)
    assert data["walks_tried"] == 32 and data["traversals_by_kind"].get("walk", 0) == 0


def test_graph_stats_says_why_its_counts_differ_from_catalog_show(
    sample_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["catalog", "show", f"spider:{sample_dir}"]) == 0
    assert "45 foreign keys" in capsys.readouterr().out
    assert main(["graph", "stats", f"spider:{sample_dir}"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert (
        "foreign-key edges  43  (45 foreign keys: 2 join a pair of tables already joined)" in lines
    )
    assert "traversals         139  (1 table: 53, 2 tables: 43, 3 tables: 43)" in lines
    assert (
        "random walks       32 tried (4 per joined database), 0 new "
        "(the others' tables were enumerated already)"
    ) in lines
    assert main(["graph", "stats", f"spider:{sample_dir}", "--walks", "0"]) == 0
    assert "random walks       0 tried" in capsys.readouterr().out


def test_graph_walks_prints_serialized_traversals(
    sample_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["graph", "walks", f"spider:{sample_dir}", "--db", "pets_1", "--limit", "2"]) == 0
    out = capsys.readouterr().out
    assert out.count("-- traversal") == 2
    assert "CREATE TABLE" in out and "example rows" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["catalog", "show", "spider:/no/such/dir"], "/no/such/dir: no such file"),
        (["catalog", "show", "nosuchkind:x"], "KIND one of spider, sqlite, ddl"),
        (["graph", "walks", "SAMPLE", "--db", "nope"], "unknown database 'nope'"),
        (["graph", "walks", "SAMPLE", "--db", "pets_1", "--limit", "0"], "--limit must be >= 1"),
    ],
)
def test_user_errors_are_one_line_with_non_zero_exit(
    sample_dir: Path, args: list[str], message: str
) -> None:
    args = [a.replace("SAMPLE", f"spider:{sample_dir}") for a in args]
    result = run(*args)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_malformed_json_and_bad_ddl_exit_non_zero(tmp_path: Path) -> None:
    (tmp_path / "tables.json").write_text("{not json")
    result = run("catalog", "show", f"spider:{tmp_path}")
    assert result.returncode == 2 and "tables.json: malformed JSON" in result.stderr
    bad = tmp_path / "bad.sql"
    bad.write_text("CREATE TABLE a (id INT REFERENCES b(id));")
    result = run("catalog", "show", f"ddl:{bad}")
    assert (
        result.returncode == 2
        and "bad.sql" in result.stderr
        and "missing table 'b'" in result.stderr
    )


def test_skipped_ddl_table_is_reported_in_the_summary(tmp_path: Path) -> None:
    ddl = tmp_path / "db.sql"
    ddl.write_text(
        "CREATE TABLE ok (id INT);\nCREATE TABLE bad (id INT PRIMARY KEY,, name TEXT (;\n"
    )
    result = run("catalog", "show", f"ddl[postgres]:{ddl}")
    assert result.returncode == 0
    assert "db.sql:2: statement skipped" in result.stderr
    assert "1 problem while loading" in result.stderr
    assert "1 problem reported" in result.stdout


def test_demo_builds_the_sample_index_and_is_incremental_on_rerun(tmp_path: Path) -> None:
    """Run from a folder laid out like the repository (`schemarag/` beside it), as `make demo`
    does; then the README's first commands work verbatim, and so do those the demo prints."""
    (tmp_path / "schemarag").symlink_to(REPO / "schemarag")
    env = {
        "SCHEMARAG_EMBEDDER": "hashing",
        "SCHEMARAG_CACHE": str(tmp_path / "cache.sqlite"),
        "SCHEMARAG_LLM": "",
    }
    result = run("demo", env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "8 databases, 53 tables" in result.stdout
    assert result.stdout.count("-- traversal") == 2
    assert "questions in index" in result.stdout
    assert "-> pets_1" in result.stdout and "-> concert_singer" in result.stdout
    assert "generation needs a language model" in result.stdout
    assert "SCHEMARAG_LLM=llamacpp:PATH.gguf" in result.stdout  # as `ask` names it
    assert "python benchmarks/fetch_local_model.py" in result.stdout
    again = run("demo", env=env, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "index up to date" in again.stdout

    commands = readme_first_commands()
    assert [argv[0] for argv in commands] == [".venv/bin/schemarag"] * 3
    outputs = []
    for argv in commands:
        step = run(*argv[1:], env=env, cwd=tmp_path)
        assert step.returncode == 0, (argv, step.stderr)
        outputs.append(step.stdout)
    assert outputs[0].splitlines()[1].startswith("1. concert_singer")
    assert "Justin Brown" in outputs[2]
    printed = result.stdout.split("== Next: query what the demo built\n", 1)[1].splitlines()
    assert len(printed) == 3
    for line in printed:
        step = subprocess.run(
            line,
            shell=True,
            capture_output=True,
            text=True,
            timeout=300,
            cwd=tmp_path,
            env={**os.environ, **env},
        )
        assert step.returncode == 0, (line, step.stderr)


@pytest.mark.spider
def test_graph_stats_on_full_spider(spider_dir: Path) -> None:
    result = run("graph", "stats", f"spider:{spider_dir}", "--json")
    data = json.loads(result.stdout)
    assert (data["databases"], data["tables"], data["foreign_key_edges"]) == (166, 876, 742)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--shards", "0"], "shards must be >= 1, got 0"),
        (["--replicas", "2"], "settings of a Qdrant server store (--store http://...)"),
        (["--quantize"], "settings of a Qdrant server store"),
    ],
)
def test_server_layout_flags_are_checked_before_building(
    sample_dir: Path, tmp_path: Path, flags: list[str], message: str
) -> None:
    store = tmp_path / "store"
    result = run(
        *("index", "build", f"spider:{sample_dir}", "--store", str(store)),
        *("--embedder", "hashing", "--no-cache", *flags),
    )
    assert result.returncode == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (store / "builds").exists()


def test_demo_names_a_fetched_local_model_by_its_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from schemarag.cli.demo import no_llm_lines

    monkeypatch.chdir(tmp_path)
    assert "llamacpp:PATH.gguf" in "\n".join(no_llm_lines("schemarag", "kb"))
    (tmp_path / ".schemarag" / "models").mkdir(parents=True)
    (tmp_path / ".schemarag" / "models" / "tiny.gguf").write_bytes(b"GGUF")
    text = "\n".join(no_llm_lines("schemarag", "kb"))
    assert "SCHEMARAG_LLM=llamacpp:.schemarag/models/tiny.gguf" in text
    assert "fetch_local_model" not in text
