"""`schemarag index add-examples`, `remove-examples` and `examples`, and what `index status`
says about users' examples; bad input is one line and exit status 2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from schemarag.cli import main

ROWS = [
    {
        "question": "Which crooners hail from the Hexagon?",
        "sql": "SELECT Name FROM singer WHERE Country = 'France'",
        "db_id": "concert_singer",
    },
    {"question": "Count the dogs.", "sql": "SELECT count(*) FROM Dogs", "db_id": "dog_kennels"},
    {"question": "Broken.", "sql": "SELECT nope FROM Dogs", "db_id": "dog_kennels"},
]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, sample_dir: Path) -> Path:
    root = tmp_path_factory.mktemp("examples-cli")
    store = root / "kb"
    argv = ["index", "build", f"spider:{sample_dir}", "--store", str(store), "--no-cache"]
    assert main([*argv, "--embedder", "hashing:64", "--chains", "1", "--iterations", "0"]) == 0
    return store


@pytest.fixture
def store(built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SCHEMARAG_CACHE", str(tmp_path / "cache.sqlite"))
    shutil.copytree(built, tmp_path / "kb")
    return tmp_path / "kb"


def test_add_list_status_and_remove(
    store: Path, sample_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "log.csv"
    path.write_text(
        "question,sql,db_id\n"
        + "".join(f'"{r["question"]}","{r["sql"]}",{r["db_id"]}\n' for r in ROWS)
    )
    report = tmp_path / "report.json"
    argv = ["index", "add-examples", str(path), f"spider:{sample_dir}", "--store", str(store)]
    assert main([*argv, "--report", str(report)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2
    assert out[0].startswith(f"rejected {path.resolve()}:4: bad column reference")
    assert out[-1].startswith("users' examples: 2 accepted, 0 already present, 1 rejected; 2 kept")
    written = json.loads(report.read_text())
    assert written["accepted"] == 2 and written["rejected"][0]["line"] == 4

    assert main(["index", "status", "--store", str(store)]) == 0
    assert "user examples 2 in this build, 2 kept" in capsys.readouterr().out

    question = "Which crooners come from the Hexagon?"
    assert main(["retrieve", question, "--store", str(store), "--embedder", "hashing:64"]) == 0
    shots = capsys.readouterr().out.split("few-shot examples:\n")[1].splitlines()
    assert shots[:2] == [f"  - {ROWS[0]['question']}  [user example]", f"    {ROWS[0]['sql']}"]

    assert main(["index", "examples", "--store", str(store), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(e["db_id"], e["line"], e["in_build"]) for e in listed] == [
        ("concert_singer", 2, True),
        ("dog_kennels", 3, True),
    ]

    one = listed[1]["id"]
    assert main(["index", "remove-examples", "--id", one, "--store", str(store)]) == 0
    assert "1 removed; 1 kept, 1 in build" in capsys.readouterr().out
    assert main(["index", "remove-examples", "--file", str(path), "--store", str(store)]) == 0
    assert "1 removed; 0 kept, 0 in build" in capsys.readouterr().out
    assert main(["index", "examples", "--store", str(store)]) == 1


def test_a_file_with_no_usable_row_exits_1(
    store: Path, sample_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(ROWS[2]) + "\n")
    argv = ["index", "add-examples", str(path), f"spider:{sample_dir}", "--store", str(store)]
    assert main(argv) == 1
    assert "0 accepted, 0 already present, 1 rejected" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["index", "add-examples", "{dir}/missing.jsonl", "spider:{sample}"], "no such file"),
        (["index", "add-examples", "{dir}/log.txt", "spider:{sample}"], "unknown examples format"),
        (["index", "add-examples", "{dir}/empty.csv", "spider:{sample}"], "lacks question"),
        (["index", "remove-examples"], "--file, --source or --id"),
        (["index", "remove-examples", "--id", "ex_nope"], "no user example matches ex_nope"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    store: Path,
    sample_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    words: str,
) -> None:
    (tmp_path / "log.txt").write_text("question,sql,db_id\n")
    (tmp_path / "empty.csv").write_text("")
    names = {"dir": str(tmp_path), "sample": str(sample_dir)}
    before = (store / "CURRENT").read_text()
    assert main([*(a.format(**names) for a in argv), "--store", str(store)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err and "Traceback" not in err
    assert (store / "CURRENT").read_text() == before


def test_adding_to_a_store_without_a_build_names_the_fix(
    sample_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "log.json"
    path.write_text(json.dumps(ROWS[:1]))
    argv = ["index", "add-examples", str(path), f"spider:{sample_dir}"]
    assert main([*argv, "--store", str(tmp_path / "none")]) == 2
    assert "run `schemarag index build SOURCE..." in capsys.readouterr().err
