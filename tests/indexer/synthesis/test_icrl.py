"""The ICRL loop: offline (templates + rule feedback) and with a scripted LLM on both sides."""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from indexer.synthesis.feedback import LLMFeedback, RuleFeedback
from indexer.synthesis.icrl import run_icrl
from indexer.synthesis.llm_synthesizer import SYSTEM_PROMPT, LLMSynthesizer
from indexer.synthesis.pairs import Feedback, QAPair, SynthesisRequest
from indexer.synthesis.reward import Reward, reward
from indexer.synthesis.templates import TemplateSynthesizer
from indexer.validate import validate_sql
from providers.llm import LLMRequest
from providers.scripted import ScriptedLLM
from schemagraph import (
    Catalog,
    Database,
    Traversal,
    build_graph,
    enumerate_traversals,
    load_spider,
    sample_database,
)

SIMPLE = QAPair("What are the names of singers?", "SELECT Name FROM singer")
FILTERED = QAPair("Which singers are older than 30?", "SELECT Name FROM singer WHERE Age > 30")
GROUPED = QAPair(
    "Which countries have more than 2 singers?",
    "SELECT Country FROM singer GROUP BY Country HAVING COUNT(*) > 2",
)
RANKED = QAPair(
    "Which country has the most singers older than 30?",
    "SELECT Country FROM singer WHERE Age > 30 GROUP BY Country HAVING COUNT(*) > 1 "
    "ORDER BY COUNT(*) DESC LIMIT 1",
)
BROKEN = QAPair("What is the nickname of the oldest singer?", "SELECT Nickname FROM singer")


@dataclass
class Sequence:
    """A synthesizer that answers each call with the next pair of a script (one per call
    after the first, which gets `initial`)."""

    initial: list[QAPair]
    attempts: list[QAPair]
    name: str = "sequence"
    requests: list[SynthesisRequest] = field(default_factory=list)

    def synthesize(self, request: SynthesisRequest) -> list[QAPair]:
        self.requests.append(request)
        if len(self.requests) == 1:
            return self.initial[: request.count]
        index = len(self.requests) - 2
        return [self.attempts[index]] if index < len(self.attempts) else []


@dataclass
class Fixed:
    """Feedback that always says the same, recording what it was shown."""

    seen: list[tuple[QAPair, float]] = field(default_factory=list)

    def feedback(self, request: SynthesisRequest, pair: QAPair, reward: Reward) -> Feedback:
        self.seen.append((pair, reward.total))
        return Feedback("Make it harder.", ("GROUP BY",))


@pytest.fixture(scope="module")
def catalog(sample_dir: Path) -> Catalog:
    return load_spider(sample_dir)


@pytest.fixture
def singer(catalog: Catalog) -> SynthesisRequest:
    db = catalog.database("concert_singer")
    return SynthesisRequest(db, Traversal(db.id, ("singer",), "enumerated"), None)


def _valid(db: Database) -> Callable[[QAPair], bool]:
    return lambda pair: validate_sql(db, pair.sql).ok


def test_offline_icrl_raises_the_mean_reward_over_the_sample_databases(catalog: Catalog) -> None:
    synthesizer, feedback = TemplateSynthesizer(), RuleFeedback()
    initial, final = [], []
    for traversal in enumerate_traversals(build_graph(catalog)):
        db = catalog.database(traversal.db_id)
        request = SynthesisRequest(db, traversal, sample_database(db), count=2, seed=5)
        for chain in run_icrl(synthesizer, feedback, request, accept=_valid(db)):
            assert chain.accepted
            assert len(chain.rewards) == len(chain.attempts) == len(chain.scores)
            assert len(chain.feedback) == len(chain.attempts) - 1
            assert chain.final == chain.attempts[chain.iteration]
            assert chain.rewards[chain.iteration] >= chain.rewards[0]
            assert chain.final_reward.total == max(chain.rewards)
            initial.append(chain.rewards[0])
            final.append(chain.rewards[chain.iteration])
    assert len(initial) > 250
    assert statistics.mean(final) > statistics.mean(initial) + 3.0
    improved = sum(f > i for f, i in zip(final, initial, strict=True))
    assert improved > 0.8 * len(initial)


def test_the_chain_stops_when_the_reward_stops_improving(singer: SynthesisRequest) -> None:
    synthesizer = Sequence([FILTERED], [SIMPLE, RANKED, RANKED])
    feedback = Fixed()
    (chain,) = run_icrl(synthesizer, feedback, singer, iterations=5, chains=1)
    assert chain.attempts == (FILTERED, SIMPLE)
    assert chain.final == FILTERED and chain.iteration == 0
    assert chain.rewards == (reward(FILTERED.sql).total, reward(SIMPLE.sql).total)
    assert len(synthesizer.requests) == 2


def test_the_chain_climbs_and_feedback_is_about_the_kept_pair(singer: SynthesisRequest) -> None:
    synthesizer = Sequence([SIMPLE], [FILTERED, RANKED])
    feedback = Fixed()
    (chain,) = run_icrl(synthesizer, feedback, singer, iterations=2)
    assert chain.attempts == (SIMPLE, FILTERED, RANKED)
    assert chain.final == RANKED and chain.iteration == 2
    assert list(chain.rewards) == sorted(chain.rewards)
    assert [p for p, _ in feedback.seen] == [SIMPLE, FILTERED]
    second = synthesizer.requests[2]
    assert second.feedback == Feedback("Make it harder.", ("GROUP BY",))
    assert second.feedback_history == (Feedback("Make it harder.", ("GROUP BY",)),)
    assert second.previous == (SIMPLE, FILTERED)
    assert second.count == 1
    assert second.seed != synthesizer.requests[1].seed


def test_an_invalid_attempt_is_never_kept(singer: SynthesisRequest, catalog: Catalog) -> None:
    db = catalog.database("concert_singer")
    broken_but_rich = QAPair(
        "?", "SELECT Nickname FROM singer GROUP BY Nickname HAVING COUNT(*) > 1"
    )
    synthesizer = Sequence([FILTERED], [broken_but_rich, GROUPED])
    (chain,) = run_icrl(synthesizer, Fixed(), singer, iterations=2, accept=_valid(db))
    assert chain.valid == (True, False, True)
    assert reward(broken_but_rich.sql).total > reward(FILTERED.sql).total
    assert chain.final == GROUPED and chain.iteration == 2


def test_without_a_valid_attempt_the_chain_is_not_accepted(
    singer: SynthesisRequest, catalog: Catalog
) -> None:
    db = catalog.database("concert_singer")
    synthesizer = Sequence([BROKEN], [BROKEN, BROKEN])
    (chain,) = run_icrl(synthesizer, Fixed(), singer, iterations=2, accept=_valid(db))
    assert not chain.accepted
    assert chain.valid == (False, False, False)
    assert len(chain.attempts) == 3  # invalid attempts do not stop the chain


def test_ties_go_to_the_newer_attempt(singer: SynthesisRequest) -> None:
    same = QAPair("Which singers are younger than 40?", "SELECT Name FROM singer WHERE Age < 40")
    (chain,) = run_icrl(Sequence([FILTERED], [same]), Fixed(), singer, iterations=3)
    assert chain.final == same and chain.iteration == 1
    assert len(chain.attempts) == 2  # equal reward: not an improvement, the chain stops


def test_chains_iterations_and_a_short_initial_batch(singer: SynthesisRequest) -> None:
    assert [c.attempts for c in run_icrl(Sequence([SIMPLE], []), Fixed(), singer)] == [(SIMPLE,)]
    chains = run_icrl(Sequence([SIMPLE, FILTERED], []), Fixed(), singer, chains=3)
    assert [c.final for c in chains] == [SIMPLE, FILTERED]
    (only,) = run_icrl(Sequence([SIMPLE], [RANKED]), Fixed(), singer, iterations=0)
    assert only.attempts == (SIMPLE,) and only.feedback == ()
    with pytest.raises(ValueError, match="iterations"):
        run_icrl(Sequence([], []), Fixed(), singer, iterations=-1)
    with pytest.raises(ValueError, match="chains"):
        run_icrl(Sequence([], []), Fixed(), singer, chains=0)


def test_icrl_with_a_scripted_llm_as_synthesizer_and_critic(catalog: Catalog) -> None:
    db = catalog.database("concert_singer")
    request = SynthesisRequest(
        db, Traversal(db.id, ("singer",), "enumerated"), sample_database(db), count=1
    )

    def script(call: LLMRequest) -> str:
        prompt = call.messages[-1].content
        if call.system != SYSTEM_PROMPT:  # the critic
            return "Group the singers and keep large groups.\nOperators: GROUP BY, HAVING"
        if "Feedback for this attempt" not in prompt:
            return json.dumps([{"question": SIMPLE.question, "sql": SIMPLE.sql}])
        if GROUPED.question not in prompt:
            return json.dumps([{"question": GROUPED.question, "sql": GROUPED.sql}])
        return json.dumps([{"question": RANKED.question, "sql": RANKED.sql}])

    llm = ScriptedLLM(script)
    (chain,) = run_icrl(
        LLMSynthesizer(llm), LLMFeedback(llm), request, iterations=2, accept=_valid(db)
    )
    assert chain.attempts == (SIMPLE, GROUPED, RANKED)
    assert chain.final == RANKED and chain.iteration == 2
    assert chain.rewards[0] < chain.rewards[1] < chain.rewards[2]
    assert [f.operators for f in chain.feedback] == [("GROUP BY", "HAVING")] * 2
    synth_calls = [c for c in llm.calls if c.system == SYSTEM_PROMPT]
    last = synth_calls[-1].messages[-1].content
    assert "Group the singers and keep large groups." in last
    assert SIMPLE.question in last and GROUPED.question in last
