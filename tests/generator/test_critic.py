"""AC-SQL: the actor-critic loop, its critics and trace, and Theorem 1."""

from __future__ import annotations

import itertools

import pytest

from generator import ActorCriticConfig, actor_critic, build_prompt, expected_accuracy
from generator.errors import GeneratorConfigError
from generator.execution import Runner
from providers import LLMRequest, ScriptedLLM
from schemagraph import Database

QUESTION = "How many singers are from France?"
GOOD = "SELECT count(*) FROM singer WHERE Country = 'France'"


def _loop(concert: Database, runner: Runner, actor: ScriptedLLM, critic: ScriptedLLM, z: int = 3):
    prompt = build_prompt(QUESTION, concert, tables=["singer"])
    return actor_critic(
        QUESTION,
        prompt,
        actor,
        critic,
        runner,
        schema="singer(...)",
        config=ActorCriticConfig(attempts=z),
    )


def test_accepted_first_attempt_stops_the_loop(concert: Database, concert_runner: Runner) -> None:
    actor = ScriptedLLM(f"```sql\n{GOOD}\n```", model="actor")
    critic = ScriptedLLM("**True**", model="critic")
    result = _loop(concert, concert_runner, actor, critic)
    assert result.sql == GOOD and result.accepted
    assert [a.verdict for a in result.attempts] == ["accepted"]
    assert result.attempts[0].decided_by == "llm critic"
    # the critic saw the query and its result as delimited data
    seen = critic.calls[0].messages[-1].content
    assert f"<sql>\n{GOOD}\n</sql>" in seen and "<result>" in seen and "4" in seen


def test_execution_critic_rejects_failing_sql_without_asking_the_llm(
    concert: Database, concert_runner: Runner
) -> None:
    actor = ScriptedLLM(["SELECT nope FROM singer", "no SQL here", f"SQL: {GOOD}"], model="a")
    critic = ScriptedLLM("True.", model="critic")
    result = _loop(concert, concert_runner, actor, critic)
    assert [(a.verdict, a.decided_by) for a in result.attempts] == [
        ("rejected", "execution critic"),
        ("rejected", "execution critic"),
        ("unchecked", "last attempt"),
    ]
    assert critic.call_count == 0
    assert result.sql == GOOD and not result.accepted
    trace = result.as_dict()
    assert "no such column" in trace["attempts"][0]["execution"]["error"]
    assert trace["attempts"][1]["execution"] == {"ok": False, "error": "no SQL in the reply"}


@pytest.mark.parametrize(
    ("verdicts", "accepted_at"),
    [
        (["Answer: no", "**False**", "x"], None),
        (['{"correct": false}', "Answer: yes"], 2),
        (["The query is not correct.", "Verdict: correct"], 2),
    ],
)
def test_llm_critic_verdicts_in_odd_formats(
    concert: Database, concert_runner: Runner, verdicts: list[str], accepted_at: int | None
) -> None:
    actor = ScriptedLLM(["SELECT count(*) FROM singer", GOOD, GOOD], model="a")
    critic = ScriptedLLM(verdicts, model="critic")
    result = _loop(concert, concert_runner, actor, critic)
    if accepted_at is None:
        assert [a.verdict for a in result.attempts] == ["rejected", "rejected", "unchecked"]
    else:
        assert len(result.attempts) == accepted_at and result.accepted
        assert result.attempts[-1].verdict == "accepted"


def test_unclear_verdict_counts_as_configured(concert: Database, concert_runner: Runner) -> None:
    actor = ScriptedLLM(GOOD, model="a")
    prompt = build_prompt(QUESTION, concert, tables=["singer"])
    for unclear, verdict in [("reject", "rejected"), ("accept", "accepted")]:
        critic = ScriptedLLM("Hmm, hard to say.", model="critic")
        result = actor_critic(
            QUESTION,
            prompt,
            actor,
            critic,
            concert_runner,
            schema="",
            config=ActorCriticConfig(attempts=2, unclear=unclear),
        )
        assert result.attempts[0].verdict == verdict
        assert "no verdict" in result.attempts[0].decided_by


def test_retries_use_the_retry_temperature_and_new_samples(
    concert: Database, concert_runner: Runner
) -> None:
    seen: list[tuple[float, int]] = []

    def reply(request: LLMRequest) -> str:
        seen.append((request.temperature, request.sample))
        return "SELECT nope"

    _loop(concert, concert_runner, ScriptedLLM(reply), ScriptedLLM("True"), z=3)
    assert seen == [(0.0, 0), (0.7, 1), (0.7, 2)]


def test_one_attempt_is_returned_unchecked(concert: Database, concert_runner: Runner) -> None:
    critic = ScriptedLLM("False")
    result = _loop(concert, concert_runner, ScriptedLLM("SELECT nope"), critic, z=1)
    assert result.sql == "SELECT nope" and result.attempts[0].verdict == "unchecked"
    assert critic.call_count == 0


def test_theorem_one_closed_forms() -> None:
    for p, z in itertools.product((0.0, 0.3, 0.9, 1.0), (1, 2, 5)):
        assert expected_accuracy(p, 0.3, 0.4, 1) == pytest.approx(p)
        # a perfect critic: wrong only if all z attempts are wrong
        assert expected_accuracy(p, 0.0, 0.0, z) == pytest.approx(1 - (1 - p) ** z)
        # a critic that accepts everything (q = 1, s = 0): the first attempt decides
        assert expected_accuracy(p, 1.0, 0.0, z) == pytest.approx(p)
    # a critic that rejects everything (q = 0, s = 1): the last, unchecked attempt decides
    assert expected_accuracy(0.4, 0.0, 1.0, 4) == pytest.approx(0.4)
    # a critic that accepts every wrong query but rejects some correct ones is worse than none
    assert expected_accuracy(0.5, 1.0, 0.5, 3) < 0.5
    with pytest.raises(GeneratorConfigError):
        expected_accuracy(1.2, 0, 0, 1)
    with pytest.raises(GeneratorConfigError):
        expected_accuracy(0.5, 0, 0, 0)


def test_theorem_one_matches_the_papers_worked_example() -> None:
    # AC-SQL: q is the chance a wrong query is accepted, s that a correct one is rejected
    assert expected_accuracy(0.3774, 0.2541, 0.1973, 5) == pytest.approx(0.6334, abs=5e-5)
    p, q, s = 0.3774, 0.2541, 0.1973
    rejected = p * s + (1 - p) * (1 - q)
    accepted_correct = p * (1 - s)
    by_hand = sum(accepted_correct * rejected**k for k in range(4)) + rejected**4 * p
    assert expected_accuracy(p, q, s, 5) == pytest.approx(by_hand)


def test_config_is_validated() -> None:
    with pytest.raises(GeneratorConfigError, match="attempts"):
        ActorCriticConfig(attempts=0)
    with pytest.raises(GeneratorConfigError, match="unclear"):
        ActorCriticConfig(unclear="maybe")
