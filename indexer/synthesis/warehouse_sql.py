"""A plan's SQL in its database's own dialect: tables as the engine names them, nested fields
reached as the engine reaches them, a sharded family through its wildcard.

`render_sql(plan, db)` is the SQL of a synthetic pair. On SQLite (Spider-style databases) it is
`query_plans.plan_sql`, unchanged. Elsewhere the plan's tree is built with a `WarehouseScope`:

- a table is `schemagraph.dialects.table_sql` (`` `project.dataset.table` ``, `DB.SCHEMA.TABLE`),
  identifiers quoted as the dialect needs (`quote_part`: Snowflake quotes a name with lower
  case letters);
- in BigQuery, a field of non-repeated RECORDs is read by its path (`totals.pageviews`); a field
  below a repeated (ARRAY) column is read through one `UNNEST(...) AS alias` per repeated column
  on its path, shared by every field of the query that needs it (`UNNEST(hits) AS hits,
  UNNEST(hits.product) AS product`, then `product.productRevenue`);
- a date span (`query_plans.Period`) is `col BETWEEN 'start' AND 'end'` (a timestamp cast to
  DATE first), and on a table of a BigQuery family (`ga_sessions_20170801`: a name ending in
  eight digits) the shards of a span are `` FROM `project.dataset.ga_sessions_*` `` with
  `_TABLE_SUFFIX BETWEEN '20170801' AND '20170831'`.

The text is sqlglot's rendering in the dialect, so it parses back in that dialect.
"""

from __future__ import annotations

import re

import sqlglot
from sqlglot import exp

from indexer.synthesis.profiles import TableInfo
from indexer.synthesis.query_plans import Period, Plan, Ref, Scope, plan_sql, plan_tree
from indexer.synthesis.warehouse_roles import is_warehouse
from schemagraph.dialects import (
    dialect_of,
    family_sql,
    name_parts,
    quote_part,
    repeated_route,
    table_sql,
)
from schemagraph.model import Database, Table, fold

SUFFIX = "_TABLE_SUFFIX"
_SHARD = re.compile(r"^(?P<stem>.*[A-Za-z_])(?P<suffix>(?:19|20)\d{6})$")


def shard_suffix(db: Database, table: str) -> tuple[str, str] | None:
    """(stem, YYYYMMDD suffix) when `table` is a shard of a BigQuery date family that the SQL
    can read through its wildcard, else None."""
    if dialect_of(db) != "bigquery":
        return None
    match = _SHARD.match(name_parts(db.table(table))[-1])
    return (match["stem"], match["suffix"]) if match else None


def render_sql(plan: Plan, db: Database) -> str:
    """The plan's SQL as `db`'s engine writes it (see the module docstring)."""
    dialect = dialect_of(db)
    if not is_warehouse(db):
        return plan_sql(plan)
    return render_tree(plan, db).sql(dialect=dialect)


def render_tree(plan: Plan, db: Database) -> exp.Select:
    """The plan's sqlglot tree in `db`'s names (SQLite's where `db` is SQLite)."""
    if not is_warehouse(db):
        return plan_tree(plan)
    family = any(isinstance(c, Period) and c.ref is None for c in plan.where)
    return plan_tree(plan, WarehouseScope(db, plan.tables, plan.tables[0].name if family else ""))


class WarehouseScope(Scope):
    """One SELECT's tables and nested-field joins in a warehouse dialect. `family`: the table
    read through its family's wildcard (the plan filters its shards), or ""."""

    def __init__(self, db: Database, tables: tuple[TableInfo, ...], family: str = "") -> None:
        super().__init__(tables)
        self.db = db
        self.dialect = dialect_of(db)
        self.family = family
        self.unnested: dict[tuple[str, str], str] = {}  # (table alias, path) -> UNNEST alias
        self.joins: list[str] = []

    def inner(self, tables: tuple[TableInfo, ...]) -> Scope:
        return WarehouseScope(self.db, tables)

    def _quoted(self, *parts: str) -> str:
        return ".".join(quote_part(p, self.dialect) for p in parts)

    def _expr(self, text: str) -> exp.Expr:
        return sqlglot.parse_one(text, read=self.dialect)

    def table(self, table: TableInfo) -> exp.Table:
        source = self.db.table(table.name)
        shard = shard_suffix(self.db, table.name) if fold(self.family) == fold(table.name) else None
        text = family_sql(self.db, source, shard[1]) if shard else table_sql(self.db, source)
        node = exp.to_table(text, dialect=self.dialect)
        if self.aliased:
            node.set("alias", exp.TableAlias(this=exp.to_identifier(self._alias(table.name))))
        return node

    def _alias(self, table: str) -> str:
        return self.alias[fold(table)]

    def join_column(self, alias: str, column: str) -> exp.Expr:
        return self._expr(self._quoted(alias, column) if self.aliased else self._quoted(column))

    def column(self, ref: Ref) -> exp.Expr:
        table = self.db.table(ref.table.name)
        name = table.column(ref.column.name).name
        owner = self._alias(ref.table.name) if self.aliased else ""
        route = repeated_route(table, name) if self.dialect == "bigquery" else ()
        if not route:
            parts = name.split(".") if self.dialect == "bigquery" else [name]
            return self._expr(self._quoted(*([owner] if owner else []), *parts))
        alias = self._unnest(table, owner, route)
        return self._expr(self._quoted(alias, *name[len(route[-1]) + 1 :].split(".")))

    def _unnest(self, table: Table, owner: str, route: tuple[str, ...]) -> str:
        """The UNNEST aliases of `route` (added once per query), the innermost one returned."""
        alias, bound = "", ""
        for path in route:
            key = (owner, fold(path))
            if key not in self.unnested:
                inner = path[len(bound) + 1 :] if bound else path
                if alias:
                    source = self._quoted(alias, *inner.split("."))
                else:
                    source = self._quoted(*([owner] if owner else []), *path.split("."))
                new = self._free_alias(path.rsplit(".", 1)[-1])
                self.unnested[key] = new
                self.joins.append(f"UNNEST({source}) AS {quote_part(new, self.dialect)}")
            alias, bound = self.unnested[key], path
        return alias

    def _free_alias(self, base: str) -> str:
        taken = {fold(a) for a in self.unnested.values()} | {fold(a) for a in self.alias.values()}
        alias, n = base, 2
        while fold(alias) in taken:
            alias, n = f"{base}{n}", n + 1
        return alias

    def extra_joins(self) -> list[exp.Join]:
        if not self.joins:
            return []
        tree = sqlglot.parse_one("SELECT 1 FROM t, " + ", ".join(self.joins), read=self.dialect)
        return list(tree.args.get("joins") or [])

    def period(self, condition: Period) -> exp.Expr:
        low, high = exp.Literal.string(condition.start), exp.Literal.string(condition.end)
        if condition.ref is None:
            return exp.Between(this=exp.column(SUFFIX), low=low, high=high)
        column = self.column(condition.ref)
        if not re.match(r"^DATE$", condition.ref.column.type.strip(), re.IGNORECASE):
            column = exp.Cast(this=column, to=exp.DataType.build("DATE"))
        return exp.Between(this=column, low=low, high=high)
