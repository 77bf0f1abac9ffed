"""`evaluation.estates`: the seeded enterprise-like estate generator of the scale benchmark."""

from __future__ import annotations

import json
import re
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluation.estates import ABBREVIATIONS, EstateSpec, generate_estate
from schemagraph import load_spider
from schemagraph.errors import SourceError

NONE = {"wide_share": 0.0, "abbreviate": 0.0, "prefixed": 0.0, "sharded": 0.0}
NO_COPIES = {"tenant_share": 0.0, "staging_share": 0.0}


def _dump(folder: Path) -> dict[str, list[str]]:
    """Every SQLite file's full content, by database id."""
    dumps = {}
    for file in sorted((folder / "database").glob("*/*.sqlite")):
        con = sqlite3.connect(file)
        dumps[file.stem] = list(con.iterdump())
        con.close()
    return dumps


def _names(folder: Path) -> list[str]:
    entries = json.loads((folder / "tables.json").read_text())
    return [n for e in entries for n in e["table_names_original"]] + [
        c for e in entries for _, c in e["column_names_original"][1:]
    ]


def test_the_same_spec_writes_the_same_estate_and_another_seed_another(tmp_path: Path) -> None:
    spec = EstateSpec(12, seed=7, tenant_share=0.2, staging_share=0.2, sharded=0.3, rows=3)
    a, b, c = (tmp_path / n for n in "abc")
    generate_estate(spec, a)
    generate_estate(spec, b)
    generate_estate(EstateSpec(12, seed=8, rows=3), c)
    assert (a / "tables.json").read_bytes() == (b / "tables.json").read_bytes()
    assert _dump(a) == _dump(b)
    assert (a / "tables.json").read_bytes() != (c / "tables.json").read_bytes()


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.integers(1, 25), st.integers(0, 10_000))
def test_any_estate_has_exactly_n_valid_databases_with_rows(
    tmp_path_factory: pytest.TempPathFactory, n: int, seed: int
) -> None:
    folder = tmp_path_factory.mktemp("estate")
    spec = EstateSpec(n, seed=seed, tenant_share=0.3, staging_share=0.3, sharded=0.3, rows=2)
    summary = generate_estate(spec, folder)
    catalog = load_spider(folder)  # validates every table, column and foreign key
    assert summary.databases == len(catalog.databases) == n and not catalog.problems
    assert summary.tables == sum(len(db.tables) for db in catalog.databases)
    for db in catalog.databases:
        assert db.path is not None
        con = sqlite3.connect(db.path)
        for table in db.tables:
            assert con.execute(f'SELECT count(*) FROM "{table.name}"').fetchone() == (2,)
        con.close()


def test_wide_share_decides_how_many_tables_are_wide(tmp_path: Path) -> None:
    narrow = generate_estate(EstateSpec(20, **NONE, **NO_COPIES), tmp_path / "narrow")
    wide = generate_estate(
        EstateSpec(20, **{**NONE, "wide_share": 1.0}, **NO_COPIES, wide_columns=(150, 200)),
        tmp_path / "wide",
    )
    assert narrow.wide_tables == 0 and narrow.columns < 10 * narrow.tables
    assert wide.wide_tables == wide.tables
    for db in load_spider(tmp_path / "wide").databases:
        assert all(150 <= len(t.columns) <= 200 for t in db.tables)


def test_abbreviate_writes_names_the_way_warehouses_shorten_them(tmp_path: Path) -> None:
    generate_estate(EstateSpec(30, **NONE, **NO_COPIES), tmp_path / "plain")
    generate_estate(EstateSpec(30, **{**NONE, "abbreviate": 1.0}, **NO_COPIES), tmp_path / "abbr")
    words = {w for name in _names(tmp_path / "plain") for w in name.split("_")}
    short = {w for name in _names(tmp_path / "abbr") for w in name.split("_")}
    assert words & set(ABBREVIATIONS) and not short & set(ABBREVIATIONS)
    assert short & set(ABBREVIATIONS.values()) and not words & {"cust", "acct", "txn", "qty"}


def test_sharded_databases_hold_a_family_of_consecutive_days_with_one_schema(
    tmp_path: Path,
) -> None:
    spec = EstateSpec(10, **{**NONE, "sharded": 1.0}, **NO_COPIES, shards=(3, 9))
    summary = generate_estate(spec, tmp_path)
    assert len(summary.families) == 10
    by_id = {db.id: db for db in load_spider(tmp_path).databases}
    for key, members in summary.families.items():
        db = by_id[key.split(".")[0]]
        assert 3 <= len(members) <= 9
        days = [datetime.strptime(m.rpartition("_")[2], "%Y%m%d") for m in members]
        assert days == [days[0] + timedelta(days=i) for i in range(len(days))]
        schemas = {tuple(c.name for c in db.table(m).columns) for m in members}
        assert len(schemas) == 1
    assert not generate_estate(EstateSpec(10, **NONE, **NO_COPIES), tmp_path / "flat").families


def test_tenant_copies_share_a_schema_and_differ_by_their_values(tmp_path: Path) -> None:
    summary = generate_estate(EstateSpec(9, tenant_share=1.0, rows=4), tmp_path)
    assert summary.tenant_groups and sum(map(len, summary.tenant_groups)) == 9
    by_id = {db.id: db for db in load_spider(tmp_path).databases}
    for group in summary.tenant_groups:
        assert 2 <= len(group) <= 4
        assert all(re.search(r"_(eu|us|apac|latam)$", member) for member in group)
        shapes = {
            tuple((t.name, tuple(c.name for c in t.columns)) for t in by_id[m].tables)
            for m in group
        }
        assert len(shapes) == 1
        values = [set(_dump(tmp_path)[m]) for m in group]
        assert values[0] != values[1]


def test_staging_copies_differ_by_one_audit_column(tmp_path: Path) -> None:
    summary = generate_estate(EstateSpec(6, staging_share=1.0, tenant_share=0.0), tmp_path)
    assert len(summary.staging_pairs) == 3
    by_id = {db.id: db for db in load_spider(tmp_path).databases}
    for original, copy in summary.staging_pairs:
        assert copy.startswith(original) and copy.rsplit("_", 1)[1] in ("staging", "archive")
        a = {(t.name, c.name) for t in by_id[original].tables for c in t.columns}
        b = {(t.name, c.name) for t in by_id[copy].tables for c in t.columns}
        assert b - a == {(by_id[copy].tables[0].name, "loaded_at")} and not a - b


@pytest.mark.parametrize(
    ("knobs", "message"),
    [
        ({"databases": 0}, "at least one database"),
        ({"databases": 5, "wide_share": 1.5}, "wide_share is a share"),
        ({"databases": 5, "shards": (9, 3)}, "shards must be a range"),
    ],
)
def test_bad_knobs_are_named(knobs: dict[str, object], message: str) -> None:
    with pytest.raises(SourceError, match=message):
        EstateSpec(**knobs)  # type: ignore[arg-type]
