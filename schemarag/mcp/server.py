"""The MCP server: the `Estate`'s answers as tools of the official SDK's `MCPServer`.

Tools (their JSON schemas come from the signatures below):

- `find_tables`      the ranked databases and tables for a question, with confidence;
- `list_databases`   the databases of the estate, paged, with a pattern;
- `describe_tables`  CREATE TABLE text, keys, sample rows and joins, cut to a token budget;
- `check_sql`        one query verified against the catalog, run nowhere (every database);
- `run_sql`          one read-only query through the guard of `sql run`, where there is a
                     connection;
- `generate_sql`     the `ask` pipeline, offered only when an LLM is configured.

`describe_tables` and `run_sql` need the catalog (`--source`) and are offered only with it;
`check_sql` is always listed (without a catalog it says what is missing). The instructions name
each database's dialect and where `run_sql` can run. A
request the estate refuses (a bad database name, SQL the guard refuses, a timeout) is a tool
error (`isError`) whose text says what to change; an unexpected failure is one too, logged on
one line, so the server never ends on a call. The resource `schemarag://index` tells which
build serves and where from.
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field, ValidationError

from schemagraph.dialects import engine_label
from schemarag.errors import rule_for
from schemarag.mcp.estate import (
    DEFAULT_ROWS,
    MAX_DESCRIBE_TOKENS,
    MAX_ROWS,
    PAGE,
    Estate,
    EstateError,
)

log = logging.getLogger(__name__)

__all__ = ["as_text", "create_server"]

_Tool = TypeVar("_Tool", bound=Callable[..., Any])

INSTRUCTIONS = (
    "schemarag knows the databases of this estate. Call find_tables with the user's question "
    "to learn which database and tables answer it, describe_tables to read their schema "
    "(columns, nested fields, keys, sample values, joins), then write one SELECT query in that "
    "database's dialect and verify it with check_sql, which resolves every table and column "
    "against the catalog without running anything. list_databases browses the estate by name."
)

#: databases named one by one in the instructions up to this many per dialect
NAMED_PER_DIALECT = 12


def instructions(estate: Estate) -> str:
    """What the agent reads first: the workflow, each database's dialect, where run_sql runs."""
    dialects = estate.dialects()
    if not dialects:
        return INSTRUCTIONS + " (Without the catalog, describe_tables and check_sql cannot answer.)"
    by_dialect: dict[str, list[str]] = {}
    for db_id, dialect in sorted(dialects.items(), key=lambda kv: kv[0].lower()):
        by_dialect.setdefault(dialect, []).append(db_id)
    lines = [INSTRUCTIONS, "Dialects (write each database's SQL in its own):"]
    for dialect, ids in sorted(by_dialect.items(), key=lambda kv: -len(kv[1])):
        named = ", ".join(ids[:NAMED_PER_DIALECT])
        more = f" and {len(ids) - NAMED_PER_DIALECT} more" if len(ids) > NAMED_PER_DIALECT else ""
        lines.append(f"- {engine_label(dialect)}: {len(ids)} ({named}{more})")
    lines.append("find_tables and describe_tables name each database's dialect too.")
    if len(by_dialect) > 1:
        lines.append(
            "When the SQL will run on one engine, pass its dialect to find_tables "
            f'(dialect="{min(by_dialect)}"): only its databases are ranked.'
        )
    runnable = estate.runnable()
    if not runnable:
        lines.append(
            "No database has a connection here: run_sql cannot run queries; check_sql is how "
            "to verify SQL."
        )
    elif len(runnable) < len(dialects):
        shown = ", ".join(runnable[:NAMED_PER_DIALECT])
        hidden = len(runnable) - NAMED_PER_DIALECT
        more = f" and {hidden} more" if hidden > 0 else ""
        lines.append(
            f"run_sql runs a query (SQLite's SQL, translated for a server) only on the "
            f"{len(runnable)} databases with a connection ({shown}{more}); elsewhere use "
            "check_sql."
        )
    else:
        lines.append("run_sql also runs a query and returns its rows (SQLite's SQL).")
    return "\n".join(lines)


Question = Annotated[str, Field(min_length=1, max_length=2000, description="the question")]
Database = Annotated[
    str, Field(min_length=1, max_length=200, description="a database id from find_tables")
]


def as_text(value: Any) -> str:
    """Compact JSON: what the model reads, with no indentation to pay for."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


#: seconds between two progress notifications of a call waiting for the index
PROGRESS_EVERY_S = 1.0


async def _loaded(estate: Estate, ctx: Context) -> None:
    """Wait, at most `estate.ready_timeout_s`, for the index to load, telling the client how
    long so far in a progress notification each `PROGRESS_EVERY_S`; a `ToolError` saying it is
    still loading (or why it cannot) when it has not."""
    served = estate.served
    waited = 0.0
    while not served.settled:
        if waited >= estate.ready_timeout_s:
            break
        pending = served.pending
        what = f"loading the index {pending.build}" if pending.build else "opening the store"
        await ctx.report_progress(waited, estate.ready_timeout_s, f"{what} ({waited:.0f} s)")
        step = min(PROGRESS_EVERY_S, estate.ready_timeout_s - waited)
        for _ in range(int(step / 0.05) or 1):
            if served.ready:
                break
            await anyio.sleep(0.05)
        waited += step
    if not served.ready:
        raise ToolError(estate.served.why_not_ready())


def _call(name: str, work: Any) -> Any:
    """Run a tool's work; `EstateError` and the errors of the application's error table
    (`schemarag.errors`) become a `ToolError` of their one line, anything else one that names
    the failure, logged."""
    try:
        return work()
    except EstateError as exc:
        raise ToolError(str(exc)) from None
    except Exception as exc:
        if rule_for(exc) is not None:
            raise ToolError(str(exc)) from None
        log.error("%s failed: %s: %s", name, type(exc).__name__, exc)
        raise ToolError(f"{name} failed: {type(exc).__name__}: {exc}") from None


class _Server(MCPServer):
    """The SDK's server, with a tool's argument errors said in one line of schemarag's words
    (the SDK passes on pydantic's text, with its links), and a tool's description its
    docstring without the indentation (the SDK sends it as written, to every agent)."""

    def tool(self, *args: Any, **kwargs: Any) -> Callable[[_Tool], _Tool]:
        def register(function: _Tool) -> _Tool:
            if kwargs.get("description") is None and function.__doc__:
                kwargs["description"] = inspect.cleandoc(function.__doc__)
            return super(_Server, self).tool(*args, **kwargs)(function)

        return register

    async def call_tool(self, name: str, arguments: dict[str, Any], *args: Any, **kw: Any) -> Any:
        try:
            return await super().call_tool(name, arguments, *args, **kw)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(argument_error(name, exc.__cause__)) from exc.__cause__
            raise


def argument_error(tool: str, error: ValidationError) -> str:
    """One line naming each wrong argument and what it should be (never the value sent)."""
    problems = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"]) or "arguments"
        if item["type"] == "missing":
            problems.append(f"`{where}` is required")
        else:
            message = item["msg"].replace("Input should be", "should be")
            message = message.replace("Value error, ", "")
            problems.append(f"`{where}` {message[:1].lower()}{message[1:]}")
    return f"{tool}: {'; '.join(problems)}; see the tool's input schema"


def package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("schemarag")
    except PackageNotFoundError:
        return "0+unknown"


def create_server(estate: Estate, *, name: str = "schemarag") -> MCPServer:
    """The MCP server over `estate`, with the tools `estate` can answer."""
    server: MCPServer = _Server(
        name, instructions=instructions(estate), version=package_version(), log_level="WARNING"
    )
    _index_tools(server, estate)
    if estate.has_catalog:
        _catalog_tools(server, estate)
    if estate.generate is not None:
        _generation_tool(server, estate)
    _index_resource(server, estate)
    return server


#: the tools that only read, and only what the estate holds
_READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)


def _index_tools(server: MCPServer, estate: Estate) -> None:
    """`find_tables`, `list_databases` and `check_sql`: always listed."""

    @server.tool(annotations=_READ_ONLY)
    async def find_tables(
        question: Question,
        ctx: Context,
        top_databases: Annotated[int, Field(ge=1, le=20, description="databases")] = 3,
        top_tables: Annotated[int, Field(ge=1, le=50, description="tables per database")] = 5,
        dialect: Annotated[
            str | None,
            Field(
                max_length=40,
                description="only the databases whose SQL is in this dialect (bigquery, "
                "snowflake, sqlite, ...): the engine you are connected to",
            ),
        ] = None,
    ) -> str:
        """The databases and tables that most likely answer `question`, best first, with the
        retriever's confidence (0-1; `abstained` when no database fits), scores, `chosen_tables`
        (the joinable set to write SQL against, bridge tables included), twin databases with the
        same schema, and similar example questions with their SQL. `build` names the index
        build that answered."""
        await _loaded(estate, ctx)
        return as_text(
            await anyio.to_thread.run_sync(
                _call,
                "find_tables",
                lambda: estate.find_tables(question, top_databases, top_tables, dialect),
            )
        )

    @server.tool(annotations=_READ_ONLY)
    def list_databases(
        pattern: Annotated[
            str | None,
            Field(max_length=200, description="glob (sales_*) or part of the id; any case"),
        ] = None,
        offset: Annotated[int, Field(ge=0, description="first database of the page")] = 0,
        limit: Annotated[int, Field(ge=1, le=200, description="databases per page")] = PAGE,
    ) -> str:
        """The databases of the estate by id: table count, first table names, description,
        twins (databases with the same schema). Paged: `next_offset` is there when more
        match."""
        return as_text(
            _call("list_databases", lambda: estate.list_databases(pattern, offset, limit))
        )

    @server.tool(annotations=_READ_ONLY)
    def check_sql(
        database: Database,
        sql: Annotated[
            str, Field(min_length=1, max_length=20000, description="one SELECT, in its dialect")
        ],
    ) -> str:
        """Verify one SELECT against `database`'s catalog without running it: parsed in the
        database's dialect (BigQuery, Snowflake, SQLite...), every table resolved (qualified,
        unqualified, or a wildcard family), every column resolved through its scope (CTEs,
        aliases, UNNEST/FLATTEN, struct paths), writes refused. `ok` true, or `problems`, each
        naming the unknown name and the nearest real ones. Works where nothing can be run."""
        return as_text(_call("check_sql", lambda: estate.check_sql(database, sql)))


def _catalog_tools(server: MCPServer, estate: Estate) -> None:
    """`describe_tables` and `run_sql`, where the server has the catalog."""

    @server.tool(annotations=_READ_ONLY)
    def describe_tables(
        database: Database,
        tables: Annotated[
            list[Annotated[str, Field(min_length=1, max_length=200)]] | None,
            Field(max_length=50, description="tables to show (default: all)"),
        ] = None,
        question: Annotated[
            str,
            Field(max_length=2000, description="the question: wide tables keep its columns"),
        ] = "",
        max_tokens: Annotated[
            int | None, Field(ge=200, le=MAX_DESCRIBE_TOKENS, description="the answer's size")
        ] = None,
    ) -> str:
        """CREATE TABLE statements of `tables` of `database` (or of all its tables), with
        column descriptions as comments, primary and foreign keys, a few sample rows, the
        join conditions between the tables, and any table needed to join them. Held to
        `max_tokens` (default 3000) the way generation prompts are: descriptions, then sample
        rows, then the columns of wide tables (keys and the question's columns stay), then
        the tables least related to the question go; a last comment says what was cut."""
        return str(
            _call(
                "describe_tables",
                lambda: estate.describe_tables(database, tables, question, max_tokens),
            )
        )

    @server.tool(annotations=_READ_ONLY)
    def run_sql(
        database: Database,
        sql: Annotated[str, Field(min_length=1, max_length=20000, description="one SQLite SELECT")],
        max_rows: Annotated[int, Field(ge=1, le=MAX_ROWS)] = DEFAULT_ROWS,
    ) -> str:
        """Run one read-only SELECT (SQLite's SQL) on `database` and return its columns and
        rows, where the database has a connection (a SQLite file or a server; the
        instructions list them; elsewhere use check_sql). Anything that writes, attaches,
        changes settings or holds more than one statement is refused; a query past the time
        limit is stopped; rows past `max_rows` are cut (`truncated`)."""
        return as_text(_call("run_sql", lambda: estate.run_sql(database, sql, max_rows)))


def _generation_tool(server: MCPServer, estate: Estate) -> None:
    """`generate_sql`, where the server has a language model."""

    @server.tool()
    def generate_sql(
        question: Question,
        database: Annotated[
            str | None,
            Field(max_length=200, description="database id (default: retrieval picks)"),
        ] = None,
    ) -> str:
        """SQL for `question` written by the server's language model (schemarag's
        generation pipeline: retrieval, schema linking, candidates, checks). Returns the SQL,
        the database and tables used, or why none was written."""
        return as_text(_call("generate_sql", lambda: estate.generate_sql(question, database)))


def _index_resource(server: MCPServer, estate: Estate) -> None:
    """`schemarag://index`: the build being served."""

    @server.resource("schemarag://index", mime_type="application/json")
    def index_status() -> str:
        """The build being served, where from, and since when."""
        current = estate.served.current
        if current is None:
            pending = estate.served.pending
            return as_text({"ready": False, "state": pending.state, "error": pending.error})
        return as_text(
            {
                "ready": True,
                "where": estate.served.source.where,
                "build": current.build_id,
                "loaded_at": current.loaded_at.isoformat(),
                "embedder": current.manifest.embedder if current.manifest else None,
                "databases": len({e.db_id for e in current.retriever.entries}),
                "tables": len(current.retriever.entries),
            }
        )
