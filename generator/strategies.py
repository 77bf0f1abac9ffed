"""Strategies: the generation stages composed into pipelines, each selected by name.

=============== ============================================================================
strategy        stages
=============== ============================================================================
single          prompt over the given schema → one call
presql          PreSQL over the given schema → table linking → FinSQL on the linked tables
                (PET-SQL)
actor-critic    PreSQL → linking → AC-SQL actor / execution critic / LLM critic loop
vote            PreSQL → linking → candidates from every LLM × temperature × sample →
                naive majority vote over execution results (PET-SQL cross-consistency)
fine-vote       as vote, but only the voters chosen for the PreSQL's Spider hardness vote
critique        as vote, but one critic call picks among all candidates (MSc-SQL), or a
                pairwise tournament when they do not fit the budget
rerank          as vote, but test-case re-ranking (Li & Xie) picks the candidate
=============== ============================================================================

`generate_sql` takes explicit inputs only: the question, the `Database`, the tables to show
(default all; the retriever's chosen tables when it is used), few-shot examples, the models and
a `GenerationConfig`. It returns the SQL with a JSON-ready trace of every stage.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from generator.calls import CallOptions
from generator.candidates import SamplingPlan, generate_candidates, generate_one
from generator.critic import ActorCriticConfig, ActorCriticResult, actor_critic
from generator.critique import CritiqueConfig, multi_sample_critique
from generator.errors import GeneratorConfigError
from generator.execution import (
    DEFAULT_RUN_LIMITS,
    Candidate,
    Executed,
    Runner,
    database_runner,
    run_candidates,
)
from generator.linking import Linking, link_tables
from generator.prompt import (
    FewShot,
    Prompt,
    PromptConfig,
    build_prompt,
    judge_schema,
    prompt_sample,
)
from generator.reranking import TestCaseConfig, rerank_by_tests
from generator.voting import Selection, VoterSets, fine_grained_vote, naive_vote
from providers import LLM, UsageMeter
from schemagraph import Database
from schemagraph.sql import Limits, Refusal, check_sql

log = logging.getLogger(__name__)

STRATEGIES: Mapping[str, str] = {
    "single": "one call on the given schema",
    "presql": "PreSQL, table linking, FinSQL on the linked tables (PET-SQL)",
    "actor-critic": "PreSQL linking, then the actor / execution critic / LLM critic loop (AC-SQL)",
    "vote": "PreSQL linking, candidates from every LLM and temperature, majority vote",
    "fine-vote": "as vote, with per-hardness voter sets (PET-SQL fine-grained)",
    "critique": "as vote, one critic call picks the candidate (MSc-SQL)",
    "rerank": "as vote, test-case re-ranking picks the candidate (Li & Xie)",
}
DEFAULT_STRATEGY = "presql"
EXECUTING = frozenset({"actor-critic", "vote", "fine-vote", "critique", "rerank"})
"""Strategies that run candidates, so they need the database's SQLite file."""


@dataclass(frozen=True)
class Models:
    """The LLMs of a generation: `generators` write SQL (the first writes the PreSQL, the
    FinSQL and the actor's attempts; all of them write vote candidates); `critic` judges
    (LLM critic, multi-sample critique, expected results of test cases); default: the first
    generator."""

    generators: tuple[LLM, ...]
    critic: LLM | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "generators", tuple(self.generators))
        if not self.generators:
            raise GeneratorConfigError("at least one generator LLM is needed")

    @property
    def main(self) -> LLM:
        return self.generators[0]

    @property
    def judge(self) -> LLM:
        return self.critic if self.critic is not None else self.generators[0]


@dataclass(frozen=True)
class GenerationConfig:
    """Every setting of a generation; each part validates itself."""

    strategy: str = DEFAULT_STRATEGY
    prompt: PromptConfig = field(default_factory=PromptConfig)
    sampling: SamplingPlan = field(default_factory=SamplingPlan)
    actor_critic: ActorCriticConfig = field(default_factory=ActorCriticConfig)
    critique: CritiqueConfig = field(default_factory=CritiqueConfig)
    tests: TestCaseConfig = field(default_factory=TestCaseConfig)
    voters: VoterSets | None = None
    limits: Limits = DEFAULT_RUN_LIMITS
    max_tokens: int = 512

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise GeneratorConfigError(
                f"unknown strategy {self.strategy!r}; choose one of {', '.join(STRATEGIES)}"
            )


@dataclass(frozen=True)
class TraceEvent:
    """One stage's record: its name and JSON-ready details."""

    stage: str
    data: Mapping[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {"stage": self.stage, **dict(self.data)}


@dataclass(frozen=True)
class GenerationResult:
    """The SQL (None when no reply held any, or when the guard refused the final one: then
    `refused` says why), the tables of the final prompt, the PreSQL and its hardness, the
    candidates with their execution, the selection or actor-critic run, and the trace."""

    question: str
    db_id: str
    strategy: str
    sql: str | None
    tables: tuple[str, ...]
    presql: str | None = None
    hardness: str | None = None
    candidates: tuple[Executed, ...] = ()
    selection: Selection | None = None
    actor_critic: ActorCriticResult | None = None
    trace: tuple[TraceEvent, ...] = ()
    refused: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "db_id": self.db_id,
            "strategy": self.strategy,
            "sql": self.sql,
            "refused": self.refused,
            "tables": list(self.tables),
            "presql": self.presql,
            "hardness": self.hardness,
            "trace": [event.as_dict() for event in self.trace],
        }


def generate_sql(
    question: str,
    db: Database,
    models: Models,
    *,
    tables: Sequence[str] | None = None,
    examples: Sequence[FewShot] = (),
    config: GenerationConfig | None = None,
    meter: UsageMeter | None = None,
    runner: Runner | None = None,
) -> GenerationResult:
    """SQL for `question` on `db` with the configured strategy (see the module docstring).
    `runner` executes candidates (default: the safe executor on `db`'s SQLite file)."""
    config = config or GenerationConfig()
    if not question.strip():
        raise GeneratorConfigError("the question is empty")
    strategy = config.strategy
    if strategy in EXECUTING and runner is None:
        runner = database_runner(db, config.limits)
    sample = prompt_sample(db, config.prompt)
    trace: list[TraceEvent] = []

    def prompt_for(stage: str, shown: Sequence[str] | None) -> Prompt:
        prompt = build_prompt(
            question, db, tables=shown, examples=examples, sample=sample, config=config.prompt
        )
        trace.append(TraceEvent(stage, prompt.as_dict()))
        return prompt

    def finish(sql: str | None, shown: Sequence[str], **extra: Any) -> GenerationResult:
        verdict = check_sql(sql) if sql is not None else None
        refused = None
        if isinstance(verdict, Refusal):
            refused = verdict.message
            trace.append(
                TraceEvent("guard", {"refused": refused, "sql": sql, "rule": verdict.rule.value})
            )
            sql = None
        return GenerationResult(
            question,
            db.id,
            strategy,
            sql,
            tuple(shown),
            trace=tuple(trace),
            refused=refused,
            **extra,
        )

    if strategy == "single":
        prompt = prompt_for("prompt", tables)
        candidate = generate_one(
            models.main, prompt, stage="generate", meter=meter, options=_options(config)
        )
        trace.append(TraceEvent("generate", _candidate_event(candidate)))
        return finish(candidate.sql, prompt.tables)

    pre_prompt = prompt_for("presql prompt", tables)
    presql = generate_one(
        models.main, pre_prompt, stage="presql", meter=meter, options=_options(config)
    )
    trace.append(TraceEvent("presql", _candidate_event(presql)))
    linking = link_tables(db, presql.sql, pre_prompt.tables)
    trace.append(TraceEvent("linking", linking.as_dict()))
    prompt = prompt_for("finsql prompt", linking.tables)
    common = {"presql": presql.sql, "hardness": linking.hardness}

    if strategy == "presql":
        final = generate_one(
            models.main, prompt, index=1, stage="finsql", meter=meter, options=_options(config)
        )
        trace.append(TraceEvent("finsql", _candidate_event(final)))
        return finish(final.sql, prompt.tables, **common)

    assert runner is not None
    if strategy == "actor-critic":
        loop = actor_critic(
            question,
            prompt,
            models.main,
            models.judge,
            runner,
            schema=judge_schema(
                question, db, prompt, max_chars=config.actor_critic.max_schema_chars
            ),
            config=config.actor_critic,
            meter=meter,
            first_index=1,
        )
        trace.append(TraceEvent("actor-critic", loop.as_dict()))
        return finish(loop.sql, prompt.tables, actor_critic=loop, **common)

    candidates = generate_candidates(models.generators, prompt, config.sampling, meter=meter)
    executed = run_candidates(candidates, runner)
    trace.append(TraceEvent("candidates", {"items": [e.as_dict() for e in executed]}))
    selection = select(
        strategy, question, db, executed, models, linking, prompt, config, meter=meter
    )
    trace.append(TraceEvent("selection", selection.as_dict()))
    return finish(
        selection.sql, prompt.tables, candidates=tuple(executed), selection=selection, **common
    )


def select(
    strategy: str,
    question: str,
    db: Database,
    executed: Sequence[Executed],
    models: Models,
    linking: Linking,
    prompt: Prompt,
    config: GenerationConfig,
    *,
    meter: UsageMeter | None = None,
) -> Selection:
    """Apply the selector of `strategy` to executed candidates (the judges read `prompt`'s
    schema and the columns the candidates name: `judge_schema`)."""
    sqls = [e.candidate.sql for e in executed]
    if strategy == "vote":
        return naive_vote(executed)
    if strategy == "fine-vote":
        return fine_grained_vote(executed, linking.hardness, config.voters or VoterSets({}))
    if strategy == "critique":
        schema = judge_schema(
            question, db, prompt, sqls, max_chars=config.critique.max_schema_chars
        )
        return multi_sample_critique(
            models.judge,
            question,
            schema,
            executed,
            config=config.critique,
            meter=meter,
            schema_at=lambda pair, chars: judge_schema(question, db, prompt, pair, max_chars=chars),
        )
    if strategy == "rerank":
        schema = judge_schema(question, db, prompt, sqls, max_chars=config.tests.max_schema_chars)
        return rerank_by_tests(
            question, db, executed, models.judge, schema=schema, config=config.tests, meter=meter
        )
    raise GeneratorConfigError(f"strategy {strategy!r} does not select among candidates")


def _options(config: GenerationConfig) -> CallOptions:
    return CallOptions(temperature=0.0, max_tokens=config.max_tokens)


def _candidate_event(candidate: Candidate) -> dict[str, Any]:
    data = candidate.as_dict()
    if candidate.sql is None:
        data["reply"] = candidate.reply[:300]
    return data
