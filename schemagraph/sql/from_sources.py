"""What each name of a FROM clause stands for, as `check_sql` resolves columns through it.

A `Source` answers whether a column path read through it exists (`Hit`: found, missing, unsure,
or a path into a repeated column read without UNNEST): a catalog table or wildcard family
(`Tables`), one element of a repeated column (`Element`, BigQuery `UNNEST(hits) AS h`), a
Snowflake `FLATTEN`, a CTE or subquery (`Derived`: its output names, each with the column it
selects), or something whose columns cannot be enumerated (`Opaque`: a table function, an
UNNEST of an expression, a table that did not resolve), which never rejects a name.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from schemagraph.dialects import is_repeated, parent_paths
from schemagraph.model import Column, Table, fold
from schemagraph.sql.table_match import Merged, TableIndex

#: the columns of a Snowflake FLATTEN
FLATTEN_COLUMNS = ("SEQ", "KEY", "PATH", "INDEX", "VALUE", "THIS")
#: pseudo-columns every table of a dialect has, folded
PSEUDO_COLUMNS: Mapping[str, frozenset[str]] = {
    "bigquery": frozenset({"_partitiontime", "_partitiondate", "_file_name"}),
    "sqlite": frozenset({"rowid", "oid", "_rowid_"}),
}
WILDCARD_SUFFIX = "_table_suffix"
#: column types whose fields or keys the catalog may not list (read with `.` paths)
OPEN_TYPES = ("STRUCT", "RECORD", "JSON", "VARIANT", "OBJECT", "ARRAY", "MAP", "ROW")


def open_type(kind: str) -> bool:
    """Whether a column of type `kind` may have fields the catalog does not list: a STRUCT,
    JSON, VARIANT... or an array of them (not `ARRAY<STRING>`)."""
    kind = kind.upper().replace(" ", "")
    while kind.startswith("ARRAY<"):
        kind = kind[len("ARRAY<") :]
    return kind.startswith(OPEN_TYPES)


class State(enum.Enum):
    """What a source says of a path: there, not there, cannot tell, or there but inside a
    repeated column that was not unnested."""

    FOUND = "found"
    MISSING = "missing"
    UNSURE = "unsure"
    NOT_UNNESTED = "not_unnested"


@dataclass(frozen=True)
class Hit:
    """A source's answer for a path: its state, and the catalog column (and table) it found."""

    state: State
    column: Column | None = None
    table: Table | None = None
    repeated: str = ""  # NOT_UNNESTED: the repeated column the path goes through


FOUND = Hit(State.FOUND)
MISSING = Hit(State.MISSING)
UNSURE = Hit(State.UNSURE)


class Source:
    """What one name of a FROM clause stands for; `alias`: the name it has there."""

    alias = ""

    def describe(self) -> str:
        """How a message names it."""
        return f"`{self.alias}`"

    def find(self, path: tuple[str, ...]) -> Hit:
        """`path` read through this source (`alias.a.b`: path (a, b))."""
        return UNSURE

    def find_bare(self, path: tuple[str, ...]) -> Hit:
        """`path` written without a qualifier, if it can belong to this source."""
        return self.find(path)

    def element(self, path: tuple[str, ...]) -> Source | None:
        """What `UNNEST(alias.path)` reads, when the path is a repeated column of the catalog."""
        return None

    def names(self) -> list[str]:
        """The names this source offers (for suggestions), as they are written."""
        return []

    def star(self) -> dict[str, tuple[str, Origin | None]] | None:
        """The columns `SELECT *` gives (folded name -> name, origin); None: unknown."""
        return None


Origin = tuple[Source, tuple[str, ...]]


class Opaque(Source):
    """A source whose columns cannot be enumerated (a table function, an UNNEST of an
    expression, a table that did not resolve); `closed`: only `names` are its columns."""

    def __init__(self, alias: str, names: Iterable[str] = (), closed: bool = False) -> None:
        self.alias = alias
        self._names = {fold(n): n for n in names}
        self.closed = closed

    def find(self, path: tuple[str, ...]) -> Hit:
        if fold(path[0]) in self._names:
            return FOUND if len(path) == 1 else UNSURE
        return MISSING if self.closed else UNSURE

    def find_bare(self, path: tuple[str, ...]) -> Hit:
        return self.find(path)

    def names(self) -> list[str]:
        return list(self._names.values())

    def star(self) -> dict[str, tuple[str, Origin | None]] | None:
        if not self.closed:
            return None
        return {k: (v, None) for k, v in self._names.items()}


class Tables(Source):
    """A catalog table, or a wildcard family of them (`tables` in name order)."""

    def __init__(
        self,
        index: TableIndex,
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
        self._merged: Merged | None = None
        self.pseudo = PSEUDO_COLUMNS.get(dialect, frozenset()) | (
            {WILDCARD_SUFFIX} if wildcard else set()
        )

    def describe(self) -> str:
        return f"`{self.written}`"

    def find(self, path: tuple[str, ...]) -> Hit:
        return self.lookup(path, floor="")

    def lookup(self, path: tuple[str, ...], floor: str) -> Hit:
        """`path` (the full path of a column) in the table, or in any member of the family;
        repeated columns at or above `floor` (a path, folded) are unnested already."""
        if self._merged is None:
            self._merged = self.index.merged(self.tables)
        columns, parents = self._merged
        key = fold(".".join(path))
        held = columns.get(key)
        if held is not None:
            column, table = held
            own = self.index.columns(table)
            for parent in parent_paths(column.name):
                outer = own.get(fold(parent))
                if outer is not None and is_repeated(outer) and len(parent) > len(floor):
                    return Hit(State.NOT_UNNESTED, column, table, outer.name)
            return Hit(State.FOUND, column, table)
        if len(path) == 1 and key in self.pseudo:
            return FOUND
        for cut in range(len(path) - 1, 0, -1):
            head = fold(".".join(path[:cut]))
            above = columns.get(head)
            if above is None:
                continue
            kind = above[0].type
            if head in parents or (kind and not open_type(kind)):
                return MISSING  # its fields are listed, or it has none
            return UNSURE
        return MISSING

    def element(self, path: tuple[str, ...]) -> Source | None:
        return self.element_at(path, floor="")

    def element_at(self, path: tuple[str, ...], floor: str) -> Source | None:
        hit = self.lookup(path, floor)
        if hit.state is State.FOUND and hit.column is not None and is_repeated(hit.column):
            return Element(self, hit.column.name, "")
        return None

    def names(self) -> list[str]:
        return [c.name for c in self.tables[0].columns]

    def star(self) -> dict[str, tuple[str, Origin | None]] | None:
        return {
            fold(c.name): (c.name, (self, (c.name,)))
            for c in self.tables[0].columns
            if "." not in c.name
        }


class Element(Source):
    """One element of a repeated column of a catalog table (BigQuery `UNNEST(hits) AS h`):
    `h.page.pagePath` is the column `hits.page.pagePath`."""

    def __init__(self, base: Tables, path: str, alias: str) -> None:
        self.base = base
        self.path = path
        self.alias = alias
        self.parts = tuple(path.split("."))

    def describe(self) -> str:
        return f"`{self.alias}` (an element of `{self.path}`)"

    def find(self, path: tuple[str, ...]) -> Hit:
        if not path:
            return FOUND
        return self.base.lookup(self.parts + path, floor=fold(self.path))

    def element(self, path: tuple[str, ...]) -> Source | None:
        return self.base.element_at(self.parts + path, floor=fold(self.path))

    def names(self) -> list[str]:
        prefix = self.path + "."
        return [
            c.name[len(prefix) :]
            for c in self.base.tables[0].columns
            if fold(c.name).startswith(fold(prefix))
        ]

    def star(self) -> dict[str, tuple[str, Origin | None]] | None:
        return {fold(n): (n, (self, (n,))) for n in self.names() if "." not in n} or None


class Flatten(Source):
    """A Snowflake FLATTEN: its six columns; `:` paths into them are not checked."""

    def __init__(self, alias: str) -> None:
        self.alias = alias

    def describe(self) -> str:
        return f"`{self.alias}` (FLATTEN)"

    def find(self, path: tuple[str, ...]) -> Hit:
        if path[0].upper() in FLATTEN_COLUMNS:
            return FOUND
        return MISSING

    def names(self) -> list[str]:
        return [c.lower() for c in FLATTEN_COLUMNS]

    def star(self) -> dict[str, tuple[str, Origin | None]] | None:
        return {c.lower(): (c, None) for c in FLATTEN_COLUMNS}


class Derived(Source):
    """A CTE or a subquery: its output names, each with the column it selects when it selects
    one (so that `cte.hits` can be unnested and `cte.totals.pageviews` followed)."""

    def __init__(self, alias: str, columns: dict[str, tuple[str, Origin | None]] | None) -> None:
        self.alias = alias
        self.columns = columns

    def find(self, path: tuple[str, ...]) -> Hit:
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

    def element(self, path: tuple[str, ...]) -> Source | None:
        if self.columns is None:
            return None
        held = self.columns.get(fold(path[0]))
        if held is None or held[1] is None:
            return None
        source, inner = held[1]
        return source.element(inner + path[1:])

    def names(self) -> list[str]:
        return [name for name, _ in (self.columns or {}).values()]

    def star(self) -> dict[str, tuple[str, Origin | None]] | None:
        if self.columns is None:
            return None
        return {k: (name, (self, (name,))) for k, (name, _) in self.columns.items()}


class WithNames(Source):
    """A source with a few more column names (an UNNEST's `WITH OFFSET AS off`)."""

    def __init__(self, inner: Source, names: list[str]) -> None:
        self.inner = inner
        self.alias = inner.alias
        self.extra = {fold(n) for n in names}

    def find(self, path: tuple[str, ...]) -> Hit:
        return self.inner.find(path)

    def find_bare(self, path: tuple[str, ...]) -> Hit:
        if len(path) == 1 and fold(path[0]) in self.extra:
            return FOUND
        return self.inner.find_bare(path)

    def element(self, path: tuple[str, ...]) -> Source | None:
        return self.inner.element(path)

    def names(self) -> list[str]:
        return self.inner.names()

    def star(self) -> dict[str, tuple[str, Origin | None]] | None:
        return self.inner.star()
