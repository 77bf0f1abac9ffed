"""A build records twin databases in its manifest; `index status` and `retrieve` show them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schemarag.cli import main


def test_twins_are_recorded_at_build_time_and_shown(
    sample_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SCHEMARAG_CACHE", str(tmp_path / "cache.sqlite"))
    tables = json.loads((sample_dir / "tables.json").read_text())
    (pets,) = [t for t in tables if t["db_id"] == "pets_1"]
    (singers,) = [t for t in tables if t["db_id"] == "concert_singer"]
    folder = tmp_path / "estate"
    folder.mkdir()
    (folder / "tables.json").write_text(
        json.dumps([pets, {**pets, "db_id": "pets_staging"}, singers])
    )
    store = str(tmp_path / "store")
    argv = ["index", "build", f"spider:{folder}", "--store", store]
    assert main([*argv, "--embedder", "hashing:64", "--no-cache", "--chains", "1"]) == 0
    capsys.readouterr()
    assert main(["index", "status", "--store", store]) == 0
    assert "twins        pets_1, pets_staging (identical)" in capsys.readouterr().out
    assert main(["index", "status", "--store", store, "--json"]) == 0
    (group,) = json.loads(capsys.readouterr().out)["twins"]
    assert group["members"] == ["pets_1", "pets_staging"] and group["identical"]
    question = "How many pets are older than 3?"
    assert main(["retrieve", question, "--store", store, "--embedder", "hashing:64"]) == 0
    out = capsys.readouterr().out
    assert "twins: " in out and "nothing in the question tells them apart" in out


def test_extended_copies_are_recorded_at_build_time_and_shown(
    sample_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SCHEMARAG_CACHE", str(tmp_path / "cache.sqlite"))
    tables = json.loads((sample_dir / "tables.json").read_text())
    (pets,) = [t for t in tables if t["db_id"] == "pets_1"]
    (singers,) = [t for t in tables if t["db_id"] == "concert_singer"]
    extra = len(pets["table_names_original"])
    plus = {
        **pets,
        "db_id": "PETS_PLUS",
        "table_names_original": [n.upper() for n in pets["table_names_original"]]
        + ["VACCINATIONS"],
        "table_names": [*pets["table_names"], "vaccinations"],
        "column_names_original": [
            *([i, c.upper()] for i, c in pets["column_names_original"]),
            [extra, "PETID"],
            [extra, "VACCINE"],
        ],
        "column_names": [*pets["column_names"], [extra, "petid"], [extra, "vaccine"]],
        "column_types": [*pets["column_types"], "number", "text"],
    }
    folder = tmp_path / "estate"
    folder.mkdir()
    (folder / "tables.json").write_text(json.dumps([pets, plus, singers]))
    store = str(tmp_path / "store")
    argv = ["index", "build", f"spider:{folder}", "--store", store]
    assert main([*argv, "--embedder", "hashing:64", "--no-cache", "--chains", "1"]) == 0
    capsys.readouterr()
    assert main(["index", "status", "--store", store]) == 0
    assert "contained    pets_1 in PETS_PLUS adds VACCINATIONS" in capsys.readouterr().out
    assert main(["index", "status", "--store", store, "--json"]) == 0
    (group,) = json.loads(capsys.readouterr().out)["containment"]
    assert group == {
        "base": "pets_1",
        "copies": ["PETS_PLUS"],
        "adds": {"PETS_PLUS": ["VACCINATIONS"]},
    }
    question = "What is the average weight of the pets?"
    assert main(["retrieve", question, "--store", store, "--embedder", "hashing:64"]) == 0
    assert "also answerable in " in capsys.readouterr().out
