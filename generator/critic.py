"""AC-SQL: an Actor writes SQL, two Critics judge it, the Actor tries again on a rejection.

The Execution Critic runs the query through the safe executor: an error, a refusal, a timeout
or a reply without SQL rejects it. The LLM Critic sees the question, the schema, the query and
the first rows of its result, and answers True or False (`verdicts.parse_verdict` reads odd
formats; a reply that commits to nothing counts as `ActorCriticConfig.unclear`). Up to `attempts`
(z) queries are written; the last one is returned without being checked. Every attempt and
verdict is kept in the result's trace.

Theorem 1 (see `expected_accuracy`), with the AC-SQL paper's parameters: the actor writes a
correct query with probability p; the critic accepts a wrong query with probability q (q = 0:
every wrong query is rejected) and rejects a correct one with probability s (s = 1: every
correct query is rejected). One checked attempt ends the loop correctly with probability
a = p(1-s), is rejected with probability r = p*s + (1-p)(1-q), and otherwise ends it wrongly;
so the expected accuracy after z attempts is a(1 - r^(z-1))/(1 - r) + r^(z-1) p (the paper's
equation 2; p when z = 1). The paper's worked example: p = 0.3774, q = 0.2541, s = 0.1973,
z = 5 gives 0.6334.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from generator.calls import CallOptions, call
from generator.candidates import generate_one
from generator.errors import GeneratorConfigError
from generator.execution import Candidate, Executed, Runner, outcome_summary
from generator.prompt import Prompt
from generator.text import DATA_RULE, data_block, render_rows
from generator.verdicts import parse_verdict
from providers import LLM, UsageMeter
from schemagraph.sql import QueryOutcome, QueryResult

log = logging.getLogger(__name__)

CRITIC_SYSTEM = (
    "You review SQLite queries written for a user's question and decide whether each one "
    "answers the question correctly. " + DATA_RULE
)
CRITIC_INSTRUCTION = (
    "Does the SQL query answer the question correctly over this schema, judging by the query "
    "and its result? Reply with one word: True or False."
)


@dataclass(frozen=True)
class ActorCriticConfig:
    """`attempts` is z. The first attempt uses `temperature`, later ones `retry_temperature`.
    `unclear` says what a critic reply without a verdict means ("reject" or "accept")."""

    attempts: int = 3
    temperature: float = 0.0
    retry_temperature: float = 0.7
    max_tokens: int = 512
    critic_max_tokens: int = 64
    unclear: str = "reject"
    result_rows: int = 10
    max_cell_chars: int = 40
    max_schema_chars: int = 12_000

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise GeneratorConfigError(f"attempts must be >= 1, got {self.attempts}")
        if self.unclear not in ("reject", "accept"):
            raise GeneratorConfigError(
                f"unclear must be 'reject' or 'accept', got {self.unclear!r}"
            )
        if self.temperature < 0 or self.retry_temperature < 0:
            raise GeneratorConfigError("temperatures must be >= 0")
        if self.result_rows < 0:
            raise GeneratorConfigError(f"result_rows must be >= 0, got {self.result_rows}")


@dataclass(frozen=True)
class Attempt:
    """One attempt: the candidate, its execution (None when not run), who decided and how.
    `verdict` is accepted, rejected or unchecked (the last attempt)."""

    number: int
    candidate: Candidate
    outcome: QueryOutcome | None
    verdict: str
    decided_by: str
    critic_reply: str | None = None

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "attempt": self.number,
            "sql": self.candidate.sql,
            "llm": self.candidate.llm,
            "temperature": self.candidate.temperature,
            "verdict": self.verdict,
            "decided_by": self.decided_by,
            "critic_reply": self.critic_reply,
        }
        if self.outcome is not None or self.decided_by == "execution critic":
            data["execution"] = outcome_summary(self.outcome)
        return data


@dataclass(frozen=True)
class ActorCriticResult:
    """The returned query; `accepted` when a checked attempt passed both critics."""

    sql: str | None
    accepted: bool
    attempts: tuple[Attempt, ...]

    @property
    def final(self) -> Attempt:
        return self.attempts[-1]

    def as_dict(self) -> dict[str, Any]:
        return {
            "sql": self.sql,
            "accepted": self.accepted,
            "attempts": [a.as_dict() for a in self.attempts],
        }


def expected_accuracy(p: float, q: float, s: float, z: int) -> float:
    """AC-SQL Theorem 1 (equation 2): expected accuracy of the loop. q: the probability that the
    critic accepts a wrong query; s: that it rejects a correct one (see the module docstring)."""
    for name, value in (("p", p), ("q", q), ("s", s)):
        if not 0.0 <= value <= 1.0:
            raise GeneratorConfigError(f"{name} must be in [0, 1], got {value}")
    if z < 1:
        raise GeneratorConfigError(f"z must be >= 1, got {z}")
    accept_correct = p * (1 - s)
    again = p * s + (1 - p) * (1 - q)
    checked = sum(accept_correct * again**k for k in range(z - 1))
    return checked + again ** (z - 1) * p


def execution_critic(executed: Executed) -> str | None:
    """Why the Execution Critic rejects `executed`, or None when it ran."""
    return executed.error


def critic_prompt(
    question: str, schema: str, sql: str, result: QueryResult, config: ActorCriticConfig
) -> str:
    """The LLM Critic's user message: question, schema, query and its first rows, as data."""
    rows = render_rows(
        result.columns,
        result.rows,
        max_rows=config.result_rows,
        max_cell_chars=config.max_cell_chars,
    )
    return "\n\n".join(
        [
            "### Question",
            data_block("question", question, 2000),
            "### Schema",
            data_block("schema", schema, config.max_schema_chars),
            "### SQL",
            data_block("sql", sql, 8000),
            "### Result (first rows)",
            data_block("result", rows, 8000),
            "### Task",
            CRITIC_INSTRUCTION,
        ]
    )


def llm_critic(
    critic: LLM,
    question: str,
    schema: str,
    sql: str,
    result: QueryResult,
    *,
    config: ActorCriticConfig | None = None,
    meter: UsageMeter | None = None,
) -> tuple[bool | None, str]:
    """The LLM Critic's verdict (None: the reply does not say) and its reply."""
    config = config or ActorCriticConfig()
    completion = call(
        critic,
        CRITIC_SYSTEM,
        critic_prompt(question, schema, sql, result, config),
        stage="critic",
        meter=meter,
        options=CallOptions(temperature=0.0, max_tokens=config.critic_max_tokens),
    )
    return parse_verdict(completion.text), completion.text


def actor_critic(
    question: str,
    prompt: Prompt,
    actor: LLM,
    critic: LLM,
    runner: Runner,
    *,
    schema: str,
    config: ActorCriticConfig | None = None,
    meter: UsageMeter | None = None,
    first_index: int = 0,
) -> ActorCriticResult:
    """Run the AC-SQL loop on `prompt` (see the module docstring). `schema`: the schema text
    the LLM Critic sees; `runner`: executes queries for the Execution Critic."""
    config = config or ActorCriticConfig()
    attempts: list[Attempt] = []
    for number in range(1, config.attempts + 1):
        options = CallOptions(
            temperature=config.temperature if number == 1 else config.retry_temperature,
            max_tokens=config.max_tokens,
            sample=number - 1,
        )
        candidate = generate_one(
            actor,
            prompt,
            index=first_index + number - 1,
            options=options,
            stage="actor",
            meter=meter,
        )
        if number == config.attempts:
            attempts.append(Attempt(number, candidate, None, "unchecked", "last attempt"))
            return ActorCriticResult(candidate.sql, False, tuple(attempts))
        outcome = runner(candidate.sql) if candidate.sql is not None else None
        executed = Executed(candidate, outcome)
        reason = execution_critic(executed)
        if reason is not None or not isinstance(outcome, QueryResult):
            log.info("attempt %d rejected by the execution critic: %s", number, reason)
            attempts.append(Attempt(number, candidate, outcome, "rejected", "execution critic"))
            continue
        assert candidate.sql is not None
        verdict, reply = llm_critic(
            critic, question, schema, candidate.sql, outcome, config=config, meter=meter
        )
        if verdict is None:
            log.info(
                "attempt %d: critic reply has no verdict; counted as %s", number, config.unclear
            )
            verdict = config.unclear == "accept"
            decided = f"llm critic (no verdict, counted as {config.unclear})"
        else:
            decided = "llm critic"
        attempts.append(
            Attempt(
                number,
                candidate,
                outcome,
                "accepted" if verdict else "rejected",
                decided,
                reply,
            )
        )
        if verdict:
            return ActorCriticResult(candidate.sql, True, tuple(attempts))
    raise AssertionError("unreachable: the last attempt always returns")  # pragma: no cover
