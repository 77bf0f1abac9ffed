"""`schemarag retrieve`: `--top-tables` bounds the ranked tables; bridges are listed apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from providers import HashingEmbedder
from schemagraph import load_spider
from schemarag.cli import main
from tests.retriever.conftest import RECORDS, write_store

QUESTION = "What is the horsepower of cars from countries in europe?"


@pytest.fixture(scope="module")
def store(sample_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("kb") / "kb"
    return str(write_store(root, load_spider(sample_dir), HashingEmbedder(256), RECORDS))


def test_top_tables_shows_that_many_tables_and_names_the_bridges(
    store: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCHEMARAG_CACHE", str(tmp_path / "cache.sqlite"))
    argv = ["retrieve", QUESTION, "--store", store, "--embedder", "hashing:256"]
    assert main([*argv, "--top-databases", "1", "--top-tables", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("1. car_1"))
    listed = lines[start + 1 : start + 6]
    assert [line.split()[0] for line in listed[:2]] == ["cars_data", "countries"]
    assert sorted(listed[2:]) == [
        f"     + bridge: {t} (joins cars_data to countries)"
        for t in ("car_makers", "car_names", "model_list")
    ]
    assert main([*argv, "--top-databases", "1", "--top-tables", "2", "--json"]) == 0
    (car,) = json.loads(capsys.readouterr().out)["databases"]
    assert [t["name"] for t in car["tables"]] == ["cars_data", "countries"]
    assert {t["name"] for t in car["bridges"]} == {"car_makers", "car_names", "model_list"}
    assert set(car["chosen_tables"]) == {"cars_data", "countries"} | {
        t["name"] for t in car["bridges"]
    }
    # with room for them, the bridges are among the ranked tables, marked there
    assert main([*argv, "--top-databases", "1", "--top-tables", "10"]) == 0
    out = capsys.readouterr().out
    assert "+ bridge:" not in out
    assert "car_makers" in out and "[bridge: joins cars_data to countries]" in out


def test_without_store_after_make_demo_it_reads_the_demo_store(
    sample_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`make demo` builds `.schemarag/demo-store`; `retrieve` without `--store` reads the
    default `.schemarag/store`, and finds the demo's when that holds nothing, saying so."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SCHEMARAG_CACHE", str(tmp_path / "cache.sqlite"))
    monkeypatch.delenv("SCHEMARAG_STORE", raising=False)
    question = "Which singers are from France?"
    assert main(["retrieve", question]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and ".schemarag/demo-store" in err and "--store" in err

    build = ["index", "build", f"spider:{sample_dir}", "--store", ".schemarag/demo-store"]
    assert main([*build, "--embedder", "hashing:64", "--no-cache", "--processes", "0"]) == 0
    capsys.readouterr()
    assert main(["retrieve", question]) == 0
    captured = capsys.readouterr()
    assert "1. concert_singer" in captured.out
    assert "using the demo's, .schemarag/demo-store" in captured.err
    # a store named by SCHEMARAG_STORE is never swapped for the demo's
    monkeypatch.setenv("SCHEMARAG_STORE", str(tmp_path / "empty"))
    assert main(["retrieve", question]) == 2
    assert "no built knowledge base" in capsys.readouterr().err


def test_retrieve_reads_the_served_build_and_its_manifest_once(
    store: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from store import StoreLocation

    reads = {"current": 0, "manifest": 0}
    current, manifest = StoreLocation.current, StoreLocation.manifest

    def counted_current(self: StoreLocation) -> str | None:
        reads["current"] += 1
        return current(self)

    def counted_manifest(self: StoreLocation, build_id: str) -> dict[str, object]:
        reads["manifest"] += 1
        return manifest(self, build_id)

    monkeypatch.setattr(StoreLocation, "current", counted_current)
    monkeypatch.setattr(StoreLocation, "manifest", counted_manifest)
    monkeypatch.setenv("SCHEMARAG_CACHE", str(tmp_path / "cache.sqlite"))
    assert main(["retrieve", QUESTION, "--store", store]) == 0  # the embedder from the manifest
    assert "1. car_1" in capsys.readouterr().out
    assert reads == {"current": 1, "manifest": 1}


def test_one_place_says_a_store_holds_no_build() -> None:
    repo = Path(__file__).resolve().parents[2]
    said = [
        path
        for package in ("retriever", "indexer", "schemarag", "evaluation", "generator")
        for path in (repo / package).rglob("*.py")
        if "no built knowledge base" in path.read_text()
    ]
    assert [p.relative_to(repo).as_posix() for p in said] == ["retriever/knowledge.py"]
