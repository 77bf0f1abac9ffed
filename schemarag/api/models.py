"""Request and response bodies, with the input limits the OpenAPI schema publishes.

Requests are strict (no unknown fields, no strings for numbers) and every limit is a constant
here, so `/openapi.json` states exactly what the server accepts. Responses mirror the library
results: `RetrieveResponse` is `RetrievalResult.as_dict()` (the CLI's `retrieve --json`),
`GenerateResponse` is `generator.GenerateResult.as_dict()`.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictStr,
    field_validator,
)
from pydantic_core import PydanticCustomError

from generator import DEFAULT_STRATEGY, STRATEGIES
from schemagraph.sql.check import ProblemKind

MAX_QUESTION_CHARS = 2000
MAX_TOP_DATABASES = 50
MAX_TOP_TABLES = 100
MAX_NAME_CHARS = 128
MAX_TABLES = 64
MAX_ROWS = 1000
MAX_EXAMPLES = 1000
MAX_EXAMPLE_SQL_CHARS = 20_000
MAX_CHECK_SQL_CHARS = 20_000

_REQUEST = ConfigDict(extra="forbid")
_RESPONSE = ConfigDict(extra="forbid")


def _integer(value: object) -> object:
    """JSON Schema's integer: an int, or a number with no fractional part (5.0); not a boolean
    nor a string, which pydantic's lax mode would convert."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PydanticCustomError("int_type", "Input should be a valid integer")
    return value


Integer = Annotated[int, BeforeValidator(_integer)]


# A character that is not white space as Python's str.isspace (which `_not_blank` and the
# retriever use) defines it, spelled out: `\s` differs between the regex engines that read the
# schema (JSON Schema's ECMAScript \s has U+FEFF and lacks U+001C-U+001F and U+0085; the Rust
# regex that pydantic validates with has U+0085), so a schema-valid question could be refused.
NOT_BLANK = r"[^\t-\r\x1c- \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"


def _question_field() -> Any:
    return Field(
        min_length=1,
        max_length=MAX_QUESTION_CHARS,
        # published so that clients (and schema-driven tests) know a blank question is refused
        pattern=NOT_BLANK,
        description=f"the question in natural language, 1 to {MAX_QUESTION_CHARS} characters, "
        "not blank",
        examples=["How many singers are from France?"],
    )


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


class RetrieveRequest(BaseModel):
    model_config = _REQUEST

    question: StrictStr = _question_field()
    top_databases: Integer = Field(5, ge=1, le=MAX_TOP_DATABASES, description="databases to return")
    top_tables: Integer = Field(
        10,
        ge=1,
        le=MAX_TOP_TABLES,
        description="ranked tables per database; the bridge tables that join the chosen ones "
        "come apart, in `bridges`",
    )
    pool: StrictBool = Field(
        False,
        description="LLM-aided schema pooling over the top candidates; needs a pooling LLM "
        "configured on the server (`serve --pool SPEC`), else 501",
    )
    dialect: StrictStr | None = Field(
        None,
        max_length=40,
        description="rank only the databases whose SQL is written in this dialect (`bigquery`, "
        "`snowflake`, `sqlite`, ...), as an application connected to one engine would; a "
        "dialect no database has is a 400",
    )

    _question = field_validator("question")(_not_blank)


class RankedTableOut(BaseModel):
    model_config = _RESPONSE

    name: str
    score: float
    chosen: bool = Field(description="part of the joinable set proposed for generation")
    bridge: bool = Field(
        description="on the foreign-key path that joins the chosen tables, not matched by the "
        "question itself"
    )
    family: dict[str, Any] | None = Field(
        None,
        description="when the table stands for a family of sharded tables (events_20240101, "
        "...): its pattern, member count, first and last member and suffix range",
    )
    joins: list[str] | None = Field(
        None,
        min_length=2,
        max_length=2,
        description="a bridge's only: the two tables its join path connects",
    )


class RankedDatabaseOut(BaseModel):
    model_config = _RESPONSE

    db_id: str
    score: float
    tables: list[RankedTableOut] = Field(
        description="the best tables by score, at most `top_tables`, the chosen ones first"
    )
    bridges: list[RankedTableOut] = Field(
        default_factory=list,
        description="tables the join path of the chosen ones adds beyond `tables` (counted "
        "in no limit)",
    )
    chosen_tables: list[str] = Field(
        default_factory=list,
        description="the chosen tables and every bridge, in join order: the schema that "
        "generation is shown",
    )


class TableRef(BaseModel):
    model_config = _RESPONSE

    db_id: str
    table: str


class ExampleOut(BaseModel):
    model_config = _RESPONSE

    question: str
    sql: str
    db_id: str
    tables: list[str]
    similarity: float
    skeleton: str
    origin: str = Field(description="`synthetic`, or `user` for an example a person wrote")


class TwinsOut(BaseModel):
    model_config = _RESPONSE

    members: list[str] = Field(description="the best database and its twins ranked with it")
    told_apart_by: str | None = Field(
        description="what in the question picked the best one; null: nothing tells them apart"
    )


class AlsoInOut(BaseModel):
    model_config = _RESPONSE

    db_id: str = Field(
        description="a mirror or extended copy of the best database (or one it "
        "extends) that holds every table chosen in it"
    )
    adds: list[str] = Field(description="the first tables it has that the best one lacks")
    adds_count: int = Field(description="how many tables it has that the best one lacks")


class RetrieveResponse(BaseModel):
    """Ranked databases (best first) with their tables, the pool-wide table ranking, the
    confidence in [0, 1] and whether it is too low to propose a database (`abstained`),
    few-shot examples, per-step timings in milliseconds, the best database's twins
    (databases with the same schema) when some are ranked too, and the ranked databases that
    also answer the question (mirrors and extended copies: `also_in`)."""

    model_config = _RESPONSE

    question: str
    databases: list[RankedDatabaseOut]
    tables: list[TableRef]
    confidence: float
    abstained: bool
    examples: list[ExampleOut]
    timings: dict[str, float]
    pooled: bool
    twins: TwinsOut | None = None
    pooling_error: str | None = None
    also_in: list[AlsoInOut] = Field(
        default_factory=list,
        description="the databases ranked right after the best one that also answer the "
        "question (they hold every table chosen in it), and the tables each adds",
    )


class GenerateRequestBody(BaseModel):
    model_config = _REQUEST

    question: StrictStr = _question_field()
    db_id: StrictStr | None = Field(
        None,
        min_length=1,
        max_length=MAX_NAME_CHARS,
        description="database to generate for; omitted: the retriever chooses",
    )
    tables: list[StrictStr] | None = Field(
        None,
        min_length=1,
        max_length=MAX_TABLES,
        description="tables to show the LLM; omitted: linking (or retrieval) chooses",
    )
    strategy: StrictStr = Field(
        DEFAULT_STRATEGY,
        description="; ".join(f"{k}: {v}" for k, v in STRATEGIES.items()),
        json_schema_extra={"enum": list(STRATEGIES)},
    )
    execute: StrictBool = Field(False, description="run the final SQL read-only and return rows")
    max_rows: Integer = Field(100, ge=1, le=MAX_ROWS, description="rows to return with execute")
    top_databases: Integer = Field(5, ge=1, le=MAX_TOP_DATABASES)
    top_tables: Integer = Field(10, ge=1, le=MAX_TOP_TABLES)
    dialect: StrictStr | None = Field(
        None,
        max_length=40,
        description="retrieval ranks only the databases whose SQL is written in this dialect "
        "(as in /v1/retrieve)",
    )

    _question = field_validator("question")(_not_blank)

    @field_validator("strategy")
    @classmethod
    def _known_strategy(cls, value: str) -> str:
        if value not in STRATEGIES:
            raise ValueError(f"unknown strategy; choose one of {', '.join(STRATEGIES)}")
        return value

    @field_validator("tables")
    @classmethod
    def _table_names(cls, value: list[str] | None) -> list[str] | None:
        for name in value or ():
            if not name.strip() or len(name) > MAX_NAME_CHARS:
                raise ValueError(f"table names must be 1 to {MAX_NAME_CHARS} characters")
        return value


class GenerateResponse(BaseModel):
    """`sql` is null when no SQL was produced (see `trace`), the guard refused the model's SQL
    (`refused` says why), or the retriever abstained."""

    model_config = _RESPONSE

    question: str
    db_id: str | None
    strategy: str | None
    sql: str | None
    refused: str | None = None
    tables: list[str]
    presql: str | None
    hardness: str | None
    abstained: bool
    execution: dict[str, Any] | None
    retrieval: dict[str, Any] | None
    trace: list[dict[str, Any]]
    usage: dict[str, Any] | None


class ExampleIn(BaseModel):
    model_config = _REQUEST

    question: StrictStr = _question_field()
    sql: StrictStr = Field(
        min_length=1,
        max_length=MAX_EXAMPLE_SQL_CHARS,
        pattern=NOT_BLANK,
        description="the SQL that answers it (SQLite dialect), one read-only query",
        examples=["SELECT Name FROM singer WHERE Country = 'France'"],
    )
    db_id: StrictStr = Field(
        min_length=1,
        max_length=MAX_NAME_CHARS,
        description="the database it is about, as the catalog names it",
        examples=["concert_singer"],
    )

    _question = field_validator("question")(_not_blank)
    _sql = field_validator("sql")(_not_blank)


class ExamplesRequest(BaseModel):
    model_config = _REQUEST

    examples: list[ExampleIn] = Field(
        min_length=1,
        max_length=MAX_EXAMPLES,
        description=f"1 to {MAX_EXAMPLES} (question, sql, db_id) pairs",
    )
    source: StrictStr = Field(
        "http",
        min_length=1,
        max_length=100,
        pattern=r"^[A-Za-z0-9_.:/@-]+$",
        description="a label for these examples, to remove them together later "
        "(`schemarag index remove-examples --source LABEL`)",
    )


class RejectedOut(BaseModel):
    model_config = _RESPONSE

    where: str = Field(description="`examples[i]`: the pair's index in the request")
    reason: str
    id: str | None
    line: int | None = Field(description="the pair's index in the request")


class ExamplesResponse(BaseModel):
    """`accepted`: pairs validated and now in the served store's newest build (new, or
    re-validated); `unchanged`: already there; `rejected`: each with why; `total`: users'
    examples the store keeps; `in_build`: those in the newest build. The server serves that
    build within about a second (`X-Schemarag-Build` of later answers)."""

    model_config = _RESPONSE

    build_id: str | None
    accepted: int
    accepted_ids: list[str]
    unchanged: int
    rejected: list[RejectedOut]
    removed: int
    removed_ids: list[str]
    total: int
    in_build: int
    seconds: float
    timings: dict[str, float]


class SqlCheckRequest(BaseModel):
    model_config = _REQUEST

    database: StrictStr = Field(
        min_length=1,
        max_length=MAX_NAME_CHARS,
        description="the database the query is written for, as the catalog names it",
        examples=["concert_singer"],
    )
    sql: StrictStr = Field(
        min_length=1,
        max_length=MAX_CHECK_SQL_CHARS,
        pattern=NOT_BLANK,
        description="one query in the database's dialect (BigQuery, Snowflake, SQLite...)",
        examples=["SELECT Name FROM singer WHERE Country = 'France'"],
    )

    _sql = field_validator("sql")(_not_blank)


class SqlProblemOut(BaseModel):
    model_config = _RESPONSE

    kind: str = Field(
        description="refused (the query is not one read-only query: `name` is the rule), "
        "unknown_table, unknown_column, not_unnested (a path into a repeated column read "
        "without UNNEST)",
        json_schema_extra={"enum": [k.value for k in ProblemKind]},
    )
    message: str
    name: str = Field(description="the name at fault, as the query writes it")
    suggestions: list[str] = Field(description="the nearest real names, as the query would")


class SqlCheckResponse(BaseModel):
    """`ok`: every table and column resolved and the query is one read-only query; each
    problem names the name at fault and the nearest real ones. Nothing was run."""

    model_config = _RESPONSE

    ok: bool
    database: str
    dialect: str = Field(description="the dialect the query was parsed in")
    problems: list[SqlProblemOut]
    tables: list[str] = Field(
        description="the catalog's ids of the tables the query reads (a wildcard family as "
        "`prefix*`)"
    )


class IndexInfo(BaseModel):
    """The build being served: what it holds and when it was made and loaded."""

    store: str
    build_id: str | None
    created_at: str | None = Field(description="when the build finished (ISO 8601, UTC)")
    loaded_at: str = Field(description="when this server started serving it (ISO 8601, UTC)")
    databases: int | None
    tables: int | None
    traversals: int | None
    questions: int | None
    user_examples: int = Field(0, description="users' examples in the build")
    embedder: str | None
    dim: int | None
    synthesizer: str | None
    twins: list[dict[str, Any]] = Field(
        default_factory=list,
        description="groups of databases with the same (or nearly the same) schema, and the "
        "tables and columns only one member has",
    )
    containment: list[dict[str, Any]] = Field(
        default_factory=list,
        description="databases whose every table other databases hold (extended copies): per "
        "base, the copies that contain it and the tables each adds",
    )
    families: list[dict[str, Any]] = Field(
        default_factory=list,
        description="tables sharded by date or number (events_20240101, ...): per family its "
        "database, pattern, member count and suffix range",
    )
    latest_build: str | None = Field(
        description="the build the store's pointer names now; differs from build_id for a "
        "moment after a new build is published, until the server has loaded it"
    )
    reloads: int = Field(description="builds loaded by this process since it started")


class Health(BaseModel):
    status: str = "ok"


class Readiness(BaseModel):
    ready: bool
    build_id: str | None


class ErrorDetail(BaseModel):
    code: str = Field(examples=["invalid_request"])
    message: str
    field: str | None = Field(description="the request field at fault, when there is one")


class ErrorBody(BaseModel):
    error: ErrorDetail
