"""`check`'s words for a column that does not resolve (`schemagraph.sql.check`): the nearest
real names as the SQL would write them, with the UNNESTs a nested field needs, and Snowflake's
case rules."""

from __future__ import annotations

import difflib
from collections.abc import Callable

from sqlglot import exp

from schemagraph.dialects import quote_part, repeated_route
from schemagraph.model import fold
from schemagraph.sql.from_sources import MISSING, Element, Hit, Source, State, Tables
from schemagraph.sql.problems import CUTOFF, SUGGESTIONS, ProblemKind, Problems, nearest


class ColumnReporter:
    """Adds the problems of columns that resolve badly or not at all to `problems`."""

    def __init__(self, dialect: str, problems: Problems) -> None:
        self.dialect = dialect
        self.problems = problems

    def report(self, hit: Hit, column: exp.Column, written: str, source: Source) -> None:
        """A problem for a name that resolved badly: a path into a repeated column, or (in
        Snowflake) a column matched only when case is ignored."""
        if hit.state is State.NOT_UNNESTED and hit.column is not None and hit.table is not None:
            route = repeated_route(hit.table, hit.column.name)
            if isinstance(source, Element):
                route = tuple(r for r in route if len(r) > len(source.path))
            self.problems.add(
                ProblemKind.NOT_UNNESTED,
                written,
                f"`{written}` reads into the repeated (ARRAY) column `{hit.repeated}` of "
                f"{source.describe()}: reach it as {_routed_name(hit.column.name, route)}",
                (_routed_name(hit.column.name, route),),
            )
            return
        if hit.state is not State.FOUND or hit.column is None or self.dialect != "snowflake":
            return
        identifier = column.this
        if "." in hit.column.name or not isinstance(identifier, exp.Identifier):
            return
        read = identifier.name if identifier.quoted else identifier.name.upper()
        if read == hit.column.name:
            return
        quoted = '"' + hit.column.name.replace('"', '""') + '"'
        how = "as written, quoted" if identifier.quoted else "in upper case, unquoted"
        self.problems.add(
            ProblemKind.UNKNOWN_COLUMN,
            written,
            f"no column `{read}` in {source.describe()}: Snowflake reads `{identifier.name}` "
            f"{how}; the column is `{quoted}`",
            (f"`{quoted}`",),
        )

    def missing(
        self,
        written: str,
        path: tuple[str, ...],
        sources: list[Source],
        qualifier: str,
        others: list[Source],
    ) -> None:
        """An unknown column: `path` read through `qualifier` (or unqualified) in `sources`;
        `others`: the scope's other sources, where it may be."""
        suggestions = self._near_columns(path, sources, qualifier, others)
        message = f"no column `{'.'.join(path)}` in {_where(sources)}"
        self.problems.add(
            ProblemKind.UNKNOWN_COLUMN, written, nearest(message, suggestions), tuple(suggestions)
        )

    def _near_columns(
        self,
        path: tuple[str, ...],
        sources: list[Source],
        qualifier: str,
        others: list[Source],
    ) -> list[str]:
        """The nearest real names, as the SQL would write them: the same name in another source
        of the scope, the same field at another path (with the UNNESTs it needs), names alike."""
        wanted = fold(".".join(path))
        last = fold(path[-1])
        prefix = f"{qualifier}." if qualifier else ""
        out: list[str] = []
        for other in others:
            hit = other.find(path) if other.alias else MISSING
            if hit.state is State.FOUND:
                name = ".".join(path) if hit.column is None else self._spelt(hit.column.name)
                out.append(f"`{other.alias}.{name}`")
        for source in sources:
            names = source.names()
            for name in names:
                if fold(name) != wanted and fold(name.rsplit(".", 1)[-1]) == last:
                    out.append(_routed(source, name, prefix, self._spelt))
            folded = {fold(n): n for n in names}
            for near in difflib.get_close_matches(wanted, list(folded), SUGGESTIONS, CUTOFF):
                out.append(_routed(source, folded[near], prefix, self._spelt))
        return list(dict.fromkeys(out))[:SUGGESTIONS]

    def _spelt(self, name: str) -> str:
        """A column name as the SQL must write it: quoted in Snowflake unless upper case."""
        if self.dialect != "snowflake" or "." in name:
            return name
        return quote_part(name, self.dialect)


def _routed(source: Source, name: str, prefix: str, spelt: Callable[[str], str]) -> str:
    """`name` of `source` as a suggestion: with the UNNESTs a nested field needs."""
    route: tuple[str, ...] = ()
    if isinstance(source, Tables) and "." in name:
        route = repeated_route(source.tables[0], name)
    elif isinstance(source, Element):
        full = f"{source.path}.{name}"
        route = tuple(
            r for r in repeated_route(source.base.tables[0], full) if len(r) > len(source.path)
        )
        if route:
            name = full
    if route:
        return _routed_name(name, route)
    return f"`{prefix}{spelt(name) if isinstance(source, Tables) else name}`"


def _routed_name(name: str, route: tuple[str, ...]) -> str:
    if not route:
        return f"`{name}`"
    return f"`{name}` through " + " then ".join(f"`UNNEST({r})`" for r in route)


def _where(sources: list[Source]) -> str:
    labels = list(dict.fromkeys(s.describe() for s in sources if s.alias))
    if not labels:
        return "the query's tables"
    if len(labels) == 1:
        return labels[0]
    return "any of " + ", ".join(labels)
