"""`describe_tables`' text: CREATE TABLE statements of some tables of one database and of the
tables that join them, with descriptions, keys, sample rows and the join conditions, cut to a
token budget the way generation prompts are (`generator.prompt.build_prompt`)."""

from __future__ import annotations

from collections.abc import Sequence

from generator.prompt import PromptConfig, build_prompt, family_notes, schema_text
from generator.text import approx_tokens
from retriever.completion import adjacency, join_paths
from schemagraph import Database, DatabaseSample
from schemagraph.dialects import engine_label, sql_dialect
from schemagraph.model import fold
from schemarag.mcp.errors import EstateError
from schemarag.mcp.names import shown_name, table_id

__all__ = ["describe", "sample_config"]


def sample_config(sample_rows: int) -> PromptConfig:
    """The prompt settings a description is sampled and first laid out with (no budget)."""
    return PromptConfig(budget_tokens=1_000_000, sample_rows=sample_rows, max_cell_chars=40)


def describe(
    db: Database,
    tables: Sequence[str] | None,
    question: str,
    budget: int,
    sample: DatabaseSample | None,
    sample_rows: int,
) -> str:
    """The text of `tables` of `db` (all when None) for `question`, within `budget` tokens."""
    from generator.errors import GeneratorError

    names, bridges = with_bridges(db, tables)
    config = sample_config(sample_rows)
    asked = question.strip()
    try:
        whole = build_prompt(asked, db, tables=names, sample=sample, config=config)
        shown = schema_text(db, whole.tables, sample, whole.sample_rows)
        overhead = whole.tokens - approx_tokens(shown)
        prompt = build_prompt(
            asked,
            db,
            tables=names,
            sample=sample,
            config=PromptConfig(
                budget_tokens=budget + overhead,
                sample_rows=config.sample_rows,
                max_cell_chars=config.max_cell_chars,
            ),
        )
    except GeneratorError as exc:
        raise EstateError(str(exc)) from None
    text = schema_text(
        db,
        prompt.tables,
        sample,
        prompt.sample_rows,
        descriptions=not prompt.cuts.descriptions_dropped,
        hidden=prompt.hidden,
    )
    engine = engine_label(sql_dialect(db))
    lines = [
        f"-- database {db.id} ({engine} SQL): {len(prompt.tables)} of {len(db.tables)} tables",
        text,
    ]
    joins = join_conditions(db, prompt.tables)
    if joins:
        lines.append("-- joins:\n" + "\n".join(f"--   {j}" for j in joins))
    shards = family_notes(db, prompt.tables)
    if shards:
        lines.append("-- sharded tables:\n" + "\n".join(f"--   {n}" for n in shards))
    notes = []
    if bridges:
        notes.append(f"added {', '.join(bridges)} to join the tables asked for")
    notes += prompt.cuts.notes()
    notes = [n.replace("dropped the descriptions", "left out the descriptions") for n in notes]
    if prompt.cuts.any:
        notes.append(f"cut to {budget} tokens: ask for fewer tables or a larger max_tokens")
    if notes:
        lines.append("-- " + "; ".join(notes))
    return "\n".join(lines)


def with_bridges(db: Database, tables: Sequence[str] | None) -> tuple[list[str] | None, list[str]]:
    """`tables` in the database's spelling, plus the tables on the foreign-key paths that join
    them (the bridges, named apart)."""
    if not tables:
        return None, []
    tables = [table_id(db, t) for t in tables]
    missing = [t for t in tables if not db.has_table(t)]
    if missing:
        have = ", ".join(t.name for t in db.tables[:30])
        raise EstateError(f"database {db.id!r} has no table {missing[0]!r}; it has: {have}")
    real = {fold(t.name): t.name for t in db.tables}
    graph = adjacency(real.values(), ((fk.table, fk.ref_table) for fk in db.foreign_keys))
    order = join_paths(graph, [fold(t) for t in tables])
    names = [real[t] for t, _ in order]
    bridges = [real[t] for t, joins in order if joins is not None]
    return names, bridges


def join_conditions(db: Database, tables: Sequence[str]) -> list[str]:
    """`a.x = b.y` for each foreign key between two of `tables`."""
    shown = {fold(t) for t in tables}
    joins = []
    for fk in db.foreign_keys:
        if fold(fk.table) in shown and fold(fk.ref_table) in shown:
            pairs = zip(fk.columns, fk.ref_columns, strict=False)
            left, right = shown_name(db, fk.table), shown_name(db, fk.ref_table)
            joins.append(" AND ".join(f"{left}.{a} = {right}.{b}" for a, b in pairs))
    return list(dict.fromkeys(joins))
