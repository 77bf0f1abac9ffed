"""LLM-aided schema pooling (paper section 3.1): the top candidate schemas go to an LLM that
selects the relevant ones. Off unless an LLM is given."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from providers import LLM, Message, complete_json
from retriever.result import RankedDatabase

log = logging.getLogger(__name__)

#: a reply names at most a handful of databases
MAX_TOKENS = 200

SYSTEM = (
    "You route questions to databases. Given a question and candidate database schemas, pick "
    "the databases that can answer the question, best first, and for each the tables needed."
)


def pooling_prompt(
    question: str, candidates: Sequence[RankedDatabase], schemas: dict[str, str]
) -> str:
    parts = [f"Question: {question}", "", "Candidate databases:"]
    for db in candidates:
        parts.append(f"## {db.db_id}\n{schemas.get(db.db_id, '')}")
    # No "empty list when none fits" here: Qwen2.5-Coder-0.5B answered `[]` to every question
    # given that way out, which keeps the ranking as it was at the cost of a model call.
    # Database names only: asked for each database's tables too, the 0.5B listed "concert",
    # "singer", ... until it ran out of tokens, and the ranking only uses the order.
    parts.append(
        "Which of these databases can answer the question? Reply with JSON only: "
        '{"databases": ["<one of the names after ##>", ...]}, the best database first.'
    )
    return "\n".join(parts)


def pool(
    llm: LLM, question: str, candidates: Sequence[RankedDatabase], schemas: dict[str, str]
) -> list[tuple[str, list[str]]]:
    """The LLM's choice among `candidates`: (db_id, tables) best first, unknown ids dropped."""
    known = {db.db_id.casefold(): db for db in candidates}

    def validate(value: Any) -> list[tuple[str, list[str]]]:
        items = value["databases"] if isinstance(value, dict) else value
        if not isinstance(items, list):
            raise ValueError('expected {"databases": [...]}')
        out: list[tuple[str, list[str]]] = []
        for item in items:
            db_id = str(item["db_id"]) if isinstance(item, dict) else str(item)
            db = known.get(db_id.casefold())
            if db is None:
                continue
            names = {_name_key(t.name): t.name for t in db.tables}
            tables = item.get("tables", []) if isinstance(item, dict) else []
            picked = (names.get(_name_key(str(t))) for t in tables)
            out.append((db.db_id, list(dict.fromkeys(n for n in picked if n is not None))))
        return out

    prompt = pooling_prompt(question, candidates, schemas)
    chosen: list[tuple[str, list[str]]] = complete_json(
        llm, SYSTEM, [Message.user(prompt)], validate=validate, max_tokens=MAX_TOKENS
    )
    log.debug("pooling chose %s", chosen)
    return chosen


def reorder(
    llm: LLM,
    question: str,
    databases: Sequence[RankedDatabase],
    candidates: int,
    table_text: Callable[[str, str], str],
) -> list[RankedDatabase]:
    """`databases` with the LLM's choice among the first `candidates` first (`pool`), each
    shown as its chosen and ranked tables' documents (`table_text(db_id, table)`)."""
    shown = databases[:candidates]
    schemas = {
        db.db_id: "\n".join(
            table_text(db.db_id, name)
            for name in dict.fromkeys((*db.chosen_tables, *(t.name for t in db.tables)))
        )
        for db in shown
    }
    picked = pool(llm, question, shown, schemas)
    by_id = {db.db_id: db for db in databases}
    ordered = [by_id[d] for d, _ in picked]
    return ordered + [db for db in databases if db.db_id not in {d for d, _ in picked}]


def _name_key(name: str) -> str:
    """A table name as a model may write it back: the schemas show humanized names
    (`model list` for `model_list`), so case, spaces and underscores do not count."""
    return "".join(name.replace("_", " ").split()).casefold()
