"""`check_sql`: SQL verified against the catalog without running it.

    result = check_sql(db, "SELECT h.page.pagePath FROM `p.ds.ga_sessions_*`, UNNEST(hits) AS h")
    result.ok, result.problems  # each problem names the wrong name and the nearest real ones

The SQL is parsed in the database's dialect (`schemagraph.dialects.dialect_of`) and must pass
the guard that `run_sql` uses (`schemagraph.sql.guard`: one read-only query). A BigQuery script
whose leading statements are `DECLARE`s is read as its last statement, the declared names being
variables. Nothing runs: a schema-only catalog is enough.

Every table is resolved against the database's tables: qualified as the engine names it
(`Table.engine_name`: `` `project.dataset.table` ``, `DB.SCHEMA.TABLE`, matched
case-insensitively), by any trailing part of that name, by the whole name with another first
part (public BigQuery datasets are read as `bigquery-public-data.dataset.table` while an export
names its own project; an export may rename a Snowflake database), unqualified by its id, or as a
BigQuery wildcard family (`ga_sessions_2017*`: every table whose name starts so, with the
pseudo-column `_TABLE_SUFFIX`). With a `catalog`, a fully qualified table of another database
of the same engine resolves too. The engine's own `INFORMATION_SCHEMA` views are accepted.

Every column is resolved through its scope (sqlglot's `optimizer.scope`): tables and their
aliases, CTEs and subqueries (their output names, `SELECT *` expanded, struct paths followed to
the column they select), BigQuery `UNNEST(...) AS x` of a repeated column (the alias reads the
fields below it: `UNNEST(h.product) AS p` then `p.productRevenue`), Snowflake `FLATTEN`
(`value`, `key`, `index`, `this`, `path`, `seq`; `:` paths into VARIANT are not checked),
nested RECORD fields by their path (`totals.pageviews`). A path into a repeated column read
without `UNNEST` is a problem of its own. In Snowflake a column of the catalog is matched as the
engine matches it: an unquoted name is read in upper case, a quoted one as written.

What the checker cannot attribute with certainty is accepted, never rejected: a name that one
of the scope's sources cannot enumerate could hold (an `UNNEST` of an expression, a table
function, a struct whose fields the catalog does not list, a column of a source that did not
resolve), aliases of the SELECT list wherever they are referenced, correlated names, BigQuery
script variables and engine pseudo-columns.
"""

from __future__ import annotations

import difflib
import enum
import logging
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.scope import Scope, ScopeType, traverse_scope

from schemagraph.dialects import (
    dialect_of,
    family_sql,
    is_repeated,
    name_parts,
    parent_paths,
    repeated_route,
    table_sql,
)
from schemagraph.model import Catalog, Column, Database, Table, fold
from schemagraph.sql._parse import parse_tokens, split_statements, tokenize
from schemagraph.sql.guard import Refusal
from schemagraph.sql.guard import check_sql as guard_sql

log = logging.getLogger(__name__)

__all__ = ["CheckResult", "Problem", "ProblemKind", "check_sql"]

#: nearest names offered for an unknown one
SUGGESTIONS = 3
#: how alike (difflib ratio) a name must be to be offered
CUTOFF = 0.6
#: the columns of a Snowflake FLATTEN
FLATTEN_COLUMNS = ("SEQ", "KEY", "PATH", "INDEX", "VALUE", "THIS")
#: pseudo-columns every table of a dialect has, folded
PSEUDO_COLUMNS: Mapping[str, frozenset[str]] = {
    "bigquery": frozenset({"_partitiontime", "_partitiondate", "_file_name"}),
    "sqlite": frozenset({"rowid", "oid", "_rowid_"}),
}
WILDCARD_SUFFIX = "_table_suffix"
#: column types whose fields or keys the catalog may not list (read with `.` paths)
_OPEN_TYPES = ("STRUCT", "RECORD", "JSON", "VARIANT", "OBJECT", "ARRAY", "MAP", "ROW")
#: BigQuery functions whose arrays hold scalars: their UNNEST alias is the only column
_SCALAR_ARRAYS: tuple[type[exp.Expr], ...] = (
    exp.GenerateDateArray,
    exp.GenerateSeries,
    exp.GenerateTimestampArray,
    exp.Split,
    exp.RegexpSplit,
    exp.RegexpExtractAll,
    exp.JSONExtractArray,
    exp.StringToArray,
)


class ProblemKind(enum.StrEnum):
    """What is wrong with a checked query; stable codes for the CLI, the API and tools."""

    REFUSED = "refused"
    """The guard of `run_sql` refused it: not parsed, several statements, a write..."""
    UNKNOWN_TABLE = "unknown_table"
    UNKNOWN_COLUMN = "unknown_column"
    NOT_UNNESTED = "not_unnested"
    """A path into a repeated (ARRAY) column, read without `UNNEST`."""


@dataclass(frozen=True)
class Problem:
    """One problem: `name` is the name at fault as the SQL writes it (for a refusal, the guard's
    rule), `suggestions` the nearest real names, as the SQL should write them."""

    kind: ProblemKind
    message: str
    name: str = ""
    suggestions: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "message": self.message,
            "name": self.name,
            "suggestions": list(self.suggestions),
        }


@dataclass(frozen=True)
class CheckResult:
    """`ok`: no problem found; `tables`: the ids of the catalog tables the query reads, those
    that resolved (a wildcard family as its members' ids are written, `web__ga_sessions_2017*`;
    a table of another database as `db.table`)."""

    ok: bool
    database: str
    dialect: str
    problems: tuple[Problem, ...] = ()
    tables: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "database": self.database,
            "dialect": self.dialect,
            "problems": [p.as_dict() for p in self.problems],
            "tables": list(self.tables),
        }

    def lines(self) -> list[str]:
        """One line per problem (`kind: message`), or one line saying the query is accepted."""
        if self.ok:
            return [f"ok: the query reads {_count(len(self.tables), 'table')} of {self.database}"]
        return [f"{p.kind.value}: {p.message}" for p in self.problems]


def check_sql(db: Database, sql: str, catalog: Catalog | None = None) -> CheckResult:
    """Check `sql` against `db`'s tables and columns without running it; never raises for the
    SQL's sake. `catalog`: where fully qualified tables of other databases are looked up."""
    dialect = dialect_of(db)
    try:
        return _check(db, sql, dialect, catalog)
    except RecursionError:
        return _refused(db, dialect, "parse_error", "the SQL is nested too deeply to check")


def _check(db: Database, sql: str, dialect: str, catalog: Catalog | None) -> CheckResult:
    text, variables = _script_query(sql, dialect)
    verdict = guard_sql(text, dialect=dialect)
    if isinstance(verdict, Refusal):
        return _refused(db, dialect, verdict.rule.value, verdict.message)
    resolver = _Resolver(db, dialect, _index(db), catalog, variables)
    try:
        resolver.run(verdict.tree)
    except (SqlglotError, KeyError, ValueError, TypeError, AttributeError) as exc:
        # a query shape sqlglot's scope cannot follow: its tables are checked, its columns not
        log.warning("check: cannot follow the scopes of a query on %s: %r", db.id, exc)
        resolver.tables_only(verdict.tree)
    problems = tuple(resolver.problems.values())
    return CheckResult(not problems, db.id, dialect, problems, resolver.table_ids())


def _refused(db: Database, dialect: str, rule: str, message: str) -> CheckResult:
    problem = Problem(ProblemKind.REFUSED, f"{message} ({rule})", rule)
    return CheckResult(False, db.id, dialect, (problem,))


def _script_query(sql: str, dialect: str) -> tuple[str, frozenset[str]]:
    """A BigQuery script of `DECLARE`s then one query: the query and the declared (folded)
    names. Anything else comes back as it is, for the guard to judge."""
    if dialect != "bigquery":
        return sql, frozenset()
    try:
        tokens = tokenize(sql, dialect)
    except (SqlglotError, RecursionError):
        return sql, frozenset()
    statements = split_statements(tokens)
    if len(statements) < 2 or any(s[0].text.upper() != "DECLARE" for s in statements[:-1]):
        return sql, frozenset()
    names: set[str] = set()
    for statement in statements[:-1]:
        try:
            trees = parse_tokens(statement, sql, dialect)
        except SqlglotError:
            return sql, frozenset()
        for tree in trees:
            for item in tree.find_all(exp.DeclareItem):
                targets = item.this if isinstance(item.this, list) else [item.this]
                names.update(fold(t.name) for t in targets if isinstance(t, exp.Expr))
    return sql[statements[-1][0].start :], frozenset(names)


# --- the catalog side ----------------------------------------------------------------------


@dataclass
class _Index:
    """One database's tables, by the folded parts of their engine names (built once per
    database and kept: a family of hundreds of tables is scanned once, not per query)."""

    db: Database
    entries: list[tuple[Table, tuple[str, ...]]]
    by_last: dict[str, list[int]]
    by_id: dict[str, int]
    _columns: dict[str, dict[str, Column]] = field(default_factory=dict)
    _parents: dict[str, frozenset[str]] = field(default_factory=dict)
    _stems: list[str] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def of(cls, db: Database) -> _Index:
        entries = [(t, tuple(fold(p) for p in name_parts(t))) for t in db.tables]
        by_last: dict[str, list[int]] = {}
        for i, (_, parts) in enumerate(entries):
            by_last.setdefault(parts[-1], []).append(i)
        by_id = {fold(t.name): i for i, (t, _) in enumerate(entries)}
        return cls(db, entries, by_last, by_id)

    def columns(self, table: Table) -> dict[str, Column]:
        key = fold(table.name)
        found = self._columns.get(key)
        if found is None:
            found = {fold(c.name): c for c in table.columns}
            with self.lock:
                self._columns[key] = found
        return found

    def parents(self, table: Table) -> frozenset[str]:
        """The folded paths that have fields listed below them."""
        key = fold(table.name)
        found = self._parents.get(key)
        if found is None:
            found = frozenset(fold(p) for c in table.columns for p in parent_paths(c.name))
            with self.lock:
                self._parents[key] = found
        return found

    def stems(self) -> list[str]:
        """The folded name stems of the database's sharded families (`ga_sessions_`)."""
        if self._stems is None:
            stems = {_stem(parts[-1]) for _, parts in self.entries}
            self._stems = sorted(s for s in stems if s)
        return self._stems


_INDEXES: OrderedDict[int, tuple[Database, _Index]] = OrderedDict()
_INDEXES_LOCK = threading.Lock()
MAX_INDEXES = 256


def _index(db: Database) -> _Index:
    """The index of `db`, cached by identity (a catalog's databases live as long as it)."""
    with _INDEXES_LOCK:
        held = _INDEXES.get(id(db))
        if held is not None and held[0] is db:
            _INDEXES.move_to_end(id(db))
            return held[1]
    index = _Index.of(db)
    with _INDEXES_LOCK:
        _INDEXES[id(db)] = (db, index)
        while len(_INDEXES) > MAX_INDEXES:
            _INDEXES.popitem(last=False)
    return index


_HOLDERS: OrderedDict[int, tuple[Catalog, dict[str, list[Database]]]] = OrderedDict()
MAX_HOLDERS = 4


def _holders(catalog: Catalog) -> dict[str, list[Database]]:
    """The databases of `catalog` by the (folded) last part of each table's engine name, cached
    by identity: a table of another database is found without scanning every database."""
    with _INDEXES_LOCK:
        held = _HOLDERS.get(id(catalog))
        if held is not None and held[0] is catalog:
            return held[1]
    holders: dict[str, list[Database]] = {}
    for db in catalog:
        for table in db.tables:
            found = holders.setdefault(fold(name_parts(table)[-1]), [])
            if not found or found[-1] is not db:
                found.append(db)
    with _INDEXES_LOCK:
        _HOLDERS[id(catalog)] = (catalog, holders)
        while len(_HOLDERS) > MAX_HOLDERS:
            _HOLDERS.popitem(last=False)
    return holders


def _open_type(kind: str) -> bool:
    """Whether a column of type `kind` may have fields the catalog does not list: a STRUCT,
    JSON, VARIANT... or an array of them (not `ARRAY<STRING>`)."""
    kind = kind.upper().replace(" ", "")
    while kind.startswith("ARRAY<"):
        kind = kind[len("ARRAY<") :]
    return kind.startswith(_OPEN_TYPES)


def _stem(name: str) -> str:
    """`ga_sessions_` for `ga_sessions_20170801`; "" for a name that ends in no digits."""
    stripped = name.rstrip("0123456789")
    return stripped if stripped != name and stripped else ""


# --- sources: what a name in FROM stands for ------------------------------------------------


class _State(enum.Enum):
    FOUND = "found"
    MISSING = "missing"
    UNSURE = "unsure"
    NOT_UNNESTED = "not_unnested"


@dataclass(frozen=True)
class _Hit:
    state: _State
    column: Column | None = None
    table: Table | None = None
    repeated: str = ""  # NOT_UNNESTED: the repeated column the path goes through


FOUND = _Hit(_State.FOUND)
MISSING = _Hit(_State.MISSING)
UNSURE = _Hit(_State.UNSURE)


class _Source:
    """What one name of a FROM clause stands for; `alias`: the name it has there."""

    alias = ""

    def describe(self) -> str:
        """How a message names it."""
        return f"`{self.alias}`"

    def find(self, path: tuple[str, ...]) -> _Hit:
        """`path` read through this source (`alias.a.b`: path (a, b))."""
        return UNSURE

    def find_bare(self, path: tuple[str, ...]) -> _Hit:
        """`path` written without a qualifier, if it can belong to this source."""
        return self.find(path)

    def element(self, path: tuple[str, ...]) -> _Source | None:
        """What `UNNEST(alias.path)` reads, when the path is a repeated column of the catalog."""
        return None

    def names(self) -> list[str]:
        """The names this source offers (for suggestions), as they are written."""
        return []

    def star(self) -> dict[str, tuple[str, _Origin | None]] | None:
        """The columns `SELECT *` gives (folded name -> name, origin); None: unknown."""
        return None


_Origin = tuple[_Source, tuple[str, ...]]


class _Opaque(_Source):
    """A source whose columns cannot be enumerated (a table function, an UNNEST of an
    expression, a table that did not resolve); `closed`: only `names` are its columns."""

    def __init__(self, alias: str, names: Iterable[str] = (), closed: bool = False) -> None:
        self.alias = alias
        self._names = {fold(n): n for n in names}
        self.closed = closed

    def find(self, path: tuple[str, ...]) -> _Hit:
        if fold(path[0]) in self._names:
            return FOUND if len(path) == 1 else UNSURE
        return MISSING if self.closed else UNSURE

    def find_bare(self, path: tuple[str, ...]) -> _Hit:
        return self.find(path)

    def names(self) -> list[str]:
        return list(self._names.values())

    def star(self) -> dict[str, tuple[str, _Origin | None]] | None:
        if not self.closed:
            return None
        return {k: (v, None) for k, v in self._names.items()}


class _Tables(_Source):
    """A catalog table, or a wildcard family of them (`tables` in name order)."""

    def __init__(
        self,
        index: _Index,
        tables: tuple[Table, ...],
        alias: str,
        written: str,
        wildcard: bool,
        dialect: str,
    ) -> None:
        self.index = index
        self.tables = tables
        self.alias = alias
        self.written = written
        self.wildcard = wildcard
        self.pseudo = PSEUDO_COLUMNS.get(dialect, frozenset()) | (
            {WILDCARD_SUFFIX} if wildcard else set()
        )

    def describe(self) -> str:
        return f"`{self.written}`"

    def find(self, path: tuple[str, ...]) -> _Hit:
        return self.lookup(path, floor="")

    def lookup(self, path: tuple[str, ...], floor: str) -> _Hit:
        """`path` (the full path of a column) in the table; repeated columns at or above
        `floor` (a path, folded) are unnested already."""
        key = fold(".".join(path))
        first = self._lookup(self.tables[0], path, key, floor)
        if first.state is not _State.MISSING or len(self.tables) == 1:
            return first
        for table in self.tables[1:]:  # a family: any member that has it
            hit = self._lookup(table, path, key, floor)
            if hit.state is not _State.MISSING:
                return hit
        return first

    def _lookup(self, table: Table, path: tuple[str, ...], key: str, floor: str) -> _Hit:
        columns = self.index.columns(table)
        column = columns.get(key)
        if column is not None:
            for parent in parent_paths(column.name):
                held = columns.get(fold(parent))
                if held is not None and is_repeated(held) and len(parent) > len(floor):
                    return _Hit(_State.NOT_UNNESTED, column, table, held.name)
            return _Hit(_State.FOUND, column, table)
        if len(path) == 1 and key in self.pseudo:
            return FOUND
        parents = self.index.parents(table)
        for cut in range(len(path) - 1, 0, -1):
            head = fold(".".join(path[:cut]))
            held = columns.get(head)
            if held is None:
                continue
            if head in parents or (held.type and not _open_type(held.type)):
                return MISSING  # its fields are listed, or it has none
            return UNSURE
        return MISSING

    def element(self, path: tuple[str, ...]) -> _Source | None:
        return self.element_at(path, floor="")

    def element_at(self, path: tuple[str, ...], floor: str) -> _Source | None:
        hit = self.lookup(path, floor)
        if hit.state is _State.FOUND and hit.column is not None and is_repeated(hit.column):
            return _Element(self, hit.column.name, "")
        return None

    def names(self) -> list[str]:
        return [c.name for c in self.tables[0].columns]

    def star(self) -> dict[str, tuple[str, _Origin | None]] | None:
        return {
            fold(c.name): (c.name, (self, (c.name,)))
            for c in self.tables[0].columns
            if "." not in c.name
        }


class _Element(_Source):
    """One element of a repeated column of a catalog table (BigQuery `UNNEST(hits) AS h`):
    `h.page.pagePath` is the column `hits.page.pagePath`."""

    def __init__(self, base: _Tables, path: str, alias: str) -> None:
        self.base = base
        self.path = path
        self.alias = alias
        self.parts = tuple(path.split("."))

    def describe(self) -> str:
        return f"`{self.alias}` (an element of `{self.path}`)"

    def find(self, path: tuple[str, ...]) -> _Hit:
        if not path:
            return FOUND
        return self.base.lookup(self.parts + path, floor=fold(self.path))

    def element(self, path: tuple[str, ...]) -> _Source | None:
        return self.base.element_at(self.parts + path, floor=fold(self.path))

    def names(self) -> list[str]:
        prefix = self.path + "."
        return [
            c.name[len(prefix) :]
            for c in self.base.tables[0].columns
            if fold(c.name).startswith(fold(prefix))
        ]

    def star(self) -> dict[str, tuple[str, _Origin | None]] | None:
        return {fold(n): (n, (self, (n,))) for n in self.names() if "." not in n} or None


class _Flatten(_Source):
    """A Snowflake FLATTEN: its six columns; `:` paths into them are not checked."""

    def __init__(self, alias: str) -> None:
        self.alias = alias

    def describe(self) -> str:
        return f"`{self.alias}` (FLATTEN)"

    def find(self, path: tuple[str, ...]) -> _Hit:
        if path[0].upper() in FLATTEN_COLUMNS:
            return FOUND
        return MISSING

    def names(self) -> list[str]:
        return [c.lower() for c in FLATTEN_COLUMNS]

    def star(self) -> dict[str, tuple[str, _Origin | None]] | None:
        return {c.lower(): (c, None) for c in FLATTEN_COLUMNS}


class _Derived(_Source):
    """A CTE or a subquery: its output names, each with the column it selects when it selects
    one (so that `cte.hits` can be unnested and `cte.totals.pageviews` followed)."""

    def __init__(self, alias: str, columns: dict[str, tuple[str, _Origin | None]] | None) -> None:
        self.alias = alias
        self.columns = columns

    def find(self, path: tuple[str, ...]) -> _Hit:
        if self.columns is None:
            return UNSURE
        held = self.columns.get(fold(path[0]))
        if held is None:
            return MISSING
        origin = held[1]
        if len(path) == 1:
            return FOUND
        if origin is None:
            return UNSURE
        return origin[0].find(origin[1] + path[1:])

    def element(self, path: tuple[str, ...]) -> _Source | None:
        if self.columns is None:
            return None
        held = self.columns.get(fold(path[0]))
        if held is None or held[1] is None:
            return None
        source, inner = held[1]
        return source.element(inner + path[1:])

    def names(self) -> list[str]:
        return [name for name, _ in (self.columns or {}).values()]

    def star(self) -> dict[str, tuple[str, _Origin | None]] | None:
        if self.columns is None:
            return None
        return {k: (name, (self, (name,))) for k, (name, _) in self.columns.items()}


# --- the resolver ---------------------------------------------------------------------------


class _Resolver:
    def __init__(
        self,
        db: Database,
        dialect: str,
        index: _Index,
        catalog: Catalog | None,
        variables: frozenset[str],
    ) -> None:
        self.db = db
        self.dialect = dialect
        self.index = index
        self.catalog = catalog
        self.variables = variables
        self.problems: dict[tuple[str, str], Problem] = {}
        self.read: dict[str, str] = {}  # table id (folded) -> id, or family pattern
        self._tables: dict[int, _Source] = {}  # id(exp.Table) -> its source
        self._sources: dict[int, dict[str, _Source]] = {}  # id(scope) -> alias -> source
        self._derived: dict[int, _Derived] = {}  # id(scope) -> its output
        self._busy: set[int] = set()
        self._scope_of: dict[int, Scope] = {}  # id(scope.expression) -> scope
        self._ctes: dict[str, Scope] = {}
        self._seen: set[int] = set()

    # -- entry points

    def run(self, tree: exp.Expr) -> None:
        scopes = traverse_scope(tree)
        for scope in scopes:
            self._scope_of[id(scope.expression)] = scope
            if scope.scope_type is ScopeType.CTE and isinstance(scope.expression.parent, exp.CTE):
                self._ctes[fold(scope.expression.parent.alias)] = scope
        for scope in scopes:
            if scope.scope_type is not ScopeType.UDTF:
                self._sources_of(scope)
        for scope in scopes:
            if scope.scope_type is ScopeType.UDTF:
                continue
            for column in scope.columns:
                if id(column) not in self._seen:
                    self._seen.add(id(column))
                    self._check_column(scope, column, self._sources_of(scope))
        self.tables_only(tree)  # tables no scope reached (DML-free shapes sqlglot skips)

    def tables_only(self, tree: exp.Expr) -> None:
        ctes = {fold(c.alias) for c in tree.find_all(exp.CTE)}
        for node in tree.find_all(exp.Table):
            if id(node) in self._tables or not self._is_catalog_table(node, ctes):
                continue
            self._table(node)

    def table_ids(self) -> tuple[str, ...]:
        return tuple(sorted(self.read.values(), key=fold))

    # -- tables

    @staticmethod
    def _is_catalog_table(node: exp.Table, ctes: set[str]) -> bool:
        if not isinstance(node.this, exp.Identifier):
            return False  # a table function, or a name sqlglot could not read as one
        if not node.name:
            return False
        return bool(node.args.get("db")) or fold(node.name) not in ctes

    def _table(self, node: exp.Table) -> _Source:
        held = self._tables.get(id(node))
        if held is None:
            held = self._resolve_table(node)
            self._tables[id(node)] = held
        return held

    def _resolve_table(self, node: exp.Table) -> _Source:
        parts = tuple(p.name for p in node.parts)
        written = ".".join(parts)
        label = node.alias_or_name
        wildcard = self.dialect == "bigquery" and parts[-1].endswith("*")
        found = _match(self.index, parts, self.dialect, wildcard)
        index = self.index
        if not found and self.catalog is not None and len(parts) > 2:
            index, found = self._elsewhere(parts, wildcard)
        if not found and any(fold(p) == "information_schema" for p in parts):
            return _Opaque(label)  # the engine's own views, which no export lists
        if not found:
            near = self._near_tables(parts, wildcard)
            message = f"no table `{written}` in {self.db.id}"
            self._problem(ProblemKind.UNKNOWN_TABLE, written, _nearest(message, near), near)
            return _Opaque(label)
        tables = tuple(index.entries[i][0] for i in found)
        first = tables[0]
        read = first.name
        if wildcard:  # the family as its ids are written: `dataset__ga_sessions_2017*`
            read = first.name[: len(first.name) - len(name_parts(first)[-1])] + parts[-1]
        if index is not self.index:
            read = f"{index.db.id}.{read}"
        self.read[fold(read)] = read
        return _Tables(index, tables, label, parts[-1], wildcard, self.dialect)

    def _elsewhere(self, parts: tuple[str, ...], wildcard: bool) -> tuple[_Index, list[int]]:
        """A fully qualified table of another database of the catalog, same engine."""
        assert self.catalog is not None
        holders = _holders(self.catalog)
        last = fold(parts[-1])
        if wildcard:
            names = [n for n in holders if n.startswith(last[:-1])]
        else:
            names = [last] if last in holders else []
        for db in dict.fromkeys(db for name in names for db in holders[name]):
            if db is self.db or dialect_of(db) != self.dialect:
                continue
            index = _index(db)
            found = _match(index, parts, self.dialect, wildcard, strict=True)
            if found:
                return index, found
        return self.index, []

    def _near_tables(self, parts: tuple[str, ...], wildcard: bool) -> tuple[str, ...]:
        """The nearest tables (or families), qualified as the SQL qualifies its tables when
        that names them, else as the engine names them."""
        last = fold(parts[-1])
        out = []
        if wildcard:
            stems = difflib.get_close_matches(last[:-1], self.index.stems(), SUGGESTIONS, CUTOFF)
            for stem in stems:
                member = next(t for t, p in self.index.entries if p[-1].startswith(stem))
                written = name_parts(member)[-1][: len(stem)] + "*"
                out.append(self._as_written(parts, written, family_sql(self.db, member, stem)))
            return tuple(out)
        near = difflib.get_close_matches(last, list(self.index.by_last), SUGGESTIONS, CUTOFF)
        for name in near:
            table = self.index.entries[self.index.by_last[name][0]][0]
            out.append(self._as_written(parts, name_parts(table)[-1], table_sql(self.db, table)))
        return tuple(out)

    def _as_written(self, parts: tuple[str, ...], last: str, rendered: str) -> str:
        candidate = (*parts[:-1], last)
        if _match(self.index, candidate, self.dialect, last.endswith("*")):
            return f"`{'.'.join(candidate)}`"
        return rendered if rendered.startswith("`") else f"`{rendered}`"

    # -- sources of a scope

    def _sources_of(self, scope: Scope) -> dict[str, _Source]:
        held = self._sources.get(id(scope))
        if held is not None:
            return held
        sources: dict[str, _Source] = {}
        self._sources[id(scope)] = sources  # filled in place: later items see earlier ones
        expression = scope.expression
        if not isinstance(expression, exp.Select):
            return sources
        items: list[exp.Expr] = []
        from_ = expression.args.get("from_")
        if from_ is not None:
            items.append(from_.this)
        items.extend(join.this for join in expression.args.get("joins") or [])
        items.extend(expression.args.get("laterals") or [])
        for item in items:
            self._add_source(scope, sources, item)
        return sources

    def _add_source(self, scope: Scope, sources: dict[str, _Source], item: exp.Expr) -> None:
        if isinstance(item, exp.Final):
            item = item.this
        if isinstance(item, exp.Table):
            self._add_table(sources, item)
            for join in item.args.get("joins") or []:  # (a JOIN b) parenthesized
                self._add_source(scope, sources, join.this)
            return
        alias = _alias_of(item)
        if isinstance(item, exp.Subquery | exp.Values) or (
            isinstance(item, exp.Lateral) and isinstance(item.this, exp.Subquery)
        ):
            inner = item.this.unnest() if isinstance(item, exp.Lateral) else item.unnest()
            child = self._scope_of.get(id(inner))
            derived = self._derived_of(child, alias) if child is not None else None
            names = _alias_columns(item)
            source: _Source = (
                derived if derived is not None else _Opaque(alias, names, closed=bool(names))
            )
            sources[fold(alias)] = source
            for join in item.args.get("joins") or []:
                self._add_source(scope, sources, join.this)
            return
        if isinstance(item, exp.Unnest):
            sources[fold(alias)] = self._unnest(scope, sources, item, alias)
            return
        if isinstance(item, exp.Lateral | exp.TableFromRows) and isinstance(item.this, exp.Explode):
            self._udtf_columns(scope, sources, item.this)
            sources[fold(alias)] = _Flatten(alias)
            return
        self._udtf_columns(scope, sources, item)
        names = _alias_columns(item)
        sources[fold(alias)] = _Opaque(alias, names, closed=bool(names))

    def _add_table(self, sources: dict[str, _Source], node: exp.Table) -> None:
        alias = node.alias_or_name
        if not isinstance(node.this, exp.Identifier):  # a table function: TABLE(GENERATOR(...))
            names = _alias_columns(node)
            sources[fold(alias)] = _Opaque(alias, names, closed=bool(names))
            return
        qualifier = node.args.get("db")
        if (
            self.dialect == "bigquery"
            and isinstance(qualifier, exp.Identifier)
            and not node.args.get("catalog")
            and fold(qualifier.name) in sources
        ):  # `FROM t, t.hits AS h`: BigQuery's implicit UNNEST of a column
            element = sources[fold(qualifier.name)].element((node.name,))
            if element is not None:
                element.alias = alias
            sources[fold(alias)] = element if element is not None else _Opaque(alias, [alias])
            self._tables[id(node)] = sources[fold(alias)]
            return
        cte = None if qualifier else self._ctes.get(fold(node.name))
        if cte is not None:
            derived = self._derived_of(cte, alias)
            sources[fold(alias)] = derived if derived is not None else _Opaque(alias)
            return
        sources[fold(alias)] = self._table(node)

    def _unnest(
        self, scope: Scope, sources: dict[str, _Source], node: exp.Unnest, alias: str
    ) -> _Source:
        self._udtf_columns(scope, sources, node)
        offset = node.args.get("offset")
        extra = [offset.name] if isinstance(offset, exp.Expr) and offset.name else []
        args = node.expressions
        if len(args) == 1 and isinstance(args[0], exp.Column) and not args[0].is_star:
            element = self._element(scope, sources, args[0])
            if element is not None:
                element.alias = alias
                if extra:
                    return _WithNames(element, extra)
                return element
        if len(args) == 1 and (
            isinstance(args[0], _SCALAR_ARRAYS)
            or (
                isinstance(args[0], exp.Array)
                and all(isinstance(e, exp.Literal) for e in args[0].expressions)
            )
        ):
            return _Opaque(alias, [alias, *extra], closed=True)
        return _Opaque(alias, [alias, *extra])

    def _element(
        self, scope: Scope, sources: dict[str, _Source], column: exp.Column
    ) -> _Source | None:
        origin = self._origin(scope, sources, _path(column))
        if origin is None:
            return None
        source, path = origin
        return source.element(path)

    def _udtf_columns(self, scope: Scope, sources: dict[str, _Source], node: exp.Expr) -> None:
        """Check the columns an UNNEST or FLATTEN reads, against the sources before it."""
        for column in node.find_all(exp.Column):
            if id(column) in self._seen or _in_subquery(column, node):
                continue
            self._seen.add(id(column))
            self._check_column(scope, column, sources)

    # -- derived tables and CTEs

    def _derived_of(self, scope: Scope, alias: str) -> _Derived | None:
        key = id(scope)
        held = self._derived.get(key)
        if held is not None:
            return _Derived(alias, held.columns)
        if key in self._busy:  # a recursive CTE reading itself
            return None
        self._busy.add(key)
        try:
            columns = self._outputs(scope)
        finally:
            self._busy.discard(key)
        names = _alias_columns(scope.expression.parent) if scope.expression.parent else []
        if names and columns is not None:
            values = list(columns.values())
            columns = {
                fold(n): (n, values[i][1] if i < len(values) else None) for i, n in enumerate(names)
            }
        elif names:
            columns = {fold(n): (n, None) for n in names}
        derived = _Derived(alias, columns)
        self._derived[key] = derived
        return _Derived(alias, columns)

    def _outputs(self, scope: Scope) -> dict[str, tuple[str, _Origin | None]] | None:
        expression = scope.expression
        if isinstance(expression, exp.SetOperation):
            left = expression.left.unnest() if expression.left else None
            while isinstance(left, exp.SetOperation):
                left = left.left.unnest()
            child = self._scope_of.get(id(left)) if left is not None else None
            if child is None:
                return None
            derived = self._derived_of(child, "")
            return derived.columns if derived is not None else None
        if not isinstance(expression, exp.Select):
            return None
        if expression.args.get("kind"):  # SELECT AS STRUCT / AS VALUE
            return None
        sources = self._sources_of(scope)
        columns: dict[str, tuple[str, _Origin | None]] = {}
        for projection in expression.expressions:
            if isinstance(projection, exp.Star):
                for source in _selected(sources):
                    expanded = source.star()
                    if expanded is None:
                        return None
                    columns.update(expanded)
                continue
            if isinstance(projection, exp.Column) and projection.is_star:
                named = sources.get(fold(projection.table))
                expanded = named.star() if named is not None else None
                if expanded is None:
                    return None
                columns.update(expanded)
                continue
            name = projection.alias_or_name
            if not name:
                continue
            inner = projection.this if isinstance(projection, exp.Alias) else projection
            origin = (
                self._origin(scope, sources, _path(inner))
                if isinstance(inner, exp.Column)
                else None
            )
            columns[fold(name)] = (name, origin)
        return columns

    # -- columns

    def _origin(
        self, scope: Scope, sources: dict[str, _Source], path: tuple[str, ...]
    ) -> _Origin | None:
        """The source and path a column reads, when one source certainly holds it."""
        level: Scope | None = scope
        current: dict[str, _Source] | None = sources
        while level is not None and current is not None:
            if len(path) > 1 and fold(path[0]) in current:
                return current[fold(path[0])], path[1:]
            holders = [s for s in _selected(current) if s.find_bare(path).state is _State.FOUND]
            if len(holders) == 1:
                return holders[0], path
            if holders:
                return None
            level, current = self._outer(level)
        return None

    def _outer(self, scope: Scope) -> tuple[Scope | None, dict[str, _Source] | None]:
        """The scope a correlated name of `scope` is read from: a subquery's, an UNNEST's or
        a LATERAL derived table's enclosing one."""
        correlated = scope.scope_type in (ScopeType.SUBQUERY, ScopeType.UDTF) or (
            scope.scope_type is ScopeType.DERIVED_TABLE and scope.can_be_correlated
        )
        if not correlated or scope.parent is None:
            return None, None
        parent: Scope | None = scope.parent
        while parent is not None and parent.scope_type is ScopeType.UDTF:
            parent = parent.parent
        if parent is None:
            return None, None
        return parent, self._sources_of(parent)

    def _check_column(self, scope: Scope, column: exp.Column, sources: dict[str, _Source]) -> None:
        if column.is_star or _lambda_variable(column):
            return
        path = _path(column)
        if not path or not all(path):
            return
        written = ".".join(path)
        unsure = False
        level: Scope | None = scope
        current: dict[str, _Source] | None = sources
        tried: list[_Source] = []
        while level is not None and current is not None:
            if len(path) > 1 and fold(path[0]) in current:
                source = current[fold(path[0])]
                hit = source.find(path[1:])
                if hit.state is _State.MISSING:
                    others = [s for s in _selected(current) if s is not source]
                    self._missing(written, path[1:], [source], path[0], others)
                else:
                    self._report(hit, column, written, source)
                return
            hits = [(s, s.find_bare(path)) for s in _selected(current)]
            tried.extend(_selected(current))
            found = next(((s, h) for s, h in hits if h.state is _State.FOUND), None)
            if found is not None:
                self._report(found[1], column, written, found[0])
                return
            wrong = next(((s, h) for s, h in hits if h.state is _State.NOT_UNNESTED), None)
            if wrong is not None:
                self._report(wrong[1], column, written, wrong[0])
                return
            unsure = unsure or any(h.state is _State.UNSURE for _, h in hits)
            if len(path) == 1 and (
                fold(path[0]) in _select_aliases(level) or fold(path[0]) in current
            ):
                return
            if isinstance(level.expression, exp.SetOperation):  # ORDER BY of a UNION
                outputs = self._outputs(level)
                if outputs is None or fold(path[0]) in outputs:
                    return
            if len(path) > 2 and self._qualified_by_table(current, path, column, written):
                return
            level, current = self._outer(level)
        if unsure or fold(path[0]) in self.variables or _unattributable(column):
            return
        self._missing(written, path, tried, "", [])

    def _qualified_by_table(
        self, sources: dict[str, _Source], path: tuple[str, ...], column: exp.Column, written: str
    ) -> bool:
        """`dataset.table.column` or `SCHEMA.TABLE.COLUMN`: a column named with its table."""
        for cut in range(len(path) - 1, 0, -1):
            source = sources.get(fold(path[cut - 1]))
            if isinstance(source, _Tables):
                hit = source.find(path[cut:])
                if hit.state is _State.MISSING:
                    self._missing(written, path[cut:], [source], path[cut - 1], [])
                else:
                    self._report(hit, column, written, source)
                return True
        return False

    def _report(self, hit: _Hit, column: exp.Column, written: str, source: _Source) -> None:
        """A problem for a name that resolved badly: a path into a repeated column, or (in
        Snowflake) a column matched only when case is ignored."""
        if hit.state is _State.NOT_UNNESTED and hit.column is not None and hit.table is not None:
            route = repeated_route(hit.table, hit.column.name)
            if isinstance(source, _Element):
                route = tuple(r for r in route if len(r) > len(source.path))
            self._problem(
                ProblemKind.NOT_UNNESTED,
                written,
                f"`{written}` reads into the repeated (ARRAY) column `{hit.repeated}` of "
                f"{source.describe()}: reach it as {_routed_name(hit.column.name, route)}",
                (_routed_name(hit.column.name, route),),
            )
            return
        if hit.state is not _State.FOUND or hit.column is None or self.dialect != "snowflake":
            return
        identifier = column.this
        if "." in hit.column.name or not isinstance(identifier, exp.Identifier):
            return
        read = identifier.name if identifier.quoted else identifier.name.upper()
        if read == hit.column.name:
            return
        quoted = '"' + hit.column.name.replace('"', '""') + '"'
        how = "as written, quoted" if identifier.quoted else "in upper case, unquoted"
        self._problem(
            ProblemKind.UNKNOWN_COLUMN,
            written,
            f"no column `{read}` in {source.describe()}: Snowflake reads `{identifier.name}` "
            f"{how}; the column is `{quoted}`",
            (f"`{quoted}`",),
        )

    def _missing(
        self,
        written: str,
        path: tuple[str, ...],
        sources: list[_Source],
        qualifier: str,
        others: list[_Source],
    ) -> None:
        """An unknown column: `path` read through `qualifier` (or unqualified) in `sources`;
        `others`: the scope's other sources, where it may be."""
        suggestions = self._near_columns(path, sources, qualifier, others)
        message = f"no column `{'.'.join(path)}` in {_where(sources)}"
        self._problem(
            ProblemKind.UNKNOWN_COLUMN, written, _nearest(message, suggestions), tuple(suggestions)
        )

    def _near_columns(
        self,
        path: tuple[str, ...],
        sources: list[_Source],
        qualifier: str,
        others: list[_Source],
    ) -> list[str]:
        """The nearest real names, as the SQL would write them: the same name in another source
        of the scope, the same field at another path (with the UNNESTs it needs), names alike."""
        wanted = fold(".".join(path))
        last = fold(path[-1])
        prefix = f"{qualifier}." if qualifier else ""
        out: list[str] = [
            f"`{other.alias}.{'.'.join(path)}`"
            for other in others
            if other.alias and other.find(path).state is _State.FOUND
        ]
        for source in sources:
            names = source.names()
            for name in names:
                if fold(name) != wanted and fold(name.rsplit(".", 1)[-1]) == last:
                    out.append(_routed(source, name, prefix))
            folded = {fold(n): n for n in names}
            for near in difflib.get_close_matches(wanted, list(folded), SUGGESTIONS, CUTOFF):
                out.append(_routed(source, folded[near], prefix))
        return list(dict.fromkeys(out))[:SUGGESTIONS]

    def _problem(
        self, kind: ProblemKind, name: str, message: str, suggestions: tuple[str, ...]
    ) -> None:
        key = (kind.value, fold(name))
        if key not in self.problems:
            self.problems[key] = Problem(kind, message, name, suggestions)


class _WithNames(_Source):
    """A source with a few more column names (an UNNEST's `WITH OFFSET AS off`)."""

    def __init__(self, inner: _Source, names: list[str]) -> None:
        self.inner = inner
        self.alias = inner.alias
        self.extra = {fold(n) for n in names}

    def find(self, path: tuple[str, ...]) -> _Hit:
        return self.inner.find(path)

    def find_bare(self, path: tuple[str, ...]) -> _Hit:
        if len(path) == 1 and fold(path[0]) in self.extra:
            return FOUND
        return self.inner.find_bare(path)

    def element(self, path: tuple[str, ...]) -> _Source | None:
        return self.inner.element(path)

    def names(self) -> list[str]:
        return self.inner.names()

    def star(self) -> dict[str, tuple[str, _Origin | None]] | None:
        return self.inner.star()


# --- small helpers --------------------------------------------------------------------------


def _match(
    index: _Index, parts: tuple[str, ...], dialect: str, wildcard: bool, strict: bool = False
) -> list[int]:
    """The entries of `index` that `parts` (a table's name as written) names: the trailing
    parts of its engine name; the whole name with another first part (a BigQuery project other
    than the export's, such as `bigquery-public-data`; a Snowflake database the export renamed);
    an unqualified table id. `strict` (a table of another database): the whole engine name, the
    project alone free in BigQuery."""
    folded = tuple(fold(p) for p in parts)
    qualifier, last = folded[:-1], folded[-1]
    if wildcard:
        prefix = last[:-1]
        candidates = [i for i, (_, p) in enumerate(index.entries) if p[-1].startswith(prefix)]
    else:
        candidates = list(index.by_last.get(last, ()))
        if not qualifier and last in index.by_id and index.by_id[last] not in candidates:
            candidates.append(index.by_id[last])
    found = []
    for i in candidates:
        theirs = index.entries[i][1][:-1]
        if _qualifies(qualifier, theirs, dialect, strict):
            found.append(i)
    return found


def _qualifies(
    qualifier: tuple[str, ...], theirs: tuple[str, ...], dialect: str, strict: bool
) -> bool:
    if qualifier == theirs:
        return True
    other_first = len(qualifier) == len(theirs) >= 2 and qualifier[1:] == theirs[1:]
    if strict:
        return dialect == "bigquery" and other_first
    if not qualifier or other_first:
        return True
    if len(qualifier) < len(theirs) and theirs[-len(qualifier) :] == qualifier:
        return True
    return dialect == "sqlite" and qualifier in (("main",), ("temp",))


def _routed(source: _Source, name: str, prefix: str) -> str:
    """`name` of `source` as a suggestion: with the UNNESTs a nested field needs."""
    route: tuple[str, ...] = ()
    if isinstance(source, _Tables) and "." in name:
        route = repeated_route(source.tables[0], name)
    elif isinstance(source, _Element):
        full = f"{source.path}.{name}"
        route = tuple(
            r for r in repeated_route(source.base.tables[0], full) if len(r) > len(source.path)
        )
        if route:
            name = full
    if route:
        return _routed_name(name, route)
    return f"`{prefix}{name}`"


def _routed_name(name: str, route: tuple[str, ...]) -> str:
    if not route:
        return f"`{name}`"
    return f"`{name}` through " + " then ".join(f"`UNNEST({r})`" for r in route)


def _nearest(message: str, suggestions: Iterable[str]) -> str:
    listed = list(suggestions)
    return f"{message}; nearest: {'; '.join(listed)}" if listed else message


def _alias_of(node: exp.Expr) -> str:
    alias = node.args.get("alias")
    if isinstance(alias, exp.TableAlias):
        if alias.name:
            return alias.name
        columns = alias.columns
        if isinstance(node, exp.Unnest) and columns:
            return columns[0].name  # BigQuery: UNNEST(x) AS y
    return node.alias_or_name if hasattr(node, "alias_or_name") else ""


def _alias_columns(node: exp.Expr | None) -> list[str]:
    """The column names an alias lists (`AS t(a, b)`); none for BigQuery's `UNNEST ... AS y`."""
    if node is None or isinstance(node, exp.Unnest):
        return []
    alias = node.args.get("alias")
    if isinstance(alias, exp.TableAlias) and not (
        isinstance(node, exp.Lateral) and isinstance(node.this, exp.Explode)
    ):
        return [c.name for c in alias.columns if c.name]
    return []


def _path(column: exp.Column) -> tuple[str, ...]:
    return tuple(p.name for p in column.parts)


def _selected(sources: Mapping[str, _Source]) -> list[_Source]:
    return list(sources.values())


def _select_aliases(scope: Scope) -> set[str]:
    expression = scope.expression
    selects = [expression]
    if isinstance(expression, exp.SetOperation):
        selects = list(expression.find_all(exp.Select))
    return {
        fold(p.alias)
        for select in selects
        if isinstance(select, exp.Select)
        for p in select.expressions
        if isinstance(p, exp.Alias) and p.alias
    }


def _in_subquery(column: exp.Column, root: exp.Expr) -> bool:
    node = column.parent
    while node is not None and node is not root:
        if isinstance(node, exp.Query):
            return True
        node = node.parent
    return False


def _lambda_variable(column: exp.Column) -> bool:
    node = column.parent
    while node is not None:
        if isinstance(node, exp.Lambda):
            names = {fold(e.name) for e in node.expressions}
            if fold(column.parts[0].name) in names:
                return True
        node = node.parent
    return False


def _unattributable(column: exp.Column) -> bool:
    """A name sqlglot reads as a column that is none: a PIVOT's, a named window's."""
    node = column.parent
    while node is not None:
        if isinstance(node, exp.Pivot):
            return True
        if isinstance(node, exp.Query):
            return bool(node.args.get("pivots")) or any(
                bool(t.args.get("pivots")) for t in node.find_all(exp.Table)
            )
        node = node.parent
    return False


def _where(sources: list[_Source]) -> str:
    labels = list(dict.fromkeys(s.describe() for s in sources if s.alias))
    if not labels:
        return "the query's tables"
    if len(labels) == 1:
        return labels[0]
    return "any of " + ", ".join(labels)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
