"""MSc-SQL multi-sample critique: one critic call sees every candidate with its result or
error and names the best; a knock-out tournament of pairs when they do not fit the budget.

Candidates are numbered 1..n in the prompt (SQL in `<sql>`, rows in `<result>`, failures in
`<error>` blocks: data, not instructions); the reply is read with `verdicts.parse_index`. A
reply that names no valid candidate keeps the earlier one (generation order). Identical SQL
texts are shown once. More than `max_per_call` candidates, or a prompt over the budget even
without result rows, make a tournament instead: pairs are formed in generation order, an odd
one out goes through unopposed, and the winners meet in the next round until one is left.
A pair over the budget even without result rows reads a shorter schema: cut by columns
(`schema_at`, the judge's cut of `generator.prompt.judge_schema`, keeping the pair's columns),
else clipped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from generator.calls import CallOptions, call
from generator.errors import GeneratorConfigError
from generator.execution import Executed
from generator.text import DATA_RULE, approx_tokens, clip, data_block, render_rows
from generator.verdicts import parse_index
from generator.voting import Selection
from providers import LLM, UsageMeter

log = logging.getLogger(__name__)

CRITIQUE_SYSTEM = (
    "You compare candidate SQLite queries written for a user's question, looking at each "
    "query and what it returned, and pick the one that answers the question correctly. " + DATA_RULE
)
CRITIQUE_INSTRUCTION = (
    "Which candidate answers the question correctly? Reply with JSON only: "
    '{"best": N} where N is the candidate number.'
)
METHOD = "multi-sample critique"

#: the judge's schema for the given candidates' SQL in at most the given number of characters
#: (`generator.prompt.judge_schema`, which cuts columns before the character clip would)
SchemaAt = Callable[[Sequence[str | None], int], str]


@dataclass(frozen=True)
class CritiqueConfig:
    """`budget_tokens` bounds one critic prompt and `max_per_call` the candidates it shows;
    beyond either, the tournament of pairs is used."""

    budget_tokens: int = 6000
    max_per_call: int = 8
    result_rows: int = 5
    max_cell_chars: int = 40
    max_schema_chars: int = 8000
    max_tokens: int = 64

    def __post_init__(self) -> None:
        if self.budget_tokens < 100:
            raise GeneratorConfigError(f"budget_tokens must be >= 100, got {self.budget_tokens}")
        if self.result_rows < 0:
            raise GeneratorConfigError(f"result_rows must be >= 0, got {self.result_rows}")
        if self.max_per_call < 2:
            raise GeneratorConfigError(f"max_per_call must be >= 2, got {self.max_per_call}")


def critique_prompt(
    question: str,
    schema: str,
    items: Sequence[Executed],
    *,
    result_rows: int,
    max_cell_chars: int,
    max_schema_chars: int,
) -> str:
    """The critic's user message for `items`, numbered from 1."""
    parts = [
        "### Question",
        data_block("question", question, 2000),
        "### Schema",
        data_block("schema", schema, max_schema_chars),
    ]
    for number, item in enumerate(items, 1):
        parts.append(f"### Candidate {number}")
        parts.append(data_block("sql", item.candidate.sql or "", 8000))
        result = item.result
        if result is None:
            parts.append(data_block("error", item.error or "did not run", 500))
        else:
            table = render_rows(
                result.columns, result.rows, max_rows=result_rows, max_cell_chars=max_cell_chars
            )
            parts.append(data_block("result", table, 8000))
    parts += ["### Task", CRITIQUE_INSTRUCTION]
    return "\n\n".join(parts)


def multi_sample_critique(
    critic: LLM,
    question: str,
    schema: str,
    executed: Sequence[Executed],
    *,
    config: CritiqueConfig | None = None,
    meter: UsageMeter | None = None,
    schema_at: SchemaAt | None = None,
) -> Selection:
    """The candidate the critic prefers (see the module docstring). `schema_at`: a shorter
    schema for a pair whose prompt is over the budget (else `schema` is clipped)."""
    config = config or CritiqueConfig()
    pool = _distinct_with_sql(executed)
    if not pool:
        return Selection(METHOD, None, None, "no candidate holds SQL")
    if len(pool) == 1:
        only = pool[0]
        return Selection(
            METHOD, only, executed[only].candidate.sql, "one distinct candidate; no call needed"
        )
    text = None
    if len(pool) <= config.max_per_call:
        text = _fitting_prompt(question, schema, [executed[p] for p in pool], config)
    if text is not None:
        reply = _ask(critic, text, config, meter)
        choice = parse_index(reply, len(pool))
        position = pool[choice if choice is not None else 0]
        reason = (
            f"the critic chose candidate {choice + 1} of {len(pool)}"
            if choice is not None
            else "the critic's reply named no candidate; kept the first"
        )
        details = {
            "mode": "single call",
            "calls": 1,
            "shown": _indexes(executed, pool),
            "reply": clip(reply, 300),
        }
        return Selection(METHOD, position, executed[position].candidate.sql, reason, details)
    return _tournament(critic, question, schema, executed, pool, config, meter, schema_at)


def _tournament(
    critic: LLM,
    question: str,
    schema: str,
    executed: Sequence[Executed],
    pool: list[int],
    config: CritiqueConfig,
    meter: UsageMeter | None,
    schema_at: SchemaAt | None,
) -> Selection:
    matches: list[dict[str, Any]] = []
    current = list(pool)
    while len(current) > 1:
        winners: list[int] = []
        for offset in range(0, len(current) - 1, 2):
            a, b = current[offset], current[offset + 1]
            text = _fitting_prompt(question, schema, [executed[a], executed[b]], config)
            if text is None:
                pair = [executed[a], executed[b]]
                text = _squeezed_prompt(question, schema, pair, config, schema_at)
            reply = _ask(critic, text, config, meter)
            choice = parse_index(reply, 2)
            winner = b if choice == 1 else a
            winners.append(winner)
            matches.append(
                {
                    "a": executed[a].candidate.index,
                    "b": executed[b].candidate.index,
                    "winner": executed[winner].candidate.index,
                    "clear": choice is not None,
                }
            )
        if len(current) % 2:
            winners.append(current[-1])
        current = winners
    position = current[0]
    details = {
        "mode": "tournament",
        "calls": len(matches),
        "matches": matches,
        "shown": _indexes(executed, pool),
    }
    reason = f"won a tournament of {len(pool)} candidates in {len(matches)} pairwise calls"
    return Selection(METHOD, position, executed[position].candidate.sql, reason, details)


def _fitting_prompt(
    question: str, schema: str, items: Sequence[Executed], config: CritiqueConfig
) -> str | None:
    """The prompt with as many result rows as fit the budget (down to none), or None."""
    for rows in dict.fromkeys((config.result_rows, 1, 0)):
        text = critique_prompt(
            question,
            schema,
            items,
            result_rows=rows,
            max_cell_chars=config.max_cell_chars,
            max_schema_chars=config.max_schema_chars,
        )
        if approx_tokens(CRITIQUE_SYSTEM) + approx_tokens(text) <= config.budget_tokens:
            return text
    return None


def _squeezed_prompt(
    question: str,
    schema: str,
    items: Sequence[Executed],
    config: CritiqueConfig,
    schema_at: SchemaAt | None,
) -> str:
    """A pair's prompt with the schema shortened to what the budget leaves (at least 200
    chars): by `schema_at` when given, then clipped if still over."""
    bare = critique_prompt(
        question,
        "",
        items,
        result_rows=0,
        max_cell_chars=config.max_cell_chars,
        max_schema_chars=10,
    )
    spare = config.budget_tokens - approx_tokens(CRITIQUE_SYSTEM) - approx_tokens(bare)
    chars = max(200, spare * 4)
    if schema_at is not None:
        schema = schema_at([item.candidate.sql for item in items], chars)
    log.info("critique pair over budget; schema shortened to %d characters", chars)
    return critique_prompt(
        question,
        schema,
        items,
        result_rows=0,
        max_cell_chars=config.max_cell_chars,
        max_schema_chars=chars,
    )


def _ask(critic: LLM, text: str, config: CritiqueConfig, meter: UsageMeter | None) -> str:
    completion = call(
        critic,
        CRITIQUE_SYSTEM,
        text,
        stage="critique",
        meter=meter,
        options=CallOptions(temperature=0.0, max_tokens=config.max_tokens),
    )
    return completion.text


def _distinct_with_sql(executed: Sequence[Executed]) -> list[int]:
    seen: set[str] = set()
    pool: list[int] = []
    for position, item in enumerate(executed):
        sql = item.candidate.sql
        if sql is None:
            continue
        key = " ".join(sql.split()).rstrip(";").lower()
        if key not in seen:
            seen.add(key)
            pool.append(position)
    return pool


def _indexes(executed: Sequence[Executed], positions: Sequence[int]) -> list[int]:
    return [executed[p].candidate.index for p in positions]
