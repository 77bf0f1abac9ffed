"""`schemarag sql run|hardness|tables` (eval is covered in test_sql_evaluate.py)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from schemarag.cli import main


def test_run_prints_an_aligned_table(concert_db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sql = "SELECT Name, Age FROM singer ORDER BY Age LIMIT 2"
    assert main(["sql", "run", "--db", str(concert_db), sql]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["Name", "Age"]
    assert set(lines[1].replace(" ", "")) == {"-"}
    assert lines[2].split() == ["Tribal", "King", "25"]
    assert lines[2].index("25") == lines[0].index("Age")
    assert lines[-1].startswith("(2 rows, ")


def test_run_json_reports_truncation_and_blobs(
    concert_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["sql", "run", "--db", str(concert_db), "--json", "--max-rows", "1"]
    assert main([*argv, "SELECT Name, x'00ff' AS b FROM singer ORDER BY Singer_ID"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["ok"] is True
    assert payload["columns"] == ["Name", "b"]
    assert payload["rows"] == [["Joe Sharp", "x'00ff'"]]
    assert payload["truncated"] is True


def test_run_refusal_exits_1_and_leaves_the_file_alone(
    concert_db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = hashlib.sha256(concert_db.read_bytes()).hexdigest()
    assert main(["sql", "run", "--db", str(concert_db), "DELETE FROM singer"]) == 1
    assert "refused (write)" in capsys.readouterr().err
    assert main(["sql", "run", "--db", str(concert_db), "--json", "PRAGMA user_version=1"]) == 1
    payload = json.loads(capsys.readouterr().out)
    assert (payload["ok"], payload["kind"], payload["rule"]) == (False, "refused", "pragma")
    assert hashlib.sha256(concert_db.read_bytes()).hexdigest() == before


def test_run_timeout_exits_1(concert_db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sql = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c"
    assert main(["sql", "run", "--db", str(concert_db), "--timeout", "0.3", sql]) == 1
    assert "timeout" in capsys.readouterr().err


def test_run_missing_database_is_a_user_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sql", "run", "--db", str(tmp_path / "none.sqlite"), "SELECT 1"]) == 2
    assert "none.sqlite: no such database file" in capsys.readouterr().err


def test_hardness_and_tables(capsys: pytest.CaptureFixture[str]) -> None:
    sql = "SELECT T1.name FROM singer AS T1 JOIN concert AS T2 ON T1.id = T2.sid WHERE T2.y = 1"
    assert main(["sql", "hardness", sql]) == 0
    assert capsys.readouterr().out.startswith("medium (component1=2, component2=0, others=0)")
    assert main(["sql", "hardness", "--json", sql]) == 0
    assert json.loads(capsys.readouterr().out)["hardness"] == "medium"
    assert main(["sql", "tables", sql]) == 0
    assert capsys.readouterr().out.split() == ["concert", "singer"]
    assert main(["sql", "hardness", "SELECT FROM WHERE ("]) == 2
