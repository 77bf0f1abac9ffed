"""Tables as their engine names them: what an agent reads, while schemarag's ids (`dataset__table`)
stay inside (`schemagraph.dialects` writes the names; these read them back and rename answers)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from schemagraph import Catalog, Database
from schemagraph.dialects import name_parts, sql_dialect, table_sql
from schemagraph.model import Table, fold

if TYPE_CHECKING:
    from schemarag.api.served import Loaded


def shown_name(db: Database, name: str, *, quoted: bool = True) -> str:
    """Table `name` of `db` as its engine names it (quoted for SQL, or its dotted parts)."""
    table: Table = db.table(name)
    if not table.engine_name:
        return table.name
    return table_sql(db, table) if quoted else ".".join(name_parts(table))


def read_name(db: Database, name: str) -> str:
    """A table `check_sql` resolved (an id, or a wildcard over ids: `web__ga_sessions_*`) as
    its engine names it (`project.web.ga_sessions_*`)."""
    if db.has_table(name):
        return shown_name(db, name, quoted=False)
    stem = fold(name.rstrip("*"))
    member = next((t for t in db.tables if fold(t.name).startswith(stem)), None)
    if not name.endswith("*") or member is None or not member.engine_name:
        return name
    parts = name_parts(member)
    kept = len(parts[-1]) - (len(member.name) - len(stem))
    return ".".join((*parts[:-1], parts[-1][:kept] + "*"))


def table_id(db: Database, name: str) -> str:
    """The id of the table of `db` that `name` names: its id, or its engine name however
    written (`project.dataset.table`, backquoted or not; `DB.SCHEMA.TABLE`; its last part)."""
    if db.has_table(name):
        return name
    wanted = [fold(p) for p in name.strip().strip("`").replace('"', "").split(".")]
    for table in db.tables:
        parts = [fold(p) for p in name_parts(table)]
        if parts[-len(wanted) :] == wanted:
            return table.name
    return name


def renamed(named: dict[str, Any], real: Callable[[str], str]) -> dict[str, Any]:
    """`named` (a `find_tables` database) with its tables, bridges, families and chosen tables
    named by `real`. A family's wildcard (BigQuery) and first member follow from its last."""
    for key in ("tables", "bridges"):
        for table in named.get(key, ()):
            table["name"] = real(table["name"])
            if family := table.get("family"):
                low, high = family["range"]
                last = real(family["last"])
                first = real(family["first"])
                if first == family["first"] and last != family["last"] and last.endswith(high):
                    first = last[: len(last) - len(high)] + low
                wildcard = ""
                if named["dialect"] == "bigquery" and high and last.endswith(high):
                    wildcard = f"`{last[: len(last) - len(high)]}*`"
                table["family"] = {
                    **family,
                    "pattern": family["pattern"].rsplit("__", 1)[-1],
                    "first": first,
                    "last": last,
                    **({"wildcard": wildcard} if wildcard else {}),
                }
    named["chosen_tables"] = [real(t) for t in named["chosen_tables"]]
    return named


class EngineNames:
    """`find_tables` databases with their dialect and, in a warehouse, their tables named as
    the engine names them (the ids stay inside schemarag): from the catalog once it has loaded,
    from the served build (its manifest and table documents) until then."""

    def __init__(self) -> None:
        #: engine names of the table documents, per loaded build: folded db -> table -> name
        self._entry_names: dict[str, dict[str, dict[str, str]]] = {}

    def named(
        self, item: dict[str, Any], loaded: Loaded, catalog: Catalog | None
    ) -> dict[str, Any]:
        db_id = item["db_id"]
        if catalog is not None:
            if db_id not in catalog:
                return item
            db = catalog.database(db_id)
            dialect = sql_dialect(db)
            if all(not t.engine_name for t in db.tables):
                return {"db_id": db_id, "dialect": dialect, **item}

            def real(name: str) -> str:
                return shown_name(db, name, quoted=False) if db.has_table(name) else name

        else:
            known = loaded.manifest.dialects if loaded.manifest is not None else {}
            if db_id not in known:
                return item
            dialect = known[db_id]
            names = self._store_names(loaded).get(fold(db_id))
            if not names:
                return {"db_id": db_id, "dialect": dialect, **item}

            def real(name: str) -> str:
                return names.get(fold(name), name)

        return renamed({"db_id": db_id, "dialect": dialect, **item}, real)

    def _store_names(self, loaded: Loaded) -> dict[str, dict[str, str]]:
        """The engine names of the build's table documents: folded db -> folded table -> name."""
        if loaded.token not in self._entry_names:
            names: dict[str, dict[str, str]] = {}
            for entry in loaded.retriever.entries:
                if entry.engine_name:
                    names.setdefault(fold(entry.db_id), {})[fold(entry.table)] = entry.engine_name
            self._entry_names = {loaded.token: names}
        return self._entry_names[loaded.token]
