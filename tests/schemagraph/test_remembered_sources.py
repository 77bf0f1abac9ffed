"""What a store remembers of a source spec (`schemagraph.sources.remembered`): paths made
absolute, a URL never with its password or a secret query value, whatever the password holds."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy.engine import make_url

from schemagraph.sources import load_catalog
from schemagraph.sources.remembered import moved_source, remembered_spec, source_records

#: what the remembered URL keeps: a secret that is a part of it ("post") cannot be told apart
KEPT = "postgresql+psycopg://reader@db.internal:5432/warehouse?sslmode=require"
#: passwords as people write them into URLs: raw (SQLAlchemy reads up to the first @) or
#: percent-encoded
PASSWORDS = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="@"),
    min_size=4,
    max_size=30,
).filter(
    lambda p: (
        p.strip() == p
        and "reader" not in p
        and "db.internal" not in p
        and p not in KEPT
        and quote(p, safe="") not in KEPT
    )
)


@given(password=PASSWORDS, encoded=st.booleans(), secret=PASSWORDS)
def test_a_url_is_remembered_without_its_password_or_secret_values(
    password: str, encoded: bool, secret: str
) -> None:
    written = quote(password, safe="") if encoded else password
    url = (
        f"postgresql+psycopg://reader:{written}@db.internal:5432/warehouse"
        f"?sslmode=require&private_key_passphrase={quote(secret, safe='')}"
    )
    kept = remembered_spec(url)
    assert kept == KEPT
    assert written not in kept and quote(secret, safe="") not in kept
    parsed = make_url(kept)
    assert parsed.password is None and parsed.username == "reader"
    assert (parsed.host, parsed.port, parsed.database) == ("db.internal", 5432, "warehouse")
    assert dict(parsed.query) == {"sslmode": "require"}


@pytest.mark.parametrize(
    ("spec", "kept"),
    [
        ("spider:data/spider", "spider:{cwd}/data/spider"),
        ("ddl[postgres]:schema.sql", "ddl[postgres]:{cwd}/schema.sql"),
        ("infoschema[schema]:exports/", "infoschema[schema]:{cwd}/exports"),
        ("docs:../notes.yaml", "docs:{parent}/notes.yaml"),
        ("sqlite:/abs/dbs", "sqlite:/abs/dbs"),
        ("duckdb:///shop.duckdb", "duckdb:///{cwd}/shop.duckdb"),
        ("sqlite:////abs/x.db", "sqlite:////abs/x.db"),
        ("sqlite:///:memory:", "sqlite:///:memory:"),
        ("postgresql://reader@db/warehouse", "postgresql://reader@db/warehouse"),
        ("postgresql://:secret@db/warehouse", "postgresql://db/warehouse"),
        ("env:WAREHOUSE_URL", "env:WAREHOUSE_URL"),
    ],
)
def test_paths_are_made_absolute(spec: str, kept: str) -> None:
    cwd = os.getcwd()
    assert remembered_spec(spec) == kept.format(cwd=cwd, parent=os.path.dirname(cwd))


def test_records_name_the_kind_and_the_schemas_of_url_sources() -> None:
    records = source_records(
        ["spider:x", "postgresql+psycopg://r:pw@h/db", "env:WH"], schemas=["sales_*"]
    )
    assert [r["kind"] for r in records] == ["spider", "postgresql", "env"]
    assert "schemas" not in records[0]
    assert records[1] == {
        "kind": "postgresql",
        "spec": "postgresql+psycopg://r@h/db",
        "schemas": ["sales_*"],
        "exclude": [],
    }


def test_a_remembered_spec_loads_the_same_catalog_and_says_when_it_moved(
    sample_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(sample_dir.parent)
    spec = remembered_spec(f"spider:{sample_dir.name}")
    monkeypatch.chdir(tmp_path)
    assert moved_source(spec) is None
    original = load_catalog([f"spider:{sample_dir}"])
    assert [db.id for db in load_catalog([spec])] == [db.id for db in original]
    gone = remembered_spec("spider:gone")
    assert moved_source(gone) == tmp_path / "gone"
    assert moved_source("postgresql://reader@db/warehouse") is None
    assert moved_source("env:WH") is None
