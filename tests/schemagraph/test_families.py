"""`schemagraph.families`: tables sharded by date or number, found as one logical table."""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from generator.prompt import build_prompt
from schemagraph.families import MIN_MEMBERS, collapse_families, find_families
from schemagraph.model import Catalog, Column, Database, ForeignKey, Table
from schemarag.cli import main

EVENT = ("event_id", "event_time", "user_id", "page")


def _db(tables: dict[str, tuple[str, ...]]) -> Database:
    return Database(
        "warehouse",
        tuple(Table(name, tuple(Column(c, "text") for c in cols)) for name, cols in tables.items()),
    )


@given(
    st.dates(date(2000, 1, 1), date(2030, 1, 1)),
    st.integers(MIN_MEMBERS, 60),
    st.sampled_from(["events", "ga_sessions", "Clicks", "log2"]),
)
def test_daily_shards_are_one_family_with_their_range(start: date, days: int, stem: str) -> None:
    names = [f"{stem}_{start + timedelta(days=d):%Y%m%d}" for d in range(days)]
    tables = {n: EVENT for n in reversed(names)} | {"users": ("user_id", "name")}
    (family,) = find_families(_db(tables))
    assert family.pattern == f"{stem}_YYYYMMDD" and family.kind == "date"
    assert family.members == tuple(names)  # oldest first
    assert family.as_dict()["range"] == [names[0][-8:], names[-1][-8:]]


@pytest.mark.parametrize(
    ("names", "pattern"),
    [
        (["sales_2023_01", "sales_2023_02", "sales_2023_03"], "sales_YYYY_MM"),
        (["sales_202301", "sales_202302", "sales_202303"], "sales_YYYYMM"),
        (["t_2023_01_01", "t_2023_01_02", "t_2023_01_03"], "t_YYYY_MM_DD"),
        (["part1", "part2", "part10"], "partN"),
    ],
)
def test_each_suffix_shape_is_named(names: list[str], pattern: str) -> None:
    (family,) = find_families(_db({n: EVENT for n in names}))
    assert family.pattern == pattern and family.last == names[-1]


def test_too_few_shards_or_other_columns_make_no_family() -> None:
    assert find_families(_db({"document_1": EVENT, "document_2": EVENT})) == []
    other = ("a", "b", "c", "d", "e")
    tables = {"events_20240101": EVENT, "events_20240102": other, "events_20240103": other}
    assert find_families(_db(tables)) == []  # only one shard has the newest one's columns


def test_a_shard_that_gained_a_column_stays_in_its_family() -> None:
    wider = (*EVENT, "referrer")
    tables = {f"events_2024010{d}": EVENT for d in range(1, 5)} | {"events_20240105": wider}
    (family,) = find_families(_db(tables))
    assert len(family.members) == 5


def test_a_build_records_families_and_index_status_shows_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCHEMARAG_CACHE", str(tmp_path / "cache.sqlite"))
    columns = [[-1, "*"]] + [[t, c] for t in range(4) for c in EVENT]
    names = ["events_20240101", "events_20240102", "events_20240103", "users"]
    entry = {
        "db_id": "web",
        "table_names_original": names,
        "table_names": names,
        "column_names_original": columns,
        "column_names": columns,
        "column_types": ["text"] * len(columns),
        "primary_keys": [],
        "foreign_keys": [],
    }
    (tmp_path / "tables.json").write_text(json.dumps([entry]))
    store = str(tmp_path / "store")
    argv = ["index", "build", f"spider:{tmp_path}", "--store", store, "--embedder", "hashing:64"]
    assert main([*argv, "--no-cache", "--chains", "1"]) == 0
    capsys.readouterr()
    assert main(["index", "status", "--store", store]) == 0
    out = capsys.readouterr().out
    assert "family       web.events_YYYYMMDD (3 tables, 20240101 to 20240103)" in out
    assert main(["index", "status", "--store", store, "--json"]) == 0
    (family,) = json.loads(capsys.readouterr().out)["families"]
    assert family["first"] == "events_20240101" and family["last"] == "events_20240103"
    # indexed and ranked once, as its newest member, which the result says stands for all
    question = "Which pages did users visit?"
    assert main(["retrieve", question, "--store", store, "--embedder", "hashing:64"]) == 0
    out = capsys.readouterr().out
    assert "events_20240103" in out and "events_20240101" not in out
    assert "family events_YYYYMMDD: 3 tables, 20240101 to 20240103; this is the newest" in out


def test_collapse_keeps_the_newest_member_and_moves_foreign_keys_to_it() -> None:
    shard = lambda name: Table(  # noqa: E731
        name,
        tuple(Column(c, "text") for c in EVENT),
        (ForeignKey(name, ("user_id",), "users", ("user_id",)),),
    )
    sessions = Table(
        "sessions",
        (Column("id"), Column("event_id")),
        tuple(
            ForeignKey("sessions", ("event_id",), f"events_2024010{d}", ("event_id",))
            for d in (1, 2, 3)
        ),
    )
    users = Table("users", (Column("user_id"), Column("name")))
    db = Database("web", (users, sessions, *(shard(f"events_2024010{d}") for d in (1, 2, 3))))
    other = _db({"a": ("x",)})
    collapsed = collapse_families(Catalog((db, other), problems=("kept",)))
    web = collapsed.database("web")
    assert [t.name for t in web.tables] == ["users", "sessions", "events_20240103"]
    assert web.table("sessions").foreign_keys == (
        ForeignKey("sessions", ("event_id",), "events_20240103", ("event_id",)),
    )
    assert collapsed.database("warehouse") == other and collapsed.problems == ("kept",)


def test_the_generation_prompt_shows_a_family_once_and_says_how_to_query_its_shards() -> None:
    tables = {f"events_2024010{d}": EVENT for d in (1, 2, 3)} | {"users": ("user_id", "name")}
    prompt = build_prompt("Which pages were visited on January 2?", _db(tables))
    assert prompt.tables == ("events_20240103", "users")
    assert "CREATE TABLE events_20240103" in prompt.user
    assert "CREATE TABLE events_20240101" not in prompt.user
    assert (
        "events_20240103 is the newest of 3 tables events_YYYYMMDD "
        "(events_20240101 to events_20240103)" in prompt.user
    )
    plain = build_prompt("How many users?", _db(tables), tables=["users"])
    assert "Sharded tables" not in plain.user
