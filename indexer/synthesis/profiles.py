"""What each column of a traversal is good for in a question, read from the schema and samples.

The template synthesizer asks: which column names a row (a label to project), which columns
are measures (AVG, SUM), which can be compared or sorted (numbers, dates, years), which are
categories worth grouping by or filtering on, which are keys (joined on, never averaged), which
are yes/no flags. Names decide most of it (`StuID` is a key, `Song_release_year` a year,
`Has_Pet`-style tables are links); sampled values decide the rest (a `text` column holding "3",
"12" is a number; a text column whose values repeat is a category) and supply the literal values
questions mention verbatim.

`profile_traversal` also orders the traversal's tables into a join tree along its foreign keys
(each table after the first linked to an earlier one), which is what the SQL joins follow.
"""

from __future__ import annotations

import random
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache

from indexer.synthesis.warehouse_roles import (
    boolean,
    described_values,
    field_words,
    is_warehouse,
    numeric_category,
    once,
    periodic,
    plain_words,
    point_in_time,
    unsharded,
    usable_columns,
)
from schemagraph.documentation import phrase
from schemagraph.humanize import entity, humanize
from schemagraph.model import Column, Database, ForeignKey, Table, fold
from schemagraph.samples import DatabaseSample, TableSample
from schemagraph.traversals import Traversal

_NUMERIC_TYPE = re.compile(r"int|real|floa|doub|num|dec|money|bool", re.IGNORECASE)
_TEMPORAL_TYPE = re.compile(r"date|time", re.IGNORECASE)
_NUMBER_TEXT = re.compile(r"^\s*-?\d+(\.\d+)?\s*$")
_CODE_WORDS = {
    "phone",
    "zip",
    "postcode",
    "postal",
    "ssn",
    "fax",
    "email",
    "mobile",
    "cell",
    "code",
}
_GENERIC_REST = {"number", "count", "ID", "IDs", "no", "code number"}
"""Column words too vague once the table's name is dropped: `FlightNo` stays "flight number"."""
_TEMPORAL_WORDS = {"date", "time", "datetime", "timestamp", "day", "dob"}
_CATEGORY_WORDS = {
    "type",
    "category",
    "country",
    "city",
    "state",
    "gender",
    "sex",
    "status",
    "major",
    "nationality",
    "position",
    "role",
    "theme",
    "location",
    "continent",
    "language",
    "genre",
    "kind",
    "class",
    "level",
    "rank",
    "region",
    "district",
    "county",
    "party",
    "citizenship",
    "color",
    "colour",
    "brand",
    "format",
    "method",
    "source",
    "destination",
    "result",
    "grade",
    "hometown",
    "town",
    "department",
    "team",
    "league",
    "division",
    "model",
    "make",
    "maker",
    "code",
}
_LABEL_WORDS = ("name", "title")
_ORDINAL_WORDS = frozenset({"year", "founded", "built", "established", "opened", "season"})
_MAX_VALUE_CHARS = 40


@dataclass(frozen=True)
class ColumnInfo:
    """One column and its roles. `words` is its humanized name; `short` drops the table's own
    words ("concert_Name" of `concert` → "name"); `values` are clean sampled text values and
    `numbers` sampled numeric values, both in sample order."""

    name: str
    words: str
    short: str
    type: str
    key: bool
    numeric: bool
    measure: bool
    ordinal: bool
    temporal: bool
    categorical: bool
    label: bool
    flag: bool
    values: tuple[str, ...] = ()
    numbers: tuple[float, ...] = ()

    @property
    def comparable(self) -> bool:
        """Can be compared with < > and BETWEEN, sorted, and taken MIN/MAX of: measures, years
        and dates (not codes, keys, flags or numbered categories such as a gender 0/1)."""
        return self.measure or ((self.ordinal or self.temporal) and not self.key)

    @property
    def text(self) -> bool:
        return not self.numeric and not self.temporal and not self.flag


@dataclass(frozen=True)
class TableInfo:
    """One table of a traversal: its entity nouns, columns with roles, best label column,
    whether it only links other tables (`Has_Pet`), its row count when sampled, and its SQL
    alias in join queries."""

    name: str
    singular: str
    plural: str
    columns: tuple[ColumnInfo, ...]
    primary_key: tuple[str, ...]
    bridge: bool
    rows: int | None
    alias: str

    @property
    def label(self) -> ColumnInfo | None:
        """The column that names a row: a name or title, else the first descriptive text."""
        labels = [c for c in self.columns if c.label and not c.key]
        if labels:
            return min(labels, key=lambda c: (c.short != "name", c.short != "first name"))
        texts = [c for c in self.columns if c.text and not c.key]
        return texts[0] if texts else None

    @property
    def labels(self) -> tuple[ColumnInfo, ...]:
        """The columns that together name a row: first and last name when both exist."""
        first = next((c for c in self.columns if c.short == "first name" and not c.key), None)
        last = next((c for c in self.columns if c.short == "last name" and not c.key), None)
        if first is not None and last is not None:
            return (first, last)
        label = self.label
        return (label,) if label is not None else ()

    def column(self, name: str) -> ColumnInfo:
        key = fold(name)
        for col in self.columns:
            if fold(col.name) == key:
                return col
        raise KeyError(f"table {self.name!r} has no column {name!r}")

    @property
    def describable(self) -> tuple[ColumnInfo, ...]:
        """Columns worth showing: not keys, labels first."""
        cols = [c for c in self.columns if not c.key]
        return tuple(sorted(cols, key=lambda c: (not c.label, not c.text)))

    @property
    def single_key(self) -> str | None:
        return self.primary_key[0] if len(self.primary_key) == 1 else None


@dataclass(frozen=True)
class Link:
    """A join edge: `child.child_columns` = `parent.parent_columns` (the foreign key's
    direction: the child references the parent)."""

    child: str
    child_columns: tuple[str, ...]
    parent: str
    parent_columns: tuple[str, ...]

    def other(self, table: str) -> str:
        return self.parent if fold(table) == fold(self.child) else self.child

    def columns_of(self, table: str) -> tuple[str, ...]:
        return self.child_columns if fold(table) == fold(self.child) else self.parent_columns


@dataclass(frozen=True)
class TraversalInfo:
    """A traversal's tables (in traversal order, aliased T1, T2, ...) and the links that join
    each table after the first to an earlier one."""

    db_id: str
    tables: tuple[TableInfo, ...]
    links: tuple[Link, ...]

    def table(self, name: str) -> TableInfo:
        key = fold(name)
        for tab in self.tables:
            if fold(tab.name) == key:
                return tab
        raise KeyError(f"traversal has no table {name!r}")

    def links_of(self, name: str) -> tuple[Link, ...]:
        key = fold(name)
        return tuple(link for link in self.links if key in (fold(link.child), fold(link.parent)))

    def is_leaf(self, name: str) -> bool:
        return len(self.links_of(name)) <= 1

    @property
    def entities(self) -> tuple[TableInfo, ...]:
        """Tables whose rows are things people ask about (not link tables), or all of them."""
        found = tuple(t for t in self.tables if not t.bridge)
        return found or self.tables


class _ProfileCache:
    """The last `size` profiles, keyed by the identity of the database and sample objects (kept
    alive by the cache, so an id cannot be reused while its entry exists). ICRL asks for the
    same traversal's profile at every attempt and feedback; profiling is a fifth of its work."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.entries: OrderedDict[tuple[object, ...], tuple[object, object, TraversalInfo]] = (
            OrderedDict()
        )
        self.lock = threading.Lock()

    def get(
        self, db: Database, traversal: Traversal, sample: DatabaseSample | None, seed: int
    ) -> TraversalInfo:
        key = (id(db), id(sample), traversal.db_id, traversal.tables, seed)
        with self.lock:
            found = self.entries.get(key)
            if found is not None and found[0] is db and found[1] is sample:
                self.entries.move_to_end(key)
                return found[2]
        info = _profile(db, traversal, sample, seed)
        with self.lock:
            self.entries[key] = (db, sample, info)
            while len(self.entries) > self.size:
                self.entries.popitem(last=False)
        return info


_CACHE = _ProfileCache(256)


def profile_traversal(
    db: Database, traversal: Traversal, sample: DatabaseSample | None, seed: int = 0
) -> TraversalInfo:
    """Profiles of the traversal's tables and the join tree between them. When two tables are
    linked by several foreign keys (flights → airports by source and by destination), one is
    chosen with `seed`. Recent profiles are cached (thread-safe)."""
    return _CACHE.get(db, traversal, sample, seed)


def schema_table_info(db: Database, table: str) -> TableInfo:
    """`table` of `db` profiled from its schema alone (no sampled values): its nouns and its
    columns' words and roles, as the templates name them."""
    return _schema_table_info(db, fold(table))


@lru_cache(maxsize=4096)
def _schema_table_info(db: Database, table: str) -> TableInfo:
    warehouse = is_warehouse(db)
    return _table_info(db.table(table), None, _foreign_key_columns(db), "", False, warehouse)


def _profile(
    db: Database, traversal: Traversal, sample: DatabaseSample | None, seed: int
) -> TraversalInfo:
    tables = [db.table(name) for name in traversal.tables]
    multi = len(tables) > 1
    fk_columns = _foreign_key_columns(db)
    warehouse = is_warehouse(db)
    infos = tuple(
        _table_info(
            t,
            sample.table(t.name) if sample else None,
            fk_columns,
            f"T{i + 1}",
            multi,
            warehouse,
        )
        for i, t in enumerate(tables)
    )
    rng = random.Random(seed)
    links: list[Link] = []
    for i, table in enumerate(tables[1:], start=1):
        options = _links_between(table, tables[:i])
        if not options:
            raise ValueError(
                f"traversal {traversal.tables} of {db.id!r}: table {table.name!r} has no "
                "foreign key to an earlier table"
            )
        links.append(options[rng.randrange(len(options))])
    return TraversalInfo(db.id, infos, tuple(links))


def _links_between(table: Table, earlier: list[Table]) -> list[Link]:
    names = {fold(t.name): t for t in earlier}
    found = [
        _merged(table, names[fold(fks[0].ref_table)], fks)
        for fks in _by_parent(table.foreign_keys, names)
    ]
    for other in earlier:
        own = {fold(table.name): table}
        found.extend(_merged(other, table, fks) for fks in _by_parent(other.foreign_keys, own))
    return [link for group in found for link in group]


def _by_parent(
    foreign_keys: tuple[ForeignKey, ...], parents: dict[str, Table]
) -> list[list[ForeignKey]]:
    groups: dict[str, list[ForeignKey]] = {}
    for fk in foreign_keys:
        if fold(fk.ref_table) in parents and fold(fk.ref_table) != fold(fk.table):
            groups.setdefault(fold(fk.ref_table), []).append(fk)
    return list(groups.values())


def _merged(child: Table, parent: Table, fks: list[ForeignKey]) -> list[Link]:
    """Foreign keys from `child` to `parent`: one link each (flights → airports by source and
    by destination both reference `AirportCode`), except that keys onto distinct parent
    columns are one composite key written as several — Spider's tables.json splits
    `teaches(course_id, sec_id, semester, year) → section` so, and joining on one of its
    columns alone would multiply rows."""
    refs = [fold(c) for fk in fks for c in fk.ref_columns]
    if len(fks) > 1 and len(set(refs)) == len(refs):
        return [
            Link(
                child.name,
                tuple(c for fk in fks for c in fk.columns),
                parent.name,
                tuple(c for fk in fks for c in fk.ref_columns),
            )
        ]
    return [_link(fk) for fk in fks]


def _link(fk: ForeignKey) -> Link:
    return Link(fk.table, fk.columns, fk.ref_table, fk.ref_columns)


def _foreign_key_columns(db: Database) -> set[tuple[str, str]]:
    cols: set[tuple[str, str]] = set()
    for fk in db.foreign_keys:
        cols.update((fold(fk.table), fold(c)) for c in fk.columns)
        cols.update((fold(fk.ref_table), fold(c)) for c in fk.ref_columns)
    return cols


def _table_info(
    table: Table,
    sample: TableSample | None,
    fk_columns: set[tuple[str, str]],
    alias: str,
    multi: bool,
    warehouse: bool = False,
) -> TableInfo:
    """`warehouse`: a database of another engine than SQLite, whose columns' roles
    `indexer.synthesis.warehouse_roles` corrects."""
    # a warehouse table is named with its dataset (`stackoverflow__badges` for `badges`)
    singular, plural = entity(unsharded(table.qualified_name) if warehouse else table.name)
    if warehouse:  # `geo_us_census_places__places_ohio`: "census places ohio"
        singular, plural = once(singular), once(plural)
    own_words = _own_words(table.name)
    read = usable_columns(table) if warehouse else table.columns
    columns = tuple(
        _column_info(table, col, sample, fk_columns, own_words, warehouse) for col in read
    )
    bridge = bool(columns) and all(c.key or c.temporal for c in columns)
    bridge = bridge and any(c.key for c in columns) and len(columns) > 1
    return TableInfo(
        name=table.name,
        singular=singular,
        plural=plural,
        columns=columns,
        primary_key=table.primary_key,
        bridge=bridge,
        rows=sample.row_count if sample else None,
        alias=alias if multi else "",
    )


def _own_words(table_name: str) -> tuple[str, ...]:
    """Word forms of the table's name that a column name may start with."""
    singular, _ = entity(table_name)
    full = humanize(table_name)
    return tuple(dict.fromkeys((full, singular, singular.split(" ")[-1])))


def _column_info(
    table: Table,
    column: Column,
    sample: TableSample | None,
    fk_columns: set[tuple[str, str]],
    own_words: tuple[str, ...],
    warehouse: bool = False,
) -> ColumnInfo:
    """A column's roles from its name (humanized) and type; its documented phrase, when it has
    one, is the words questions use for it ("total bilirubin", not "T BIL")."""
    name, type_, primary = column.name, column.type, column.primary_key
    named = field_words(name) if warehouse else humanize(name)
    words = phrase(column.description) or named
    if warehouse and not plain_words(words):  # a comment that repeats the name
        words = named
    parts = [w.lower() for w in named.split(" ")]
    last = parts[-1]
    id_like = last in ("id", "ids") or fold(name) in ("id", "uid")
    key = primary or id_like or (fold(table.name), fold(name)) in fk_columns
    values, numbers = _sampled(name, sample)
    numeric = bool(_NUMERIC_TYPE.search(type_)) or _numeric_sample(name, sample)
    flag = parts[0] in ("is", "has") or fold(name).endswith(("_yn", "_flag")) or "bool" in type_
    temporal = not numeric and (
        bool(_TEMPORAL_TYPE.search(type_)) or any(p in _TEMPORAL_WORDS for p in parts)
    )
    ordinal = (
        bool(_ORDINAL_WORDS & set(parts))
        or (numeric and last in ("rank", "ranking", "position"))
        or (not _NUMERIC_TYPE.search(type_) and _year_like(numbers))
    )
    code_like = bool(_CODE_WORDS & set(parts)) or (last == "number" and parts[0] != "number")
    categorical = not key and not flag and _categorical(parts, values, sample, numeric)
    named_category = bool(_CATEGORY_WORDS & set(parts))
    measure = numeric and not (key or ordinal or code_like or flag or named_category)
    label = (last in _LABEL_WORDS or "name" in parts) and not numeric
    if warehouse:
        if not values and sample is None and not numeric:
            values = described_values(table, column)
        moment = point_in_time(parts)
        flag = flag or boolean(type_)
        numeric = numeric and not boolean(type_)
        temporal = temporal and (periodic(type_) or not numeric)
        # a year is a name's last word (`model_year`), not any word (`house_year_ago_city`)
        ordinal = ordinal and not moment and (last in _ORDINAL_WORDS or not numeric)
        if numeric and categorical:
            categorical = numeric_category(parts, type_, frozenset(_CATEGORY_WORDS))
        categorical = (categorical or (len(values) >= 2 and not numeric)) and not flag
        measure = numeric and not (key or ordinal or code_like or flag or categorical or moment)
    return ColumnInfo(
        name=name,
        words=words,
        short=_short(words, own_words),
        type=type_,
        key=key,
        numeric=numeric and not flag,
        measure=measure,
        ordinal=ordinal,
        temporal=temporal,
        categorical=categorical,
        label=label,
        flag=flag,
        values=values,
        numbers=numbers,
    )


def _short(words: str, own_words: tuple[str, ...]) -> str:
    low = words.lower()
    for own in own_words:
        prefix = own.lower() + " "
        if low.startswith(prefix) and len(low) > len(prefix):
            rest = words[len(prefix) :]
            if rest not in _GENERIC_REST:
                return rest
    return words


def _sampled(name: str, sample: TableSample | None) -> tuple[tuple[str, ...], tuple[float, ...]]:
    if sample is None:
        return (), ()
    texts = tuple(v for v in sample.texts(name) if _clean_value(v))
    numbers = tuple(n for n in map(_as_number, sample.column_values(name)) if n is not None)
    return texts, numbers


def _clean_value(value: str) -> bool:
    stripped = value.strip()
    return (
        0 < len(stripped) <= _MAX_VALUE_CHARS
        and not value.endswith("…")
        and "\n" not in value
        and "\r" not in value
    )


def _as_number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str) and _NUMBER_TEXT.match(value):
        return float(value)
    return None


def _year_like(numbers: tuple[float, ...]) -> bool:
    """Sampled whole numbers between 1800 and 2100 in a text column are years ("2009")."""
    return len(numbers) >= 2 and all(n.is_integer() and 1800 <= n <= 2100 for n in numbers)


def _numeric_sample(name: str, sample: TableSample | None) -> bool:
    """A text column whose sampled values are all numbers ("3", "12.5") is numeric."""
    if sample is None:
        return False
    values = [v for v in sample.column_values(name) if v is not None]
    texts = sample.texts(name)
    if not values and not texts:
        return False
    return all(_as_number(v) is not None for v in [*values, *texts[:20]])


def _categorical(
    parts: list[str], values: tuple[str, ...], sample: TableSample | None, numeric: bool
) -> bool:
    """Values repeat across rows (by the sample), or the name says category."""
    named = bool(_CATEGORY_WORDS & set(parts)) and parts[-1] not in _LABEL_WORDS
    if numeric:
        return named and "code" not in parts
    if sample is None or not values:
        return named
    if len(values) >= sample.row_count:
        return False  # every sampled row has its own value: a name, not a category
    repeats = sample.row_count >= 2 * len(values) or len(values) <= 12
    return repeats or (named and len(values) < 50)
