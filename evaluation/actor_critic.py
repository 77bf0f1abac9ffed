"""Simulation benchmark for AC-SQL's Theorem 1, run through the real actor-critic loop.

A scripted Actor (`providers.ScriptedLLM`) answers a question on the bundled concert_singer
database with the gold query with probability p and with one of several wrong but runnable
queries otherwise, wrapped in varied reply formats (code fences, prose, `SQL:` lines). A
scripted LLM Critic finds the query in its prompt's `<sql>` block and, if it is the gold one,
rejects it with probability s, else accepts it with probability q (the AC-SQL paper's meaning of
q and s), answering in odd formats
("True.", "**False**", "Answer: yes", JSON). `generator.critic.actor_critic` runs the loop with z
attempts and the real Execution Critic (safe executor, outcomes cached by SQL text). A trial is
correct when the returned query's result equals the gold result (Spider rule). Measured accuracy
is compared with `generator.critic.expected_accuracy`, with the binomial standard error of the
prediction.

JSON: `{"rows": [{"p", "q", "s", "z", "predicted", "measured", "trials", "std_error",
"z_score"}], "trials": n, "seed": s, "summary": {...}}`.
"""

from __future__ import annotations

import math
import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from generator.critic import ActorCriticConfig, actor_critic, expected_accuracy
from generator.errors import GeneratorConfigError
from generator.execution import cached_runner, database_runner
from generator.prompt import PromptConfig, build_prompt, judge_schema, prompt_sample
from providers import LLMRequest, ScriptedLLM
from schemagraph import Database
from schemagraph.seeds import derive_seed
from schemagraph.sql import QueryResult, spider_result_eq

QUESTION = "How many singers are from France?"
GOLD = "SELECT count(*) FROM singer WHERE Country = 'France'"
WRONG = (
    "SELECT count(*) FROM singer",
    "SELECT count(*) FROM singer WHERE Country = 'Netherlands'",
    "SELECT count(*) FROM singer WHERE Country != 'France'",
    "SELECT count(*) FROM concert",
    "SELECT Name FROM singer WHERE Country = 'France'",
)
DEFAULT_GRID: tuple[tuple[float, float, float, int], ...] = (
    (0.5, 0.1, 0.1, 1),
    (0.5, 0.1, 0.1, 2),
    (0.5, 0.1, 0.1, 3),
    (0.5, 0.1, 0.1, 5),
    (0.3, 0.3, 0.2, 3),
    (0.7, 0.3, 0.2, 3),
    (0.9, 0.3, 0.2, 3),
    (0.6, 0.0, 0.0, 3),
    (0.6, 0.2, 0.5, 3),
    (0.6, 0.6, 0.2, 3),
    (0.4, 0.5, 0.3, 2),
    (0.4, 0.5, 0.3, 5),
    (0.8, 0.1, 0.4, 4),
    (0.2, 0.2, 0.1, 5),
    (0.7, 0.4, 0.05, 2),
    (0.5, 0.6, 0.6, 4),
    (0.3774, 0.2541, 0.1973, 5),
)
"""(p, q, s, z) points: z from 1 to 5, p from 0.2 to 0.9, perfect and poor critics, and the
paper's worked example (p = 0.3774, q = 0.2541, s = 0.1973, z = 5: 0.6334)."""

MEANING = (
    "p: the actor writes the gold query; q: the critic accepts a wrong query; s: the critic "
    "rejects the gold query (AC-SQL's meaning); z: attempts, the last returned unchecked; "
    "predicted: the paper's equation 2"
)

_ACTOR_FORMATS = (
    "```sql\n{sql}\n```",
    "Here is the query:\n\n```SQL\n{sql};\n```\n\nIt filters the rows as asked.",
    "SQL: {sql}",
    "{sql};",
    '{{"sql": "{sql_json}"}}',
)
_VERDICTS = {
    True: ("True", "True.", "**True**", "Answer: yes", '{"correct": true}', "Verdict: correct"),
    False: (
        "False",
        "False.",
        "**False**",
        "Answer: no",
        '```json\n{"correct": false}\n```',
        "The query is not correct.",
    ),
}
_SQL_BLOCK = re.compile(r"<sql>\n(.*?)\n</sql>", re.DOTALL)


@dataclass(frozen=True)
class PointResult:
    p: float
    q: float
    s: float
    z: int
    predicted: float
    measured: float
    trials: int
    std_error: float
    z_score: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "p": self.p,
            "q": self.q,
            "s": self.s,
            "z": self.z,
            "predicted": round(self.predicted, 4),
            "measured": round(self.measured, 4),
            "trials": self.trials,
            "std_error": round(self.std_error, 4),
            "z_score": round(self.z_score, 2),
        }


def scripted_actor(p: float, rng: random.Random) -> ScriptedLLM:
    """An actor right with probability p, in varied reply formats."""

    def reply(request: LLMRequest) -> str:
        sql = GOLD if rng.random() < p else rng.choice(WRONG)
        return rng.choice(_ACTOR_FORMATS).format(sql=sql, sql_json=sql.replace('"', '\\"'))

    return ScriptedLLM(reply, model=f"actor-p{p}")


def scripted_critic(q: float, s: float, rng: random.Random) -> ScriptedLLM:
    """A critic accepting a wrong query with probability q and rejecting the gold one with s."""

    def reply(request: LLMRequest) -> str:
        found = _SQL_BLOCK.search(request.messages[-1].content)
        sql = found.group(1).strip() if found else ""
        accept = rng.random() >= s if sql == GOLD else rng.random() < q
        return rng.choice(_VERDICTS[accept])

    return ScriptedLLM(reply, model=f"critic-q{q}-s{s}")


def run_actor_critic_bench(
    db: Database,
    *,
    trials: int = 2000,
    seed: int = 0,
    grid: Sequence[tuple[float, float, float, int]] = DEFAULT_GRID,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Simulate every grid point on `db` (Spider's concert_singer, which the bundled sample
    carries) and report (see the module docstring)."""
    if trials < 1:
        raise GeneratorConfigError(f"trials must be >= 1, got {trials}")
    runner = cached_runner(database_runner(db))
    gold = runner(GOLD)
    if not isinstance(gold, QueryResult):
        raise GeneratorConfigError(f"database {db.id!r} cannot run the gold query {GOLD!r}")
    config = PromptConfig(seed=seed)
    prompt = build_prompt(QUESTION, db, sample=prompt_sample(db, config), config=config)
    schema = judge_schema(QUESTION, db, prompt)
    started = time.perf_counter()
    rows: list[PointResult] = []
    for number, (p, q, s, z) in enumerate(grid, 1):
        actor = scripted_actor(p, random.Random(derive_seed(seed, "actor", p, q, s, z)))
        critic = scripted_critic(q, s, random.Random(derive_seed(seed, "critic", p, q, s, z)))
        loop_config = ActorCriticConfig(attempts=z)
        correct = 0
        for _ in range(trials):
            result = actor_critic(
                QUESTION, prompt, actor, critic, runner, schema=schema, config=loop_config
            )
            outcome = runner(result.sql) if result.sql is not None else None
            if isinstance(outcome, QueryResult) and spider_result_eq(
                gold.rows, outcome.rows, order_matters=False
            ):
                correct += 1
        predicted = expected_accuracy(p, q, s, z)
        error = math.sqrt(max(predicted * (1 - predicted), 1e-12) / trials)
        measured = correct / trials
        rows.append(
            PointResult(
                p, q, s, z, predicted, measured, trials, error, (measured - predicted) / error
            )
        )
        if progress is not None:
            progress(number, len(grid))
    scores = [abs(r.z_score) for r in rows]
    return {
        "rows": [r.as_dict() for r in rows],
        "trials": trials,
        "seed": seed,
        "database": db.id,
        "question": QUESTION,
        "meaning": MEANING,
        "summary": {
            "points": len(rows),
            "max_abs_z_score": round(max(scores), 2),
            "within_2se": sum(1 for z in scores if z <= 2),
            "within_3se": sum(1 for z in scores if z <= 3),
            "chi_square": round(sum(z * z for z in scores), 2),
            "seconds": round(time.perf_counter() - started, 1),
        },
    }


def table_lines(report: dict[str, Any]) -> list[str]:
    """A markdown table of the report."""
    lines = [
        "| p | q | s | z | predicted | measured | std. error | (meas. − pred.) / s.e. |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in report["rows"]:
        lines.append(
            f"| {row['p']} | {row['q']} | {row['s']} | {row['z']} | {row['predicted']:.4f} | "
            f"{row['measured']:.4f} | {row['std_error']:.4f} | {row['z_score']:+.2f} |"
        )
    return lines
