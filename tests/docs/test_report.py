"""The benchmark report: docs/BENCHMARKS.md's tables and the README's are what the result files
in benchmarks/results render (benchmarks/render_report.py), and the renderer does what it says."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from schemarag.cli import main
from tests.retriever.conftest import RECORDS, write_store

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "render_report.py"
SECTIONS = (
    "recall",
    "examples",
    "latency",
    "build",
    "generation",
    "http",
    "startup",
    "mcp",
    "mcp-startup",
    "catalog-show",
    "check",
    "synthesis-warehouse",
)


def render(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, args)],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )


def test_the_documents_show_the_figures_of_the_result_files() -> None:
    done = render("--check")
    assert done.returncode == 0, done.stderr


def test_every_result_file_is_small_and_says_where_it_came_from() -> None:
    for path in sorted((REPO / "benchmarks/results").glob("*.json")):
        result = json.loads(path.read_text())
        assert path.stat().st_size < 20_000, f"{path.name}: summaries only"
        assert "per_question" not in result, path.name
        rows = result.get("rows", [result])
        for row in rows if isinstance(rows, list) else [result]:
            for key in ("commit", "date"):
                assert row.get(key) or result.get(key), f"{path.name}: no {key}"
            assert row.get("command") or result.get("command") or result.get("commands")
        assert result.get("machine"), path.name


def recall_result(label: str, db_r1: float, **extra: Any) -> dict[str, Any]:
    figures = {
        "db_R@1": db_r1, "db_R@1_twins": db_r1, "db_R@5": 90.0, "tab_R@5": 80.0,
        "tab_R@10": 85.0, "all_tabs@5": 70.0, "all_tabs@10": 75.0,
        "latency_ms_p50": 4.25, "latency_ms_p99": 9.0,
    }  # fmt: skip
    baseline = {**figures, "db_R@1": 33.3, "latency_ms_p50": 0.1}
    return {
        "benchmark": "recall", "label": label, "command": "schemarag bench recall --dataset x",
        "commit": "abc1234", "date": "2026-01-02T03:04:05+00:00", "machine": "2 cores",
        "questions": 1034, "databases": 166,
        "methods": {"schemarag": figures, "bm25_table": baseline},
        **extra,
    }  # fmt: skip


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A results folder with one recall pool (with curves) and a startup result, and documents
    holding every marker."""
    results = tmp_path / "results"
    results.mkdir()
    curves = {
        "schemarag": {
            "k": [1.0, 2.0, 3.0],
            "db_R": [71.25, 90.0, 95.0],
            "tab_R": [50.0, 60.0, 70.0],
        }
    }
    (results / "recall-spider-dev.json").write_text(
        json.dumps(recall_result("Toy dev", 71.25, curves=curves))
    )
    startup = {
        "benchmark": "startup", "command": "bench_startup.py", "commit": "abc1234",
        "date": "2026-01-02", "machine": "2 cores", "runs": 5,
        "rows": [
            {"command": "retrieve", "checkout": "new (abc1234)", "wall_s": 0.362, "cpu_s": 0.4},
            {"command": "retrieve", "checkout": "old (0000000)", "wall_s": 6.6, "cpu_s": 6.5},
        ],
    }  # fmt: skip
    (results / "startup.json").write_text(json.dumps(startup))
    doc = "# B\n\n" + "".join(
        f"## {name}\n\n<!-- report:{name} -->\nstale\n<!-- /report:{name} -->\n\n"
        for name in SECTIONS
    )
    (tmp_path / "BENCHMARKS.md").write_text(doc)
    (tmp_path / "README.md").write_text("# R\n\n<!-- report:readme -->\n<!-- /report:readme -->\n")
    return tmp_path


def options(folder: Path) -> list[Path | str]:
    return [
        "--results", folder / "results", "--benchmarks", folder / "BENCHMARKS.md",
        "--readme", folder / "README.md", "--img", folder / "img",
    ]  # fmt: skip


def test_the_renderer_writes_the_tables_the_readme_and_the_plots(folder: Path) -> None:
    assert render(*options(folder), "--check").returncode == 1  # "stale" is not what renders
    done = render(*options(folder))
    assert done.returncode == 0, done.stderr

    doc = (folder / "BENCHMARKS.md").read_text()
    assert "stale" not in doc
    row = next(line for line in doc.splitlines() if line.startswith("| Toy dev"))
    assert "**71.2**" in row and "(1,034 q, 166 db)" in row and "| 4.2 |" in row
    assert "| bm25_table | 33.3 |" in doc
    assert "abc1234, 2026-01-02: `schemarag bench recall --dataset x`" in doc
    assert "![Toy dev: recall@k](img/recall-spider-dev.svg)" in doc
    assert "| `retrieve` | 0.36 | 0.40 | 6.60 |" in doc
    assert "(no http results)" in doc  # a section without results says so

    readme = (folder / "README.md").read_text()
    table = [line for line in readme.splitlines() if line.startswith("| ")]
    assert 3 <= len(table) <= 12  # header, rule and at most 10 rows
    assert (
        "| Toy dev: first database right, db_R@1 (166 databases) | **71.2 %** | 33.3 % |" in table
    )
    assert "[docs/BENCHMARKS.md](docs/BENCHMARKS.md)" in readme

    svg = (folder / "img" / "recall-spider-dev.svg").read_text()
    assert svg.startswith("<svg") and svg.count("<polyline") == 2  # db_R and tab_R
    assert "Toy dev: recall@k (1,034 questions)" in svg

    assert render(*options(folder), "--check").returncode == 0
    assert render(*options(folder)).stdout == ""  # nothing to write the second time


def test_check_fails_when_a_figure_in_a_document_drifts(folder: Path) -> None:
    assert render(*options(folder)).returncode == 0
    doc = folder / "BENCHMARKS.md"
    doc.write_text(doc.read_text().replace("**71.2**", "**72.0**"))
    done = render(*options(folder), "--check")
    assert done.returncode == 1
    assert str(doc) in done.stderr and "render_report.py" in done.stderr
    assert "**72.0**" in doc.read_text()  # --check writes nothing

    # and when the result changes, the documents follow it
    path = folder / "results" / "recall-spider-dev.json"
    path.write_text(json.dumps(recall_result("Toy dev", 80.0)))
    assert render(*options(folder)).returncode == 0
    assert "**80.0 %**" in (folder / "README.md").read_text()


@pytest.mark.parametrize(
    ("spoil", "words"),
    [
        (lambda f: (f / "README.md").write_text("# no markers\n"), "report:readme"),
        (lambda f: (f / "results" / "bad.json").write_text("{"), "bad.json is not JSON"),
        (lambda f: (f / "results" / "x.json").write_text("{}"), 'no "benchmark" field'),
        (
            lambda f: (f / "results" / "recall-b.json").write_text('{"benchmark": "recall"}'),
            "lacks",
        ),
    ],
)
def test_bad_inputs_are_one_line_and_exit_2(folder: Path, spoil: Any, words: str) -> None:
    spoil(folder)
    done = render(*options(folder))
    assert done.returncode == 2
    assert words in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr


def test_bench_recall_writes_a_result_file_the_report_renders(
    tmp_path: Path, sample_dir: Path, folder: Path
) -> None:
    from providers import HashingEmbedder
    from schemagraph import load_spider

    embedder = HashingEmbedder(256)
    store = write_store(tmp_path / "kb", load_spider(sample_dir), embedder, RECORDS)
    questions = tmp_path / "q.json"
    questions.write_text(
        json.dumps(
            [
                {
                    "db_id": "pets_1",
                    "question": "How many dogs are there?",
                    "query": "SELECT count(*) FROM Pets",
                },
                {
                    "db_id": "flight_2",
                    "question": "How many flights?",
                    "query": "SELECT count(*) FROM flights",
                },
            ]
        )
    )
    out = folder / "results" / "recall-spider-dev.json"
    report = tmp_path / "report.json"
    code = main(
        [
            "bench", "recall", "--tables", str(sample_dir / "tables.json"),
            "--questions", str(questions), "--store", str(store), "--embedder", embedder.name,
            "--json", str(report), "--per-question", "--result", str(out), "--label", "Sample",
        ]
    )  # fmt: skip
    assert code == 0
    result = json.loads(out.read_text())
    full = json.loads(report.read_text())
    assert result["benchmark"] == "recall" and result["label"] == "Sample"
    assert result["methods"] == full["methods"] and result["curves"] == full["curves"]
    assert "per_question" not in result and result["twin_groups"] == len(full["twin_groups"])
    assert result["command"].startswith("schemarag bench recall --tables")
    assert "--label Sample" in result["command"]
    assert result["commit"] and result["date"][:4].isdigit() and "cores" in result["machine"]

    assert render(*options(folder)).returncode == 0
    doc = (folder / "BENCHMARKS.md").read_text()
    db_r1 = full["methods"]["schemarag"]["db_R@1"]
    assert f"| Sample (2 q, 8 db) | schemarag | **{db_r1:.1f}** |" in doc


def test_bench_ex_writes_a_generation_result_the_report_renders(
    tmp_path: Path, sample_dir: Path, folder: Path
) -> None:
    spider = tmp_path / "spider"
    spider.mkdir()
    (spider / "tables.json").write_text((sample_dir / "tables.json").read_text())
    (spider / "database").symlink_to(sample_dir / "database")
    questions = [
        ("How many singers do we have?", "SELECT count(*) FROM singer"),
        ("What are the names of the stadiums?", "SELECT name FROM stadium"),
    ]
    (spider / "dev.json").write_text(
        json.dumps([{"db_id": "concert_singer", "question": q, "query": s} for q, s in questions])
    )
    out = folder / "results" / "generation.json"
    argv = ["bench", "ex", "--data", str(spider), "--settings", "gold-database"]
    argv += ["--strategy", "single", "--llm", "scripted:SELECT count(*) FROM singer"]
    argv += ["--result", str(out)]
    assert main(argv) == 0
    result = json.loads(out.read_text())
    assert result["benchmark"] == "generation" and "cores" in result["machine"]
    (row,) = result["rows"]
    assert row["setting"] == "gold database" and row["strategy"] == "single"
    assert row["EX"] == 50.0 and row["model"].startswith("scripted")
    assert row["command"].startswith("schemarag bench ex --data") and row["commit"]

    assert render(*options(folder)).returncode == 0
    doc = (folder / "BENCHMARKS.md").read_text()
    assert "| gold database | **50.0** |" in doc


def test_the_http_load_script_writes_a_row_the_report_renders(folder: Path) -> None:
    import argparse
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "bench_api_load", REPO / "benchmarks/bench_api_load.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    args = argparse.Namespace(clients=16, rate=None, workers=1, label=None)
    measured = {"requests": 600, "errors": 0, "rps": 600.4, "p50_ms": 23.26, "p99_ms": 40.0}
    result = {"date": "2026-01-02", "machine": "2 cores", "index": {}, "all": measured}
    row = module.report_row(args, result | {"server_resident_mb_at_end": 936})
    (folder / "results" / "http.json").write_text(json.dumps(row))
    assert render(*options(folder)).returncode == 0
    doc = (folder / "BENCHMARKS.md").read_text()
    assert "| 16 clients back to back, 1 worker | 600.4 | 23.3 | 40.0 | 0 | 936 |" in doc
    assert "benchmarks/bench_api_load.py" in doc


def test_the_mcp_script_merges_each_size_into_the_result_the_report_renders(folder: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_mcp", REPO / "benchmarks/bench_mcp.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    def report(databases: int, find_median: float) -> dict[str, Any]:
        tokens = {name: {"median": 100.0, "p90": 200.0} for name in module.TOKEN_ROWS}
        tokens["find_tables"] = {"median": find_median, "p90": 638.0}
        return {
            "databases": databases, "questions": 100, "seed": 0,
            "tokens": tokens,
            "latency_ms": {name: {"p50": 1.5, "p99": 2.5} for name in module.LATENCY_ROWS},
            "first_answer_s_in_process": 4.95, "first_answer_s_process": [5.5, 4.9, 5.1],
            "peak_rss_mb": 794,
        }  # fmt: skip

    result = module.merge_result(None, report(166, 516.0))
    result = module.merge_result(result, report(1000, 514.0))
    assert set(result["commands"]) == {"166", "1000"}
    (folder / "results" / "mcp.json").write_text(json.dumps(result))
    assert render(*options(folder)).returncode == 0
    doc = (folder / "BENCHMARKS.md").read_text()
    assert "| `find_tables` | 516 | 638 | 514 | 638 |" in doc
    assert "| schemarag mcp over stdio, to the first answer (3 runs) | 4.90-5.50 s |" in doc


def anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to '-'."""
    kept = "".join(c for c in heading.strip().lower() if c.isalnum() or c in " -_")
    return kept.replace(" ", "-")


def test_links_into_benchmarks_md_name_headings_it_has() -> None:
    import re

    text = (REPO / "docs/BENCHMARKS.md").read_text()
    anchors = {anchor(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}
    assert {"users-examples", "http-api-load", "decision-log"} <= anchors
    documents = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    links = [
        (path.name, target)
        for path in documents
        for target in re.findall(r"BENCHMARKS\.md#([\w-]+)", path.read_text())
        + (re.findall(r"\]\(#([\w-]+)\)", text) if path.name == "BENCHMARKS.md" else [])
    ]
    assert links
    assert [link for link in links if link[1] not in anchors] == []
