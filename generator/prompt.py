"""PET-SQL's reference-enhanced prompt, held to a token budget.

The prompt is an instruction with the optimization rule ("minimize SQL execution time while
ensuring correctness"), few-shot examples (question, SQL and the example's schema), the schema
as CREATE TABLE statements with primary and foreign keys, the tables' and columns' descriptions
as SQL comments and a few sampled rows per table, and the question. Cell values, example text
and the question are delimited data blocks, each cut to a length (`generator.text.data_block`).

The budget (approximate tokens, `text.approx_tokens`) is a hard limit: while the prompt is too
long, `build_prompt` drops the descriptions (all at once: the names still say something), then
few-shot examples (the last, least similar, first), then sample rows (one row per table at a
time), then the columns of wide tables: a table keeps its first column, its keys (primary, and
foreign between the shown tables) and the columns whose words the question uses, and shows at
most k of its other columns, the first ones, with a comment counting the others; in a table
wider than 30 columns the members of a column family after its first count as last. k is first
`WIDE_KEEPS` (30), which cuts only tables wider than that; then the tables farthest from the
question go (fewest words shared with the question, in their names or descriptions; later in
the given order first; after each, k starts again from all columns), and k falls to 0 only for
the last table. Finally k is raised to the largest that fits. Wide tables (warehouses keep
tables of hundreds of columns) are cut before tables go because one would otherwise cost the
prompt every other table, join paths included; narrower tables still go whole, since cutting
their columns loses more gold columns than dropping the tables farthest from the question
(the decision log of docs/BENCHMARKS.md). What was cut is reported in
`Prompt.cuts`. If even that does not fit, `PromptBudgetError`.

The judges (actor-critic's critic, the multi-sample critique, test-case prediction) read
`judge_schema`: the prompt's tables with the columns the prompt showed, no sample rows, plus
any left-out column a candidate names, cut by the same column rule to the judge's schema
length, rather than every column of those tables clipped at that length, which a wide table
would spend before the judge's schema reached the next table.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from generator.errors import GeneratorConfigError, PromptBudgetError
from generator.text import DATA_RULE, approx_tokens, clip, data_block
from providers import Message
from retriever.text import STOPWORDS
from schemagraph import Database, DatabaseSample, TableSample, create_table_text, sample_database
from schemagraph.dialects import SQLITE, engine_label, family_sql, sql_dialect, table_sql
from schemagraph.families import collapse_families, column_families, find_families
from schemagraph.model import Catalog, fold
from schemagraph.name_words import plain_words
from schemagraph.sql import SqlParseError, columns_in_sql

OPTIMIZATION_RULE = "Minimize SQL execution time while ensuring correctness."

#: columns (besides its first, its keys and those the question names) a table keeps before any
#: table is dropped: wider tables are cut to this many first, narrower ones go whole as before
WIDE_KEEPS = 30

SYSTEM_PROMPT = (
    "You are an expert SQLite developer. You write one SQLite query that answers the user's "
    "question over the given database. " + DATA_RULE
)

INSTRUCTION = (
    "Write one SQLite SELECT query that answers the question, using only the tables and "
    "columns of the schema. The example rows show how values are written (case, spelling, "
    f"units). {OPTIMIZATION_RULE} Reply with the query in a ```sql code block and nothing else."
)

#: what a warehouse's SQL needs that SQLite's does not, per dialect
DIALECT_RULES = {
    "bigquery": (
        "Name tables exactly as the schema does, backquoted (`project.dataset.table`). Read the "
        "fields of a REPEATED (ARRAY) column through UNNEST in FROM (FROM t, UNNEST(t.hits) AS "
        "hits), the fields of a STRUCT with a dot (totals.pageviews). Query a family of sharded "
        "tables through its wildcard (`dataset.ga_sessions_*`) with _TABLE_SUFFIX."
    ),
    "snowflake": (
        "Name tables exactly as the schema does (DATABASE.SCHEMA.TABLE); double-quote column "
        'names that are not all upper case ("created_at"). Read VARIANT columns with : paths '
        "and LATERAL FLATTEN(input => t.col)."
    ),
}


def system_prompt(dialect: str) -> str:
    """The generation prompt's system text for SQL in `dialect`."""
    if dialect in ("", SQLITE):
        return SYSTEM_PROMPT
    engine = engine_label(dialect)
    return (
        f"You are an expert {engine} developer. You write one {engine} query that answers the "
        "user's question over the given database. " + DATA_RULE
    )


def instruction(dialect: str) -> str:
    """The generation prompt's instruction for SQL in `dialect`."""
    if dialect in ("", SQLITE):
        return INSTRUCTION
    rules = DIALECT_RULES.get(dialect, "")
    return (
        f"Write one {engine_label(dialect)} SELECT query that answers the question, using only "
        f"the tables and columns of the schema. {rules} {OPTIMIZATION_RULE} Reply with the "
        "query in a ```sql code block and nothing else."
    ).replace("  ", " ")


@dataclass(frozen=True)
class FewShot:
    """A few-shot example: a question, its SQL, and the schema text of the tables it uses."""

    question: str
    sql: str
    schema: str = ""


@dataclass(frozen=True)
class PromptConfig:
    """How prompts are built. `budget_tokens` is the hard limit on system + user text."""

    budget_tokens: int = 6000
    sample_rows: int = 3
    max_cell_chars: int = 40
    max_question_chars: int = 2000
    max_example_chars: int = 2000
    seed: int = 0

    def __post_init__(self) -> None:
        if self.budget_tokens < 50:
            raise GeneratorConfigError(f"budget_tokens must be >= 50, got {self.budget_tokens}")
        if self.sample_rows < 0:
            raise GeneratorConfigError(f"sample_rows must be >= 0, got {self.sample_rows}")
        for name in ("max_cell_chars", "max_question_chars", "max_example_chars"):
            if getattr(self, name) < 8:
                raise GeneratorConfigError(f"{name} must be >= 8, got {getattr(self, name)}")


@dataclass(frozen=True)
class PromptCuts:
    """What the budget removed: descriptions, examples, sample rows per table, columns (how many
    per table), tables (by name)."""

    descriptions_dropped: bool = False
    examples_dropped: int = 0
    sample_rows_from: int = 0
    sample_rows_to: int = 0
    tables_dropped: tuple[str, ...] = ()
    columns_dropped: tuple[tuple[str, int], ...] = ()

    @property
    def any(self) -> bool:
        return bool(
            self.descriptions_dropped
            or self.examples_dropped
            or self.sample_rows_to < self.sample_rows_from
            or self.tables_dropped
            or self.columns_dropped
        )

    def notes(self) -> list[str]:
        notes = []
        if self.descriptions_dropped:
            notes.append("dropped the descriptions")
        if self.examples_dropped:
            notes.append(f"dropped {self.examples_dropped} few-shot example(s)")
        if self.sample_rows_to < self.sample_rows_from:
            notes.append(
                f"sample rows per table cut from {self.sample_rows_from} to {self.sample_rows_to}"
            )
        if self.columns_dropped:
            hidden = ", ".join(f"{n} of {table}" for table, n in self.columns_dropped)
            notes.append(f"left out column(s): {hidden}")
        if self.tables_dropped:
            notes.append(f"dropped table(s) {', '.join(self.tables_dropped)}")
        return notes

    def as_dict(self) -> dict[str, Any]:
        return {
            "descriptions_dropped": self.descriptions_dropped,
            "examples_dropped": self.examples_dropped,
            "sample_rows_from": self.sample_rows_from,
            "sample_rows_to": self.sample_rows_to,
            "tables_dropped": list(self.tables_dropped),
            "columns_dropped": dict(self.columns_dropped),
            "notes": self.notes(),
        }


@dataclass(frozen=True)
class Prompt:
    """A built prompt: the text, its size against the budget, and what it shows (`hidden`: the
    columns it left out, folded, per folded table name)."""

    system: str
    user: str
    tokens: int
    budget: int
    tables: tuple[str, ...]
    examples: int
    sample_rows: int
    cuts: PromptCuts = field(default_factory=PromptCuts)
    hidden: Mapping[str, frozenset[str]] = field(default_factory=dict)

    @property
    def messages(self) -> tuple[Message, ...]:
        return (Message.user(self.user),)

    def as_dict(self) -> dict[str, Any]:
        """The trace entry (not the text itself)."""
        return {
            "tokens": self.tokens,
            "budget": self.budget,
            "tables": list(self.tables),
            "examples": self.examples,
            "sample_rows": self.sample_rows,
            "cuts": self.cuts.as_dict(),
        }


def prompt_sample(db: Database, config: PromptConfig) -> DatabaseSample | None:
    """The sampled rows prompts show for `db` (None without data, a file or a live server, or
    with 0 rows)."""
    if config.sample_rows == 0 or (db.path is None and db.url is None):
        return None
    return sample_database(
        db,
        rows=config.sample_rows,
        distinct=0,
        max_value_chars=config.max_cell_chars,
        seed=config.seed,
    )


def build_prompt(
    question: str,
    db: Database,
    *,
    tables: Sequence[str] | None = None,
    examples: Sequence[FewShot] = (),
    sample: DatabaseSample | None = None,
    config: PromptConfig | None = None,
) -> Prompt:
    """The generation prompt for `question` over `tables` of `db` (default: all), within the
    budget (see the module docstring). `sample`: rows to show (see `prompt_sample`)."""
    config = config or PromptConfig()
    names = _table_names(db, tables)
    if not names:
        raise GeneratorConfigError(f"no tables to show for database {db.id!r}")
    sample = _clipped(sample, config.max_cell_chars) if sample is not None else None
    rows = config.sample_rows if sample is not None else 0
    shown_examples = list(examples)
    kept = list(names)
    dropped_tables: list[str] = []
    drop_order = _farthest_first(question, db, names)
    described = _has_descriptions(db, names)
    named = _named_columns(question, db, names)
    limit: int | None = None  # other columns shown per table (None: all of them)

    def render(columns: int | None) -> tuple[str, int]:
        """The user text and its tokens with at most `columns` other columns per table."""
        hidden = _hidden(db, kept, named, columns)
        text = _user_text(
            question, db, kept, shown_examples, sample, rows, config, described, hidden
        )
        return text, approx_tokens(system_prompt(sql_dialect(db))) + approx_tokens(text)

    while True:
        user, tokens = render(limit)
        if tokens <= config.budget_tokens:
            break
        if described:
            described = False
        elif shown_examples:
            shown_examples.pop()
        elif rows > 0:
            rows -= 1
        elif limit is None:
            limit = WIDE_KEEPS
        elif len(kept) > 1:
            victim = next(name for name in drop_order if name in kept)
            kept.remove(victim)
            dropped_tables.append(victim)
            limit = None  # the tables left may fit whole
        elif limit > 0:
            limit = 0
        else:
            raise PromptBudgetError(
                f"the prompt needs {tokens} tokens with one table, no rows, no examples and "
                f"only the columns it cannot leave out; budget_tokens is {config.budget_tokens}"
            )
    if limit is not None:  # the most other columns per table that fit (`limit` does)
        most = max(len(c) for c in _cuttable(db, kept, named).values())
        limit = _largest(limit, most, lambda k: render(k)[1] <= config.budget_tokens)
        user, tokens = render(limit)
    hidden = _hidden(db, kept, named, limit)
    cuts = PromptCuts(
        descriptions_dropped=_has_descriptions(db, names) and not described,
        examples_dropped=len(examples) - len(shown_examples),
        sample_rows_from=config.sample_rows if sample is not None else 0,
        sample_rows_to=rows,
        tables_dropped=tuple(dropped_tables),
        columns_dropped=tuple(
            (name, len(hidden[fold(name)])) for name in kept if fold(name) in hidden
        ),
    )
    return Prompt(
        system=system_prompt(sql_dialect(db)),
        user=user,
        tokens=tokens,
        budget=config.budget_tokens,
        tables=tuple(kept),
        examples=len(shown_examples),
        sample_rows=rows,
        cuts=cuts,
        hidden={table: frozenset(columns) for table, columns in hidden.items()},
    )


def schema_text(
    db: Database,
    tables: Sequence[str],
    sample: DatabaseSample | None,
    rows: int,
    descriptions: bool = True,
    hidden: Mapping[str, Collection[str]] | None = None,
) -> str:
    """CREATE TABLE statements with keys, descriptions and `rows` sample rows per table, without
    the `hidden` columns (per folded table name, folded column names)."""
    return create_table_text(
        db, list(tables), sample, rows, descriptions=descriptions, hidden=hidden
    )


def judge_schema(
    question: str,
    db: Database,
    prompt: Prompt,
    sqls: Iterable[str | None] = (),
    *,
    max_chars: int | None = None,
) -> str:
    """The schema a judge reads beside `prompt`'s candidates (see the module docstring): its
    tables as CREATE TABLE statements with their descriptions, without sample rows, and without
    the columns it left out, except those named by one of `sqls` (by name, in any of its
    tables; SQL that does not parse names none). Longer than `max_chars`, it drops the
    descriptions, then shows per table its first column, its keys, the columns the question or
    a candidate names and the most of its first other columns that fit (at least none)."""
    used: set[str] = set()
    for sql in filter(None, sqls):
        try:
            used |= {fold(name) for name in columns_in_sql(sql)}
        except SqlParseError:
            continue
    tables = list(prompt.tables)
    left_out = {table: columns - used for table, columns in prompt.hidden.items()}
    text = create_table_text(db, tables, hidden=left_out)
    if max_chars is None or len(text) <= max_chars:
        return text
    text = create_table_text(db, tables, descriptions=False, hidden=left_out)
    if len(text) <= max_chars:
        return text
    named = _named_columns(question, db, tables) | {(fold(t), c) for t in tables for c in used}
    cuttable = _cuttable(db, tables, named)

    def render(limit: int) -> str:
        hidden = {
            table: set(columns[limit:]) | left_out.get(table, set())
            for table, columns in cuttable.items()
        }
        return create_table_text(db, tables, descriptions=False, hidden=hidden)

    most = max(len(columns) for columns in cuttable.values())
    return render(_largest(0, most, lambda limit: len(render(limit)) <= max_chars))


def _largest(low: int, high: int, fits: Callable[[int], bool]) -> int:
    """The largest k in [low, high] that `fits`, given that `fits` holds up to it and `low`
    fits (binary search)."""
    while low < high:
        k = (low + high + 1) // 2
        if fits(k):
            low = k
        else:
            high = k - 1
    return low


def _has_descriptions(db: Database, names: Sequence[str]) -> bool:
    tables = [db.table(n) for n in names]
    return any(t.description or any(c.description for c in t.columns) for t in tables)


def _user_text(
    question: str,
    db: Database,
    tables: Sequence[str],
    examples: Sequence[FewShot],
    sample: DatabaseSample | None,
    rows: int,
    config: PromptConfig,
    descriptions: bool,
    hidden: Mapping[str, Collection[str]],
) -> str:
    parts = ["### Instruction", instruction(sql_dialect(db))]
    if examples:
        parts.append("### Examples")
        for number, example in enumerate(examples, 1):
            body = []
            if example.schema.strip():
                body.append(f"Schema:\n{example.schema.strip()}")
            body.append(f"Question: {example.question.strip()}")
            body.append(f"SQL: {example.sql.strip()}")
            parts.append(f"Example {number}:")
            parts.append(data_block("example", "\n".join(body), config.max_example_chars))
    parts.append(f"### Database {db.id}")
    schema = schema_text(db, tables, sample, rows, descriptions, hidden)
    parts.append(data_block("schema", schema, 1_000_000))
    shards = family_notes(db, tables)
    if shards:
        parts.append("### Sharded tables")
        parts.append("\n".join(shards))
    parts.append("### Question")
    parts.append(data_block("question", question.strip(), config.max_question_chars))
    return "\n\n".join(parts)


def family_notes(db: Database, tables: Sequence[str]) -> list[str]:
    """A line per shown table that stands for a family of sharded tables (its newest member)."""
    shown = {fold(name) for name in tables}
    notes = []
    for f in find_families(db):
        if fold(f.last) not in shown:
            continue
        last = db.table(f.last)
        low, high = f.suffix_range()
        if wildcard := family_sql(db, last, high):
            notes.append(
                f"{table_sql(db, last)} is the newest of {len(f.members)} tables with the same "
                f"columns, suffixes {low} to {high}: query the ones the question's dates name "
                f"through the wildcard {wildcard}, with _TABLE_SUFFIX BETWEEN '{low}' AND "
                f"'{high}' narrowed to them."
            )
            continue
        notes.append(
            f"{f.last} is the newest of {len(f.members)} tables {f.pattern} ({f.first} to "
            f"{f.last}) with the same columns: query the ones the question's dates or numbers "
            "name (UNION ALL for several)."
        )
    return notes


def _table_names(db: Database, tables: Sequence[str] | None) -> list[str]:
    if tables is None:  # every table, a family of sharded tables as its newest member
        return [t.name for t in collapse_families(Catalog((db,))).databases[0].tables]
    names: list[str] = []
    for name in tables:
        if not db.has_table(name):
            raise GeneratorConfigError(f"database {db.id!r} has no table {name!r}")
        real = db.table(name).name
        if real not in names:
            names.append(real)
    return names


def name_words(text: str) -> set[str]:
    """Lower-case words of a name or a question, with a trailing plural `s` removed."""
    words = set()
    for word in plain_words(text):
        word = word.lower()
        if len(word) > 2:
            words.add(word[:-1] if word.endswith("s") and len(word) > 3 else word)
    return words


def _farthest_first(question: str, db: Database, names: Sequence[str]) -> list[str]:
    """Tables by increasing relevance to the question; later ones first among equals."""
    asked = name_words(question)

    def relevance(position: int) -> tuple[int, int]:
        table = db.table(names[position])
        vocabulary = name_words(table.name) | name_words(table.description) - STOPWORDS
        for column in table.columns:
            vocabulary |= name_words(column.name) | name_words(column.description) - STOPWORDS
        return (len(asked & vocabulary) + 2 * len(asked & name_words(table.name)), -position)

    order = sorted(range(len(names)), key=relevance)
    return [names[i] for i in order]


def _named_columns(question: str, db: Database, tables: Sequence[str]) -> set[tuple[str, str]]:
    """(folded table, folded column) of the columns whose name or description shares a word
    with the question."""
    asked = name_words(question)
    return {
        (fold(name), fold(column.name))
        for name in tables
        for column in db.table(name).columns
        if asked & (name_words(column.name) | name_words(column.description) - STOPWORDS)
    }


def _cuttable(
    db: Database, tables: Sequence[str], named: set[tuple[str, str]]
) -> dict[str, list[str]]:
    """Per shown table (folded name), the folded columns a prompt may leave out, first to last
    kept: all but the first column, the keys (primary, and foreign in either direction between
    the shown tables) and the columns the question names; in schema order, except that the
    members of a column family after its first come last."""
    shown = {fold(name) for name in tables}
    keys: set[tuple[str, str]] = set()
    for name in tables:
        table = db.table(name)
        keys.update((fold(table.name), fold(c)) for c in table.primary_key)
        for fk in table.foreign_keys:
            if fold(fk.ref_table) in shown:
                keys.update((fold(table.name), fold(c)) for c in fk.columns)
                keys.update((fold(fk.ref_table), fold(c)) for c in fk.ref_columns)
    out: dict[str, list[str]] = {}
    for name in tables:
        key = fold(name)
        table = db.table(name)
        later = {fold(c.name) for family in column_families(table).families for c in family[1:]}
        cuttable = [
            fold(c.name)
            for c in table.columns[1:]
            if (key, fold(c.name)) not in keys and (key, fold(c.name)) not in named
        ]
        out[key] = [c for c in cuttable if c not in later] + [c for c in cuttable if c in later]
    return out


def _hidden(
    db: Database, tables: Sequence[str], named: set[tuple[str, str]], limit: int | None
) -> dict[str, set[str]]:
    """The columns left out when each table shows at most `limit` of its cuttable columns (the
    first ones; None: all)."""
    if limit is None:
        return {}
    return {
        key: set(columns[limit:])
        for key, columns in _cuttable(db, tables, named).items()
        if len(columns) > limit
    }


def _clipped(sample: DatabaseSample, max_chars: int) -> DatabaseSample:
    tables: dict[str, TableSample] = {}
    for key, table in sample.tables.items():
        rows = tuple(tuple(_clip_value(v, max_chars) for v in row) for row in table.rows)
        tables[key] = TableSample(table.table, table.columns, rows, table.row_count, {})
    return DatabaseSample(sample.db_id, tables)


def _clip_value(value: Any, max_chars: int) -> Any:
    if isinstance(value, str):
        return clip(value.replace("\n", " "), max_chars)
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    return value
