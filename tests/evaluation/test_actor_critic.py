"""The AC-SQL simulation: a scripted critic with the paper's q and s, and the real loop's
accuracy against Theorem 1."""

from __future__ import annotations

import random

import pytest

from evaluation.actor_critic import GOLD, WRONG, run_actor_critic_bench, scripted_critic
from generator.verdicts import parse_verdict
from providers import Message
from schemagraph import Database


@pytest.mark.parametrize(
    ("q", "s", "gold_accepted", "wrong_accepted"),
    [(1.0, 0.0, True, True), (0.0, 1.0, False, False), (1.0, 1.0, False, True)],
)
def test_the_simulated_critic_uses_the_papers_q_and_s(
    q: float, s: float, gold_accepted: bool, wrong_accepted: bool
) -> None:
    critic = scripted_critic(q, s, random.Random(0))
    for sql, accepted in ((GOLD, gold_accepted), (WRONG[0], wrong_accepted)):
        reply = critic.complete("", [Message.user(f"<sql>\n{sql}\n</sql>")]).text
        assert parse_verdict(reply) is accepted, (sql, reply)


def test_simulation_through_the_loop_agrees_with_theorem_one(concert: Database) -> None:
    report = run_actor_critic_bench(
        concert,
        trials=400,
        seed=3,
        grid=((0.5, 0.1, 0.1, 3), (0.3, 0.3, 0.5, 2), (0.8, 0.4, 0.1, 1)),
    )
    assert {tuple(r) for r in report["rows"]} == {
        ("p", "q", "s", "z", "predicted", "measured", "trials", "std_error", "z_score")
    }
    for row in report["rows"]:
        assert abs(row["z_score"]) < 4, row
        assert row["trials"] == 400
