"""The ICRL loop (DESIGN.md): in-context reinforcement learning of synthetic questions.

State: the serialized traversal, the questions written so far and the feedback so far (a
`SynthesisRequest`). Action: a new (question, SQL) pair from the synthesizer. Reward: the
keyword-bucket reward of its SQL (`indexer.synthesis.reward`). A feedback producer turns the
pair and its reward into an instruction for the next attempt.

`run_icrl` first asks the synthesizer for `chains` initial pairs (iteration 0), then improves
each in its own chain for up to `iterations` more attempts. Which pair a chain keeps: the paper
keeps the last one; here the chain keeps the newest attempt when it passes `accept` (the
caller's validation) and its reward is at least that of the pair kept so far, otherwise it keeps
what it had — so the kept pair is the best valid attempt, ties going to the newer one, and an
invalid attempt never replaces a valid one. Feedback is always about the kept pair. A chain
stops early when a valid attempt does not raise the reward (the paper saw most of the gain at
iteration 1 and a little at 2), or when the synthesizer returns nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace

from indexer.synthesis.pairs import (
    Feedback,
    FeedbackProducer,
    QAPair,
    SynthesisRequest,
    Synthesizer,
)
from indexer.synthesis.reward import Reward, reward
from schemagraph.seeds import derive_seed

log = logging.getLogger("indexer.icrl")  # the name log configurations know

Accept = Callable[[QAPair], bool]
Scorer = Callable[[str], Reward]


@dataclass(frozen=True)
class ChainResult:
    """One chain: the pair it kept (`final`, attempt number `iteration`, 0 = initial), every
    attempt with its reward (`rewards` totals, `scores` with the bucket breakdown), the feedback
    that preceded attempts 1.., which attempts passed `accept`, and whether `final` did (False
    only when no attempt was accepted; the caller should then drop the chain)."""

    final: QAPair
    iteration: int
    rewards: tuple[float, ...]
    attempts: tuple[QAPair, ...]
    scores: tuple[Reward, ...]
    feedback: tuple[Feedback, ...] = ()
    valid: tuple[bool, ...] = ()
    accepted: bool = True

    @property
    def initial_reward(self) -> Reward:
        return self.scores[0]

    @property
    def final_reward(self) -> Reward:
        return self.scores[self.iteration]


def run_icrl(
    synthesizer: Synthesizer,
    feedback_producer: FeedbackProducer,
    request: SynthesisRequest,
    *,
    iterations: int = 2,
    chains: int | None = None,
    accept: Accept | None = None,
    scorer: Scorer = reward,
) -> list[ChainResult]:
    """Run ICRL chains for one traversal; see the module docstring.

    `chains` defaults to `request.count`; `accept(pair)` (e.g. validation against the catalog)
    decides which attempts may be kept; `scorer` is the reward (for experiments). Returns one
    `ChainResult` per initial pair the synthesizer wrote (possibly fewer than `chains`).
    """
    if iterations < 0:
        raise ValueError(f"iterations must be >= 0, got {iterations}")
    wanted = request.count if chains is None else chains
    if wanted < 1:
        raise ValueError(f"chains must be >= 1, got {wanted}")
    initial = synthesizer.synthesize(replace(request, count=wanted))[:wanted]
    written: list[QAPair] = [*request.previous, *initial]
    results = []
    for index, pair in enumerate(initial):
        chain = _Chain(synthesizer, feedback_producer, request, index, accept, scorer, written)
        results.append(chain.run(pair, iterations))
    return results


class _Chain:
    """One chain's state; `written` is shared by the chains of a traversal (the questions so
    far), so later attempts see every question already written."""

    def __init__(
        self,
        synthesizer: Synthesizer,
        feedback_producer: FeedbackProducer,
        request: SynthesisRequest,
        index: int,
        accept: Accept | None,
        scorer: Scorer,
        written: list[QAPair],
    ) -> None:
        self.synthesizer = synthesizer
        self.feedback_producer = feedback_producer
        self.request = request
        self.index = index
        self.accept = accept
        self.scorer = scorer
        self.written = written
        self.attempts: list[QAPair] = []
        self.scores: list[Reward] = []
        self.valid: list[bool] = []
        self.feedback: list[Feedback] = []
        self.kept: int | None = None

    def run(self, initial: QAPair, iterations: int) -> ChainResult:
        self._record(initial)
        for iteration in range(1, iterations + 1):
            if not self._step(iteration):
                break
        return self._result()

    def _state(self, feedback: Feedback | None, iteration: int) -> SynthesisRequest:
        return replace(
            self.request,
            previous=tuple(self.written),
            feedback=feedback,
            feedback_history=tuple(self.feedback),
            count=1,
            seed=derive_seed(self.request.seed, "icrl", self.index, iteration),
        )

    def _step(self, iteration: int) -> bool:
        """One more attempt; False when the chain should stop."""
        basis = self.kept if self.kept is not None else len(self.attempts) - 1
        state = self._state(self.request.feedback, iteration)
        feedback = self.feedback_producer.feedback(state, self.attempts[basis], self.scores[basis])
        produced = self.synthesizer.synthesize(self._state(feedback, iteration))
        if not produced:
            log.debug("icrl: no attempt at iteration %d of chain %d", iteration, self.index)
            return False
        self.feedback.append(feedback)
        attempt = produced[0]
        self.written.append(attempt)
        before = self.scores[self.kept].total if self.kept is not None else None
        self._record(attempt)
        if not self.valid[-1] or before is None:
            return True
        return self.scores[-1].total > before

    def _record(self, pair: QAPair) -> None:
        score = self.scorer(pair.sql)
        ok = self.accept(pair) if self.accept is not None else True
        self.attempts.append(pair)
        self.scores.append(score)
        self.valid.append(ok)
        if ok and (self.kept is None or score.total >= self.scores[self.kept].total):
            self.kept = len(self.attempts) - 1

    def _result(self) -> ChainResult:
        kept = self.kept if self.kept is not None else len(self.attempts) - 1
        return ChainResult(
            final=self.attempts[kept],
            iteration=kept,
            rewards=tuple(s.total for s in self.scores),
            attempts=tuple(self.attempts),
            scores=tuple(self.scores),
            feedback=tuple(self.feedback),
            valid=tuple(self.valid),
            accepted=self.kept is not None,
        )
