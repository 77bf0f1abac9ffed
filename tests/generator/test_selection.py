"""Selectors: naive and fine-grained votes (with ties and failing candidates), random, and
MSc-SQL multi-sample critique with its tournament."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from generator import CritiqueConfig, Executed, VoterSets, multi_sample_critique, random_choice
from generator.errors import GeneratorConfigError
from generator.voting import fine_grained_vote, naive_vote
from providers import LLMRequest, ScriptedLLM

Make = Callable[..., list[Executed]]
COUNT = "SELECT count(*) FROM singer"
COUNT_ALT = "SELECT COUNT(Singer_ID) FROM singer"
FRANCE = "SELECT count(*) FROM singer WHERE Country = 'France'"
NAMES = "SELECT Name FROM singer"
NAMES_REVERSED = "SELECT Name FROM singer ORDER BY Name DESC"


def test_naive_vote_picks_the_majority_result_across_different_sql(run_all: Make) -> None:
    executed = run_all(FRANCE, COUNT, NAMES, COUNT_ALT)
    selection = naive_vote(executed)
    assert selection.position == 1 and selection.sql == COUNT
    assert "2 of 4" in selection.reason and selection.details["tie"] is False


def test_naive_vote_ignores_row_order(run_all: Make) -> None:
    selection = naive_vote(run_all(COUNT, NAMES, NAMES_REVERSED))
    assert selection.sql == NAMES


def test_naive_vote_breaks_ties_by_generation_order(run_all: Make) -> None:
    selection = naive_vote(run_all(FRANCE, COUNT, COUNT_ALT, "SELECT 4"))
    assert selection.sql == FRANCE  # FRANCE and "SELECT 4" give 4: tie 2-2, FRANCE is first
    assert selection.details["tie"] is True and "tie broken" in selection.reason
    assert naive_vote(run_all(NAMES, COUNT)).sql == NAMES


def test_failing_and_missing_candidates_do_not_vote(run_all: Make) -> None:
    executed = run_all("SELECT nope FROM singer", None, "SELECT nope FROM singer", COUNT)
    selection = naive_vote(executed)
    assert selection.sql == COUNT and selection.details["failed"] == [0, 1, 2]


def test_when_nothing_runs_the_first_candidate_with_sql_is_returned(run_all: Make) -> None:
    selection = naive_vote(run_all(None, "SELECT nope", "SELECT bad"))
    assert selection.position == 1 and "no candidate ran" in selection.reason
    assert naive_vote(run_all(None, None)).position is None
    assert naive_vote([]).position is None


def test_fine_grained_vote_counts_only_the_voters_of_the_hardness(run_all: Make) -> None:
    executed = run_all((COUNT, "a"), (COUNT, "b"), (FRANCE, "c"), (FRANCE, "d"), (FRANCE, "e"))
    sets = VoterSets({"easy": ("a", "b", "c"), "hard": ("c", "d")})
    assert fine_grained_vote(executed, "easy", sets).sql == COUNT
    assert fine_grained_vote(executed, "hard", sets).position == 2
    # no set for the level, or no hardness: everyone votes
    everyone = fine_grained_vote(executed, "extra", sets)
    assert everyone.sql == FRANCE and "every candidate voted" in everyone.reason
    assert fine_grained_vote(executed, None, sets).sql == FRANCE


def test_fine_grained_vote_falls_back_when_its_voters_cannot_run(run_all: Make) -> None:
    executed = run_all(("SELECT nope", "a"), (COUNT, "b"), (COUNT, "c"))
    selection = fine_grained_vote(executed, "easy", VoterSets({"easy": ("a",)}))
    assert selection.sql == COUNT and "no runnable candidate" in selection.reason


def test_voter_sets_reject_unknown_levels() -> None:
    with pytest.raises(GeneratorConfigError, match="unknown hardness"):
        VoterSets({"impossible": ("a",)})


def test_random_choice_is_seeded(run_all: Make) -> None:
    executed = run_all(COUNT, FRANCE, NAMES, COUNT_ALT)
    picks = {random_choice(executed, seed).position for seed in range(40)}
    assert picks == {0, 1, 2, 3}
    assert random_choice(executed, 7) == random_choice(executed, 7)


def _critic(replies: str | list[str]) -> ScriptedLLM:
    return ScriptedLLM(replies, model="critic")


def test_critique_shows_all_candidates_with_results_or_errors(run_all: Make) -> None:
    critic = _critic('```json\n{"best": 3}\n```')
    executed = run_all(COUNT, "SELECT nope FROM singer", FRANCE)
    selection = multi_sample_critique(critic, "How many from France?", "singer(...)", executed)
    assert selection.sql == FRANCE and selection.details["mode"] == "single call"
    prompt = critic.calls[0].messages[-1].content
    assert prompt.count("### Candidate") == 3
    assert "<error>" in prompt and "no such column" in prompt and "<result>" in prompt


@pytest.mark.parametrize(
    ("reply", "expected"),
    [("Candidate 2", FRANCE), ("2", FRANCE), ("None is good.", COUNT), ("Candidate 9", COUNT)],
)
def test_critique_reads_odd_replies_and_keeps_the_first_when_unclear(
    run_all: Make, reply: str, expected: str
) -> None:
    selection = multi_sample_critique(_critic(reply), "q", "s", run_all(COUNT, FRANCE))
    assert selection.sql == expected


def test_critique_shows_identical_sql_once_and_skips_missing_sql(run_all: Make) -> None:
    critic = _critic("2")
    executed = run_all(None, COUNT, COUNT, FRANCE)
    selection = multi_sample_critique(critic, "q", "s", executed)
    assert selection.position == 3
    assert selection.details["shown"] == [1, 3]
    one = multi_sample_critique(critic, "q", "s", run_all(COUNT, COUNT))
    assert one.position == 0 and critic.call_count == 1  # no call for a single distinct query


def test_critique_runs_a_pairwise_tournament_beyond_max_per_call(run_all: Make) -> None:
    executed = run_all(COUNT, FRANCE, NAMES, "SELECT Age FROM singer", "SELECT 42")

    rank = {FRANCE: 1, "SELECT 42": 2}

    def prefer(request: LLMRequest) -> str:
        shown = re.findall(r"<sql>\n(.*?)\n</sql>", request.messages[-1].content)
        return "2" if rank.get(shown[1], 0) > rank.get(shown[0], 0) else "1"

    critic = ScriptedLLM(prefer, model="critic")
    selection = multi_sample_critique(
        critic, "q", "s", executed, config=CritiqueConfig(max_per_call=2)
    )
    assert selection.details["mode"] == "tournament"
    # round 1: (0,1)->1, (2,3)->2, 4 unopposed; round 2: (1,2)->1; round 3: (1,4)->4
    assert [m["winner"] for m in selection.details["matches"]] == [1, 2, 1, 4]
    assert selection.sql == "SELECT 42"
    assert critic.call_count == 4
    assert all(c.messages[-1].content.count("### Candidate") == 2 for c in critic.calls)


def test_critique_uses_the_tournament_when_the_prompt_exceeds_the_budget(run_all: Make) -> None:
    critic = _critic("Candidate 2")
    executed = run_all(COUNT, FRANCE, NAMES)
    config = CritiqueConfig(budget_tokens=260)
    selection = multi_sample_critique(critic, "q", "x" * 400, executed, config=config)
    assert selection.details["mode"] == "tournament"
    assert selection.sql == NAMES


def test_critique_config_is_validated() -> None:
    with pytest.raises(GeneratorConfigError, match="max_per_call"):
        CritiqueConfig(max_per_call=1)
