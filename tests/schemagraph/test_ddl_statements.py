"""DDL source: a statement the parser does not understand is a problem to report, whatever its
fallback made of it; statements it understands and that say nothing of the schema are quiet."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import sqlglot
from hypothesis import given, settings
from hypothesis import strategies as st

from schemagraph import load_ddl
from schemagraph.sources.ddl import _MODIFIERS, COMMAND_KINDS, COMMAND_VERBS

#: Understood, irrelevant to the schema: what pg_dump, mysqldump and hand-written files hold.
IRRELEVANT = (
    "SET statement_timeout = 0",
    "SELECT pg_catalog.set_config('search_path', '', false)",
    "CREATE EXTENSION IF NOT EXISTS pgcrypto",
    "COMMENT ON EXTENSION pgcrypto IS 'cryptographic functions'",
    "CREATE SEQUENCE seq START 1",
    "ALTER SEQUENCE seq OWNED BY parent.id",
    "CREATE INDEX parent_name ON parent (name)",
    "CREATE UNIQUE INDEX parent_id ON parent (id)",
    "INSERT INTO parent VALUES (1, 'a')",
    "GRANT SELECT ON parent TO reader",
    "REVOKE ALL ON parent FROM PUBLIC",
    "CREATE VIEW names AS SELECT name FROM parent",
    "CREATE FUNCTION one() RETURNS int AS $$ SELECT 1 $$ LANGUAGE sql",
    "CREATE TYPE mood AS ENUM ('sad', 'happy')",
    "CREATE DOMAIN positive AS int CHECK (VALUE > 0)",
    "CREATE ROLE reader",
    "CREATE POLICY own ON parent USING (true)",
    "CREATE STATISTICS st ON id, name FROM parent",
    "ALTER DEFAULT PRIVILEGES GRANT SELECT ON TABLES TO reader",
    "DROP TABLE IF EXISTS old_parent",
    "BEGIN",
    "START TRANSACTION",
    "COMMIT",
    "LOCK TABLES parent WRITE",
    "UNLOCK TABLES",
    "VACUUM",
    "ANALYZE parent",
    "SHOW TABLES",
    "/* a comment */ SELECT 1",
)

TABLES = (
    "CREATE TABLE parent (id INT PRIMARY KEY, name TEXT)",
    "CREATE TABLE child (id INT PRIMARY KEY, parent_id INT REFERENCES parent(id))",
)


def _load(tmp_path: Path, statements: list[str], name: str = "db") -> tuple[list[str], list[str]]:
    file = tmp_path / f"{name}.sql"
    file.write_text("".join(f"{s};\n" for s in statements))
    catalog = load_ddl(file, "postgres")
    return [t.name for t in catalog.database(name).tables], list(catalog.problems)


@pytest.mark.parametrize(
    ("statement", "words"),
    [
        ("CREATE TABL oops (x int)", "CREATE TABL: not a kind of object"),
        ("CREATE OR REPLACE TABEL oops (x int)", "CREATE TABEL: not a kind of object"),
        ("CREATE TEMPORARY TABL oops (x int)", "CREATE TABL: not a kind of object"),
        ("ALTER TABEL child ADD note TEXT", "ALTER TABEL: not a kind of object"),
        ("CREAT TABLE oops (x int)", "statement skipped"),
        ("HELLO WORLD", "HELLO: not a SQL statement"),
        ("oops", "OOPS: not a SQL statement"),
        ("FROBNICATE TABLE oops", "statement skipped"),
    ],
)
def test_a_statement_not_understood_is_reported_with_its_line(
    tmp_path: Path, statement: str, words: str
) -> None:
    tables, problems = _load(tmp_path, [TABLES[0], statement, TABLES[1]])
    assert tables == ["parent", "child"]
    assert len(problems) == 1, problems
    assert "db.sql:2: statement skipped (postgres)" in problems[0] and words in problems[0]


@pytest.mark.parametrize("statement", IRRELEVANT)
def test_a_statement_understood_and_irrelevant_is_quiet(tmp_path: Path, statement: str) -> None:
    tables, problems = _load(tmp_path, [*TABLES, statement])
    assert (tables, problems) == (["parent", "child"], [])


def test_catalog_show_counts_the_statement_not_understood(tmp_path: Path) -> None:
    file = tmp_path / "db.sql"
    file.write_text("CREATE TABLE ok (id INT);\nCREATE TABL oops (x int);\n")
    result = subprocess.run(
        [sys.executable, "-m", "schemarag", "catalog", "show", f"ddl:{file}"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "db.sql:2: statement skipped" in result.stderr and "CREATE TABL" in result.stderr
    assert "1 problem reported" in result.stdout


_KEYWORDS = set(sqlglot.Dialect.get_or_raise("postgres").tokenizer_class.KEYWORDS)
_KNOWN = COMMAND_VERBS | COMMAND_KINDS | _MODIFIERS | _KEYWORDS
junk_word = st.from_regex(r"[a-z]{3,9}", fullmatch=True).filter(lambda w: w.upper() not in _KNOWN)
junk = st.one_of(
    junk_word.map(lambda w: f"CREATE {w} oops (x int)"),
    junk_word.map(lambda w: f"CREATE OR REPLACE {w} oops (x int)"),
    junk_word.map(lambda w: f"ALTER {w} child ADD note TEXT"),
    junk_word.map(lambda w: f"{w} oops"),
    junk_word.map(lambda w: f"{w} TABLE oops (x int)"),
)


@given(
    st.lists(
        st.one_of(
            st.sampled_from(IRRELEVANT).map(lambda s: (s, False)), junk.map(lambda s: (s, True))
        ),
        max_size=8,
    )
)
@settings(max_examples=60, deadline=None)
def test_every_statement_not_understood_is_reported_and_nothing_else(
    tmp_path_factory: pytest.TempPathFactory, others: list[tuple[str, bool]]
) -> None:
    statements = [(s, False) for s in TABLES] + others
    tables, problems = _load(tmp_path_factory.mktemp("ddl"), [s for s, _ in statements])
    assert tables == ["parent", "child"]
    lines = [line for line, (_, bad) in enumerate(statements, 1) if bad]
    assert [p.split(":")[1] for p in problems] == [str(line) for line in lines], problems
