"""The value index holds every distinct value the sample reads, not a first few."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from retriever.lexical import SchemaLinker
from retriever.tables import entries_from_catalog
from schemagraph import load_catalog

COUNTRIES = [f"Country{n:02d}land" for n in range(45)]


def _world(tmp_path: Path) -> Path:
    path = tmp_path / "world.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE country (code INTEGER PRIMARY KEY, name TEXT)")
        conn.executemany("INSERT INTO country (name) VALUES (?)", [(c,) for c in COUNTRIES])
        conn.execute("CREATE TABLE pet (id INTEGER PRIMARY KEY, kind TEXT)")
        conn.executemany("INSERT INTO pet (kind) VALUES (?)", [("dog",), ("cat",)])
    return path


def test_a_value_late_in_a_long_column_links_its_table(tmp_path: Path) -> None:
    catalog = load_catalog([f"sqlite:{_world(tmp_path)}"])
    entries = entries_from_catalog(catalog)
    country = next(e for e in entries if e.table == "country")
    assert sorted(country.values["name"]) == COUNTRIES
    links = SchemaLinker(entries).link("What is the population of Country44land?")
    linked = {entries[m.entry].table for m in links.value_matches}
    assert linked == {"country"}
