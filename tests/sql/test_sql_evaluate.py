"""Execution accuracy: the JSON contract, gold errors, input errors, modes, Spider dev."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from schemagraph.sql import (
    CompareMode,
    EvalInputError,
    EvalOptions,
    LimitsError,
    evaluate_files,
    remove_distinct,
)
from schemarag.cli import main

CS = "concert_singer"
GOLD = [
    ("SELECT count(*) FROM singer", CS),  # easy
    ("SELECT name, country, age FROM singer ORDER BY age DESC", CS),  # medium
    ("SELECT DISTINCT country FROM singer WHERE age > 20", CS),  # easy
    ("SELECT no_such_column FROM singer", CS),  # gold error
    ("SELECT name FROM stadium WHERE capacity > (SELECT avg(capacity) FROM stadium)", CS),
]
PRED = [
    "SELECT count(*) FROM singer",  # correct
    "SELECT age, name, country FROM singer ORDER BY age DESC",  # correct: columns permuted
    "SELECT country FROM singer WHERE age > 20",  # correct when DISTINCT is removed
    "SELECT 1",  # not counted: its gold fails
    "DROP TABLE stadium",  # refused: wrong
]


def write_files(tmp_path: Path, gold: list[tuple[str, str]], pred: list[str]) -> tuple[Path, Path]:
    gold_path, pred_path = tmp_path / "gold.sql", tmp_path / "pred.sql"
    gold_path.write_text("".join(f"{sql}\t{db}\n" for sql, db in gold), encoding="utf-8")
    pred_path.write_text("".join(f"{sql}\n" for sql in pred), encoding="utf-8")
    return gold_path, pred_path


@pytest.fixture
def db_dir(sample_dir: Path) -> Path:
    return sample_dir / "database"


def test_json_contract(tmp_path: Path, db_dir: Path) -> None:
    gold_path, pred_path = write_files(tmp_path, GOLD, PRED)
    report = evaluate_files(gold_path, pred_path, db_dir).to_json()
    assert report["execution_accuracy"] == 75.0
    assert report["count"] == 4
    assert report["gold_errors"] == 1
    assert set(report["by_hardness"]) == {"easy", "medium", "hard", "extra"}
    for level in report["by_hardness"].values():
        assert set(level) == {"execution_accuracy", "count"}
        assert isinstance(level["execution_accuracy"], float) and isinstance(level["count"], int)
        assert 0.0 <= level["execution_accuracy"] <= 100.0
    assert report["by_hardness"]["easy"] == {"execution_accuracy": 100.0, "count": 2}
    assert report["by_hardness"]["medium"] == {"execution_accuracy": 100.0, "count": 1}
    assert report["by_hardness"]["hard"] == {"execution_accuracy": 0.0, "count": 1}
    assert report["by_hardness"]["extra"] == {"execution_accuracy": 0.0, "count": 0}
    json.dumps(report)  # serializable as is


def test_gold_errors_are_reported_not_counted(tmp_path: Path, db_dir: Path) -> None:
    report = evaluate_files(*write_files(tmp_path, GOLD, PRED), db_dir)
    failed = [case for case in report.cases if case.gold_error]
    assert [case.line for case in failed] == [4]
    assert "no_such_column" in (failed[0].gold_error or "")
    refused = report.cases[4]
    assert not refused.correct and refused.pred_error and "refused" in refused.pred_error


def test_keep_distinct_follows_the_official_flag(tmp_path: Path, db_dir: Path) -> None:
    paths = write_files(tmp_path, GOLD[2:3], PRED[2:3])
    assert evaluate_files(*paths, db_dir).execution_accuracy == 100.0
    kept = evaluate_files(*paths, db_dir, EvalOptions(keep_distinct=True))
    assert kept.execution_accuracy == 0.0


def test_bird_mode_compares_row_sets(tmp_path: Path, db_dir: Path) -> None:
    gold = [("SELECT country FROM singer", CS), ("SELECT name, age FROM singer", CS)]
    pred = ["SELECT DISTINCT country FROM singer", "SELECT age, name FROM singer"]
    paths = write_files(tmp_path, gold, pred)
    bird = evaluate_files(*paths, db_dir, EvalOptions(mode=CompareMode.BIRD))
    assert [case.correct for case in bird.cases] == [True, False]
    spider = evaluate_files(*paths, db_dir, EvalOptions(keep_distinct=True))
    assert [case.correct for case in spider.cases] == [False, True]
    relaxed = evaluate_files(
        *write_files(tmp_path, gold[1:], ["SELECT singer_id, age, name FROM singer"]),
        db_dir,
        EvalOptions(mode="relaxed"),  # type: ignore[arg-type]
    )
    assert relaxed.execution_accuracy == 100.0


def test_spider_preprocessing_of_predictions(tmp_path: Path, db_dir: Path) -> None:
    gold = [("SELECT name FROM singer WHERE age >= 40", CS), ("SELECT count(*) FROM singer", CS)]
    pred = ["SELECT name FROM singer WHERE age > = 40", "SELECT count(*) FROM singer\tignored"]
    report = evaluate_files(*write_files(tmp_path, gold, pred), db_dir)
    assert report.execution_accuracy == 100.0


def test_remove_distinct_keeps_names_and_strings() -> None:
    sql = "SELECT DISTINCT count(DISTINCT a), \"distinct\", 'distinct' FROM t"
    assert remove_distinct(sql) == "SELECT  count( a), \"distinct\", 'distinct' FROM t"


def test_input_errors_name_the_file_and_problem(tmp_path: Path, db_dir: Path) -> None:
    gold_path, pred_path = write_files(tmp_path, GOLD, PRED[:-1])
    with pytest.raises(EvalInputError, match=r"pred\.sql: 4 predictions for 5 gold lines"):
        evaluate_files(gold_path, pred_path, db_dir)
    with pytest.raises(EvalInputError, match=r"missing\.sql: no such file"):
        evaluate_files(tmp_path / "missing.sql", pred_path, db_dir)
    gold_path.write_text("SELECT 1 without a db id\n", encoding="utf-8")
    pred_path.write_text("SELECT 1\n", encoding="utf-8")
    with pytest.raises(EvalInputError, match=r"gold\.sql:1: expected 'SQL<TAB>db_id'"):
        evaluate_files(gold_path, pred_path, db_dir)
    gold_path.write_text("SELECT 1\tno_such_db\n", encoding="utf-8")
    with pytest.raises(EvalInputError, match=r"gold\.sql:1: unknown db_id 'no_such_db'"):
        evaluate_files(gold_path, pred_path, db_dir)
    with pytest.raises(EvalInputError, match="no such database directory"):
        evaluate_files(gold_path, pred_path, tmp_path / "nowhere")


def test_missing_databases_can_be_skipped(tmp_path: Path, db_dir: Path) -> None:
    gold = [*GOLD[:1], ("SELECT 1", "no_such_db")]
    report = evaluate_files(
        *write_files(tmp_path, gold, [*PRED[:1], "SELECT 1"]),
        db_dir,
        EvalOptions(skip_missing_db=True),
    )
    assert (report.count, report.skipped_missing_db, report.execution_accuracy) == (1, 1, 100.0)


def test_options_are_validated() -> None:
    with pytest.raises(LimitsError, match="workers"):
        EvalOptions(workers=0)
    with pytest.raises(LimitsError, match="timeout_s"):
        EvalOptions(timeout_s=0)
    with pytest.raises(ValueError, match="nope"):
        EvalOptions(mode="nope")  # type: ignore[arg-type]


def test_eval_cli_prints_accuracy_and_writes_json(
    tmp_path: Path, db_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gold_path, pred_path = write_files(tmp_path, GOLD, PRED)
    out = tmp_path / "report.json"
    argv = ["sql", "eval", "--gold", str(gold_path), "--pred", str(pred_path)]
    assert main([*argv, "--db-dir", str(db_dir), "--json", str(out)]) == 0
    captured = capsys.readouterr()
    assert "all" in captured.out and "75.00" in captured.out
    assert "gold line 4" in captured.err
    assert json.loads(out.read_text())["execution_accuracy"] == 75.0
    assert main([*argv[:-1], str(tmp_path / "nope.sql"), "--db-dir", str(db_dir)]) == 2
    assert "nope.sql: no such file" in capsys.readouterr().err


# --- gold against gold on Spider dev ---------------------------------------------------------


@pytest.fixture(scope="module")
def dev_files(spider_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Spider dev as gold and as predictions, for the databases whose files are present."""
    dev = json.loads((spider_dir / "dev.json").read_text(encoding="utf-8"))
    present = [d for d in dev if (spider_dir / "database" / d["db_id"]).is_dir()]
    folder = tmp_path_factory.mktemp("dev")
    gold, pred = folder / "dev_gold.sql", folder / "dev_pred.sql"
    gold.write_text("".join(f"{d['query']}\t{d['db_id']}\n" for d in present), encoding="utf-8")
    pred.write_text("".join(f"{d['query']}\n" for d in present), encoding="utf-8")
    return gold, pred


@pytest.mark.spider
@pytest.mark.parametrize("mode", ["spider", "bird"])
def test_gold_against_gold_on_spider_dev_scores_100(
    dev_files: tuple[Path, Path], spider_dir: Path, mode: str
) -> None:
    report = evaluate_files(*dev_files, spider_dir / "database", EvalOptions(mode=mode))  # type: ignore[arg-type]
    assert report.gold_errors == 0
    assert report.count >= 900  # 19 of the 20 dev databases (wta_1 is missing)
    assert report.execution_accuracy == 100.0


@pytest.mark.spider
def test_gold_against_gold_with_the_eval_cli(
    dev_files: tuple[Path, Path], spider_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "report.json"
    gold, pred = dev_files
    argv = ["sql", "eval", "--gold", str(gold), "--pred", str(pred)]
    assert main([*argv, "--db-dir", str(spider_dir / "database"), "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["execution_accuracy"] == 100.0 and report["gold_errors"] == 0
    assert all(level["execution_accuracy"] == 100.0 for level in report["by_hardness"].values())
