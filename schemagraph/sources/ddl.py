"""`.sql` files of CREATE TABLE statements, parsed with sqlglot; one database per file.

Statements are split on the tokenizer's semicolons, so one statement that does not parse, or
that the parser only kept as an opaque command or a bare expression (`CREATE TABL x (...)`,
`HELLO WORLD`), is reported in `Catalog.problems` and skipped while the rest of the file loads.
Descriptions come from `COMMENT ON TABLE/COLUMN ... IS '...'` statements and from inline
comments where the dialect has them (MySQL and Snowflake `COMMENT '...'`, BigQuery
`OPTIONS(description='...')`); a comment on a table or column the file does not create is
reported. Other statements that are understood (indexes, inserts, grants, SET, sequences,
functions, extensions, ...) are ignored without a word: dumps are full of them.

In SQLite's dialect, a CREATE TABLE that SQLite accepts and sqlglot does not
(`description BLOB SUB_TYPE TEXT`) is read by SQLite itself in an in-memory database
(`sources.sqlite_ddl`); one whose names need quotes that the file lacks (`qty_sold(kg) REAL`) is
read with them quoted, and reported.

Each database records the dialect its file was parsed with (named or inferred), and a table
created under a qualified name (`CREATE TABLE sales.orders`) keeps it as its engine name.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.tokens import TokenType

from schemagraph.documentation import Described, clean, describe_database
from schemagraph.errors import CatalogError, SourceError
from schemagraph.model import Catalog, Column, Database, ForeignKey, Table, fold, validate_database
from schemagraph.sources.sqlite_ddl import SQLiteTable, is_create_table, read_create_table

log = logging.getLogger(__name__)

#: Dialects tried, in order, when none is named: the first that parses every statement wins.
INFER_ORDER = ("postgres", "mysql", "sqlite", "snowflake", "bigquery", "tsql", "duckdb")


def load_ddl(path: str | Path, dialect: str | None = None) -> Catalog:
    """Every `.sql` file in `path` (or the one file `path`), each file one database named after
    its stem. `dialect` is a sqlglot dialect name; None infers it per file."""
    path = Path(path)
    if not path.exists():
        raise SourceError(f"{path}: no such file or directory (ddl: expects a .sql file or folder)")
    files = sorted(path.rglob("*.sql")) if path.is_dir() else [path]
    if not files:
        raise SourceError(f"{path}: no .sql files found")
    if dialect is not None and dialect not in _known_dialects():
        raise SourceError(
            f"unknown SQL dialect {dialect!r}; use one of: {', '.join(sorted(_known_dialects()))}"
        )
    problems: list[str] = []
    databases = tuple(_load_file(f, dialect, problems) for f in files)
    return Catalog(databases, problems=tuple(problems))


def _known_dialects() -> set[str]:
    return {d.value for d in sqlglot.Dialects if d.value}


@dataclass
class _Parsed:
    dialect: str
    statements: list[tuple[int, exp.Expr | SQLiteTable]] = field(default_factory=list)
    failures: list[tuple[int, str]] = field(default_factory=list)


def _load_file(file: Path, dialect: str | None, problems: list[str]) -> Database:
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise SourceError(f"{file}: not UTF-8 text") from None
    candidates = [dialect] if dialect else list(INFER_ORDER)
    best: _Parsed | None = None
    for name in candidates:
        parsed = _parse(text, name, file)
        if best is None or len(parsed.failures) < len(best.failures):
            best = parsed
        if not parsed.failures:
            break
    assert best is not None
    for line, reason in best.failures:
        problems.append(f"{file}:{line}: statement skipped ({best.dialect}): {reason}")
    engine_names: dict[str, tuple[str, ...]] = {}
    tables, fks, comments = _collect(best.statements, best.dialect, file, problems, engine_names)
    if not tables:
        raise SourceError(
            f"{file}: no CREATE TABLE statement could be read"
            + (f" ({len(best.failures)} failed to parse)" if best.failures else "")
        )
    for src_table, fk, line in fks:
        if src_table in tables:
            name, columns, keys = tables[src_table]
            tables[src_table] = (name, columns, [*keys, fk])
        else:
            raise CatalogError(
                f"{file}:{line}: ALTER TABLE adds a key to unknown table {fk.table!r}"
            )
    primary = {
        key: tuple(c.name for c in cols if c.primary_key) for key, (_, cols, _) in tables.items()
    }
    db = Database(
        file.stem,
        tuple(
            Table(
                name,
                cols,
                tuple(_resolve_references(fk, primary) for fk in keys),
                engine_name=engine_names.get(fold(name), ()),
            )
            for name, cols, keys in tables.values()
        ),
        origin=str(file),
        dialect=best.dialect,
    )
    try:
        validate_database(db)
    except CatalogError as exc:
        raise CatalogError(f"{exc} (dialect {best.dialect})") from None
    return describe_database(db, _described(db, comments, file, problems))


def _described(
    db: Database, comments: list[_Comment], file: Path, problems: list[str]
) -> Described:
    described: Described = {}
    for line, table, column, text in comments:
        if not db.has_table(table) or (column and not db.table(table).has_column(column)):
            what = f"{table}.{column}" if column else table
            problems.append(f"{file}:{line}: comment on unknown {what!r} ignored")
            continue
        described[(fold(db.id), fold(table), fold(column))] = text
    return described


@contextmanager
def _quiet_sqlglot() -> Iterator[None]:
    """sqlglot logs a warning for each statement it cannot parse; we report those ourselves."""
    logger = logging.getLogger("sqlglot")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _parse(text: str, dialect: str, file: Path) -> _Parsed:
    """The statements of `text` in `dialect`, and those that could not be read. In SQLite's
    dialect, a CREATE TABLE that sqlglot cannot read is read by SQLite itself
    (`sources.sqlite_ddl`)."""
    parsed = _Parsed(dialect)
    for line, chunk in _split(text, dialect, file):
        try:
            with _quiet_sqlglot():
                expression = sqlglot.parse_one(chunk, read=dialect)
        except SqlglotError as exc:
            problem = str(exc).splitlines()[0][:200]
        else:
            understood = _not_understood(chunk, expression, dialect)
            if understood is None:
                parsed.statements.append((line, expression))
                continue
            problem = understood
        if dialect == "sqlite" and is_create_table(chunk):
            table = read_create_table(chunk)
            if isinstance(table, SQLiteTable):
                parsed.statements.append((line, table))
                continue
            problem = f"{problem}; {table}"
        parsed.failures.append((line, problem))
    return parsed


def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


#: The first word of statements that sqlglot keeps as an opaque `Command` (or misreads as an
#: expression: `UNLOCK TABLES`) in some dialect and that are real statements, irrelevant to the
#: schema (CREATE, ALTER, DROP and COMMENT ON: followed by one of COMMAND_KINDS).
COMMAND_VERBS = _word_set(
    "ABORT ALTER ANALYZE ATTACH BACKUP BEGIN CALL CHECKPOINT CLOSE CLUSTER COMMENT COMMIT COPY "
    "CREATE DEALLOCATE DECLARE DELIMITER DESC DESCRIBE DETACH DISCARD DO DROP END EXEC EXECUTE "
    "EXPLAIN FETCH FLUSH GET GO GRANT HANDLER IMPORT KILL LIST LISTEN LOAD LOCK MOVE MSCK "
    "NOTIFY OPEN OPTIMIZE PREPARE PRINT PURGE PUT REASSIGN REFRESH REINDEX RELEASE REMOVE "
    "RENAME REPAIR REPLACE RESET RESTORE REVOKE ROLLBACK SAVEPOINT SECURITY SET SHOW START "
    "TABLE TRUNCATE UNDROP UNLISTEN UNLOCK USE VACUUM VALUES"
)
COMMAND_KINDS = _word_set(
    "ACCESS AGGREGATE CAST CATALOG COLLATION COLUMN CONSTRAINT CONVERSION DATABASE DEFAULT "
    "DICTIONARY DIRECTORY DOMAIN EVENT EXTENSION EXTERNAL FILE FOREIGN FUNCTION GROUP INDEX "
    "INTEGRATION LANGUAGE LARGE LIBRARY LOGIN MACRO MASKING MATERIALIZED MODEL NETWORK "
    "NOTIFICATION OPERATOR PACKAGE PIPE POLICY PROCEDURE PUBLICATION RESOURCE ROLE ROUTINE ROW "
    "RULE SCHEMA SECRET SEQUENCE SERVER SESSION SHARE SNAPSHOT STAGE STATISTICS STREAM "
    "SUBSCRIPTION SYNONYM SYSTEM TABLE TABLESPACE TAG TASK TEXT TRANSFORM TRIGGER TYPE USER "
    "VIEW WAREHOUSE"
)
#: Words between CREATE, ALTER, DROP or COMMENT ON and the kind of object.
_MODIFIERS = _word_set(
    "ON OR REPLACE TEMP TEMPORARY GLOBAL LOCAL UNLOGGED IF NOT EXISTS UNIQUE SECURE TRANSIENT "
    "VOLATILE RECURSIVE TRUSTED PROCEDURAL CONCURRENTLY SQL SECURITY DEFINER INVOKER "
    "ALGORITHM UNDEFINED MERGE TEMPTABLE"
)
_WORD = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
#: MySQL's DEFINER=`user`@`host` between CREATE and the kind of object.
_DEFINER = re.compile(r"\bDEFINER\s*=\s*\S+", re.IGNORECASE)


def _not_understood(chunk: str, expression: exp.Expr, dialect: str) -> str | None:
    """Why a statement that parsed is not understood, or None when it is (read, or known and
    irrelevant). sqlglot's fallback for what it cannot read is an opaque `Command`
    (`CREATE TABL x (...)` is a CREATE command) or, for words that start no statement, an
    expression (`HELLO WORLD` is a column alias): a table, a key or a description may be
    lost there, so the statement is reported."""
    first = _WORD.match(chunk)  # a chunk starts at its first token
    verb = first.group(0).upper() if first else ""
    dialect_class = sqlglot.Dialect.get_or_raise(dialect)
    if isinstance(expression, exp.Command):
        if verb not in COMMAND_VERBS:
            return f"{verb or 'statement'}: not a statement the parser knows"
        if verb in ("CREATE", "ALTER", "DROP", "COMMENT"):
            tokens = dialect_class.tokenize(_DEFINER.sub(" ", chunk))
            words = [t.text.upper() for t in tokens[1:12]]
            kind = next((w for w in words if w not in _MODIFIERS), "")
            if kind not in COMMAND_KINDS:
                return f"{verb} {kind}".strip() + ": not a kind of object the parser knows"
            if verb != "DROP" and kind in ("TABLE", "COLUMN"):
                return "not understood by the parser"
        return None
    if isinstance(expression, exp.Query) or verb in COMMAND_VERBS:
        return None
    token = dialect_class.tokenizer_class.KEYWORDS.get(verb)
    if (
        token in dialect_class.parser_class.STATEMENT_PARSERS
        or token in dialect_class.tokenizer_class.COMMANDS
    ):
        return None
    return f"{verb or 'statement'}: not a SQL statement"


def _split(text: str, dialect: str, file: Path) -> list[tuple[int, str]]:
    """Statements with their first line number, split on semicolon tokens (not inside strings
    or comments)."""
    try:
        tokens = sqlglot.Dialect.get_or_raise(dialect).tokenize(text)
    except SqlglotError as exc:
        raise SourceError(f"{file}: cannot be tokenized as {dialect} SQL: {exc}") from None
    chunks: list[tuple[int, str]] = []
    start = 0
    first_line = None
    for token in tokens:
        if token.token_type == TokenType.SEMICOLON:
            if first_line is not None:
                chunks.append((first_line, text[start : token.start]))
            start, first_line = token.end + 1, None
        elif first_line is None:
            start, first_line = token.start, token.line
    if first_line is not None:
        chunks.append((first_line, text[start:]))
    return chunks


_Tables = dict[str, tuple[str, tuple[Column, ...], list[ForeignKey]]]
#: (line, table, column or "", text) of a comment
_Comment = tuple[int, str, str, str]


def _collect(
    statements: list[tuple[int, exp.Expr | SQLiteTable]],
    dialect: str,
    file: Path,
    problems: list[str],
    engine_names: dict[str, tuple[str, ...]],
) -> tuple[_Tables, list[tuple[str, ForeignKey, int]], list[_Comment]]:
    """The tables, keys added by ALTER TABLE and comments of the statements; the qualified
    names of tables created as `schema.table` go to `engine_names`, by folded name."""
    tables: _Tables = {}
    altered: list[tuple[str, ForeignKey, int]] = []
    comments: list[_Comment] = []
    for line, statement in statements:
        if isinstance(statement, SQLiteTable):
            name = statement.name
            if fold(name) in tables:
                raise CatalogError(f"{file}:{line}: table {name!r} is created twice")
            tables[fold(name)] = (name, statement.columns, list(statement.foreign_keys))
            if statement.quoted:
                names = ", ".join(statement.quoted[:5]) + (
                    f" and {len(statement.quoted) - 5} more" if len(statement.quoted) > 5 else ""
                )
                problems.append(
                    f"{file}:{line}: CREATE TABLE {name} is not valid SQL as written (the names "
                    f"{names} need quotes); read with them quoted"
                )
        elif isinstance(statement, exp.Create) and statement.kind == "TABLE":
            schema = statement.this
            if not isinstance(schema, exp.Schema):
                problems.append(f"{file}:{line}: CREATE TABLE without columns (AS SELECT?) skipped")
                continue
            name = schema.this.name
            if fold(name) in tables:
                raise CatalogError(f"{file}:{line}: table {name!r} is created twice")
            tables[fold(name)] = (name, *_table_parts(schema, name, dialect))
            if schema.this.args.get("db"):
                engine_names[fold(name)] = tuple(p.name for p in schema.this.parts)
            text = _comment_of(statement.args.get("properties"))
            comments += [(line, name, "", text)] if text else []
            comments += [
                (line, name, col.name, text)
                for col in schema.expressions
                if isinstance(col, exp.ColumnDef) and (text := _column_comment(col))
            ]
        elif isinstance(statement, exp.Comment) and statement.args.get("kind") in (
            "TABLE",
            "COLUMN",
        ):
            target, text = statement.this, clean(statement.expression.name)
            if isinstance(target, exp.Column):
                comments.append((line, target.table, target.name, text))
            elif isinstance(target, exp.Table):
                comments.append((line, target.name, "", text))
        elif isinstance(statement, exp.Alter) and statement.args.get("kind") == "TABLE":
            name = statement.this.name
            for fk_node in statement.find_all(exp.ForeignKey):
                fk = _foreign_key(fk_node, name)
                if fk is not None:
                    altered.append((fold(name), fk, line))
    return tables, altered, comments


def _comment_of(node: exp.Expr | None) -> str:
    """The text of a COMMENT property (MySQL, Snowflake) or a description option (BigQuery)."""
    if node is None:
        return ""
    for prop in node.find_all(exp.SchemaCommentProperty, exp.Property):
        if isinstance(prop, exp.SchemaCommentProperty):
            return clean(prop.this.name)
        if prop.name.lower() == "description":
            return clean(prop.args["value"].name)
    return ""


def _column_comment(col: exp.ColumnDef) -> str:
    for constraint in col.args.get("constraints") or []:
        kind = constraint.args.get("kind")
        if isinstance(kind, exp.CommentColumnConstraint):
            return clean(kind.this.name)
        if isinstance(kind, exp.Properties) and (text := _comment_of(kind)):
            return text
    return ""


def _table_parts(
    schema: exp.Schema, name: str, dialect: str
) -> tuple[tuple[Column, ...], list[ForeignKey]]:
    # a column without a type (SQLite's `name ,`) is an Identifier, not a ColumnDef
    defs = [e for e in schema.expressions if isinstance(e, exp.ColumnDef | exp.Identifier)]
    table_pk = {
        fold(col.name)
        for pk in schema.find_all(exp.PrimaryKey)
        for col in pk.expressions
        if isinstance(col, exp.Identifier | exp.Column | exp.Ordered)
    }
    columns = []
    fks: list[ForeignKey] = []
    for col in defs:
        if isinstance(col, exp.Identifier):
            columns.append(Column(col.name, "", fold(col.name) in table_pk))
            continue
        inline_pk = any(
            isinstance(c.args.get("kind"), exp.PrimaryKeyColumnConstraint)
            for c in col.args.get("constraints") or []
        )
        kind = col.args.get("kind")
        columns.append(
            Column(
                col.name,
                kind.sql(dialect=dialect) if kind else "",
                inline_pk or fold(col.name) in table_pk,
            )
        )
        for constraint in col.args.get("constraints") or []:
            ref = constraint.args.get("kind")
            if isinstance(ref, exp.Reference):
                ref_table, ref_cols = _reference(ref)
                fks.append(ForeignKey(name, (col.name,), ref_table, ref_cols))
    for fk_node in schema.find_all(exp.ForeignKey):
        fk = _foreign_key(fk_node, name)
        if fk is not None:
            fks.append(fk)
    return tuple(columns), fks


def _foreign_key(node: exp.ForeignKey, table: str) -> ForeignKey | None:
    ref = node.args.get("reference")
    if not isinstance(ref, exp.Reference):
        return None
    ref_table, ref_cols = _reference(ref)
    return ForeignKey(table, tuple(e.name for e in node.expressions), ref_table, ref_cols)


def _reference(ref: exp.Reference) -> tuple[str, tuple[str, ...]]:
    target = ref.this
    if isinstance(target, exp.Schema):
        return target.this.name, tuple(e.name for e in target.expressions)
    return target.name, ()


def _resolve_references(fk: ForeignKey, primary: dict[str, tuple[str, ...]]) -> ForeignKey:
    """`REFERENCES t` without columns means t's primary key."""
    if fk.ref_columns:
        return fk
    return ForeignKey(fk.table, fk.columns, fk.ref_table, primary.get(fold(fk.ref_table), ()))
