"""`schemarag sql check`: one line per problem, exit 0 accepted, 1 rejected, 2 bad input."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from schemarag.cli import main

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "check"
SOURCES = [
    "--source",
    f"infoschema:{FIXTURES}/bigquery",
    "--source",
    f"infoschema:{FIXTURES}/snowflake",
]
GA = "`shop-analytics.web.ga_sessions_*`"


def test_accepted_exits_0_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    sql = f"SELECT h.page.pagePath FROM {GA}, UNNEST(hits) AS h WHERE _TABLE_SUFFIX > '0801'"
    assert main(["sql", "check", "--db", "shop-analytics", *SOURCES, sql]) == 0
    assert capsys.readouterr().out == "ok: the query reads 1 table of shop-analytics\n"


def test_rejected_exits_1_with_a_line_per_problem(capsys: pytest.CaptureFixture[str]) -> None:
    sql = f"SELECT productRevenue, totals.pagevews FROM {GA}"
    assert main(["sql", "check", "--db", "shop-analytics", *SOURCES, sql]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "unknown_column: no column `productRevenue` in `ga_sessions_*`; nearest: "
        "`hits.product.productRevenue` through `UNNEST(hits)` then `UNNEST(hits.product)`",
        "unknown_column: no column `totals.pagevews` in `ga_sessions_*`; nearest: "
        "`totals.pageviews`",
    ]


def test_json_and_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        "sys.stdin", io.StringIO("SELECT publication_number FROM PATENTS.PUBLICATIONS")
    )
    assert main(["sql", "check", "--db", "PATENTS_DEMO", *SOURCES, "--json", "-"]) == 1
    payload = json.loads(capsys.readouterr().out)
    assert (payload["ok"], payload["dialect"], payload["tables"]) == (
        False,
        "snowflake",
        ["PUBLICATIONS"],
    )
    [problem] = payload["problems"]
    assert problem["kind"] == "unknown_column"
    assert problem["suggestions"] == ['`"publication_number"`']


def test_writes_are_rejected_on_the_bundled_sample(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sql", "check", "--db", "concert_singer", "DROP TABLE singer"]) == 1
    assert capsys.readouterr().out.startswith("refused: ")
    assert main(["sql", "check", "--db", "concert_singer", "SELECT Name FROM singer"]) == 0


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--db", "nowhere", "SELECT 1"], "unknown database 'nowhere'"),
        (["--db", "concert_singer", "  "], "the SQL is empty"),
        (["--db", "x", "--source", "infoschema:/no/such/folder", "SELECT 1"], "/no/such/folder"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sql", "check", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
