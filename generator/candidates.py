"""Cross-consistency candidates (PET-SQL): several LLMs and/or temperatures on one prompt.

Each reply is read with `extract.extract_sql`; a reply without SQL still becomes a `Candidate`
(with `sql=None`) so that the trace shows it and the selectors skip it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from generator.calls import CallOptions, call, call_many
from generator.errors import GeneratorConfigError
from generator.execution import Candidate
from generator.extract import extract_sql
from generator.prompt import Prompt
from providers import LLM, Completion, LLMRequest, UsageMeter

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SamplingPlan:
    """Which calls make the candidates: every LLM at every temperature, `samples` times."""

    temperatures: tuple[float, ...] = (0.0,)
    samples: int = 1
    max_tokens: int = 512
    max_concurrency: int = 4

    def __post_init__(self) -> None:
        object.__setattr__(self, "temperatures", tuple(self.temperatures))
        if not self.temperatures:
            raise GeneratorConfigError("temperatures must not be empty")
        if any(t < 0 for t in self.temperatures):
            raise GeneratorConfigError(f"temperatures must be >= 0, got {self.temperatures}")
        if self.samples < 1:
            raise GeneratorConfigError(f"samples must be >= 1, got {self.samples}")
        if self.max_tokens < 16:
            raise GeneratorConfigError(f"max_tokens must be >= 16, got {self.max_tokens}")
        if self.max_concurrency < 1:
            raise GeneratorConfigError(f"max_concurrency must be >= 1, got {self.max_concurrency}")


def candidate_from(completion: Completion, index: int, llm: LLM, options: CallOptions) -> Candidate:
    """The candidate a completion gives (its SQL, or None when there is none)."""
    sql = extract_sql(completion.text)
    if sql is None:
        log.info("%s: reply %d holds no SQL", llm.name, index)
    return Candidate(
        index=index,
        sql=sql,
        llm=llm.name,
        temperature=options.temperature,
        sample=options.sample,
        logprob=completion.logprob,
        reply=completion.text,
    )


def generate_one(
    llm: LLM,
    prompt: Prompt,
    *,
    index: int = 0,
    options: CallOptions | None = None,
    stage: str = "generate",
    meter: UsageMeter | None = None,
) -> Candidate:
    """One call, one candidate."""
    options = options or CallOptions()
    completion = call(llm, prompt.system, prompt.user, stage=stage, meter=meter, options=options)
    return candidate_from(completion, index, llm, options)


def generate_candidates(
    llms: Sequence[LLM],
    prompt: Prompt,
    plan: SamplingPlan | None = None,
    *,
    stage: str = "candidates",
    meter: UsageMeter | None = None,
) -> list[Candidate]:
    """Candidates in generation order: for each LLM, each temperature, each sample."""
    if not llms:
        raise GeneratorConfigError("at least one LLM is needed to generate candidates")
    plan = plan or SamplingPlan()
    candidates: list[Candidate] = []
    for llm in llms:
        options = [
            CallOptions(temperature=t, max_tokens=plan.max_tokens, sample=s)
            for t in plan.temperatures
            for s in range(plan.samples)
        ]
        requests = [
            LLMRequest.of(
                prompt.system,
                prompt.user,
                temperature=o.temperature,
                max_tokens=o.max_tokens,
                sample=o.sample,
            )
            for o in options
        ]
        completions = call_many(
            llm, requests, stage=stage, meter=meter, max_concurrency=plan.max_concurrency
        )
        for option, completion in zip(options, completions, strict=True):
            candidates.append(candidate_from(completion, len(candidates), llm, option))
    return candidates
