"""One LLM call as a pipeline stage makes it: recorded in a `UsageMeter` under the stage name."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

from providers import LLM, Completion, LLMRequest, Message, UsageMeter, complete_many

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CallOptions:
    """Sampling options for one call."""

    temperature: float = 0.0
    max_tokens: int = 512
    sample: int = 0


def call(
    llm: LLM,
    system: str,
    user: str,
    *,
    stage: str,
    meter: UsageMeter | None = None,
    options: CallOptions | None = None,
) -> Completion:
    """`llm.complete` with one user message, counted under `stage` when `meter` is given."""
    options = options or CallOptions()
    completion = llm.complete(
        system,
        (Message.user(user),),
        temperature=options.temperature,
        max_tokens=options.max_tokens,
        sample=options.sample,
    )
    if meter is not None:
        meter.record_completion(stage, completion)
    return completion


def call_many(
    llm: LLM,
    requests: Sequence[LLMRequest],
    *,
    stage: str,
    meter: UsageMeter | None = None,
    max_concurrency: int = 4,
) -> list[Completion]:
    """Several requests to one LLM with bounded concurrency, in request order, all counted."""
    completions = complete_many(llm, requests, max_concurrency=max_concurrency)
    if meter is not None:
        for completion in completions:
            meter.record_completion(stage, completion)
    return completions
