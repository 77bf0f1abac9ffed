"""Feedback producers: the offline rule and the LLM critic."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from indexer.synthesis.feedback import (
    LLMFeedback,
    RuleFeedback,
    describe_reward,
    operator_gain,
    operators_in,
    parse_operators,
    under_represented,
)
from indexer.synthesis.pairs import FeedbackProducer, QAPair, SynthesisRequest
from indexer.synthesis.reward import reward
from providers.scripted import ScriptedLLM
from schemagraph import Catalog, Traversal, load_spider, sample_database


@pytest.fixture(scope="module")
def catalog(sample_dir: Path) -> Catalog:
    return load_spider(sample_dir)


def _request(catalog: Catalog, db_id: str, tables: tuple[str, ...]) -> SynthesisRequest:
    db = catalog.database(db_id)
    return SynthesisRequest(db, Traversal(db.id, tables, "enumerated"), sample_database(db))


SIMPLE = QAPair("What are the names of all singers?", "SELECT Name FROM singer")


def test_operators_in_reads_the_tree() -> None:
    found = operators_in(
        reward(
            "SELECT T1.a FROM t AS T1 JOIN u AS T2 ON T1.x = T2.y WHERE T1.a NOT IN "
            "(SELECT b FROM v) GROUP BY T1.a HAVING COUNT(*) > 1"
        )
    )
    assert {"JOIN", "WHERE", "NOT", "IN", "SUBQUERY", "GROUP BY", "HAVING", "COUNT"} <= found
    assert "LIKE" not in found


def test_operator_gain_adds_what_the_operator_needs() -> None:
    base = reward("SELECT Name FROM singer")
    # HAVING brings GROUP BY and COUNT along; LIKE brings WHERE
    assert operator_gain(base, "HAVING") == pytest.approx(
        reward("SELECT Name FROM singer GROUP BY Name HAVING COUNT(*) > 1").total - base.total
    )
    assert operator_gain(base, "LIKE") == pytest.approx(
        reward("SELECT Name FROM singer WHERE Name LIKE '%a%'").total - base.total
    )


def test_under_represented_buckets_ignore_data_modification() -> None:
    assert under_represented(reward("SELECT Name FROM singer")) == ["conditional", "aggregation"]
    assert under_represented(reward("SELECT COUNT(*) FROM singer WHERE a = 1")) == ["conditional"]


def test_rule_feedback_names_weak_buckets_and_operators_that_raise_the_reward(
    catalog: Catalog,
) -> None:
    rule = RuleFeedback()
    assert isinstance(rule, FeedbackProducer)
    request = _request(catalog, "concert_singer", ("singer",))
    scored = reward(SIMPLE.sql)
    feedback = rule.feedback(request, SIMPLE, scored)
    assert "conditional logic" in feedback.text and "aggregation and sorting" in feedback.text
    assert len(feedback.operators) == 2
    for operator in feedback.operators:
        assert operator in feedback.text
        assert operator_gain(scored, operator) > 0
    assert "JOIN" not in feedback.operators  # one table: nothing to join


def test_rule_feedback_is_deterministic_and_seeded(catalog: Catalog) -> None:
    request = _request(catalog, "concert_singer", ("singer",))
    scored = reward(SIMPLE.sql)
    first = RuleFeedback().feedback(request, SIMPLE, scored)
    assert first == RuleFeedback().feedback(request, SIMPLE, scored)
    choices = {
        RuleFeedback().feedback(replace(request, seed=s), SIMPLE, scored).operators
        for s in range(12)
    }
    assert len(choices) > 1


def test_rule_feedback_keeps_what_the_query_already_uses(catalog: Catalog) -> None:
    request = _request(catalog, "concert_singer", ("stadium", "concert"))
    pair = QAPair(
        "How many concerts are there in each stadium?",
        "SELECT T1.Name, COUNT(*) FROM stadium AS T1 JOIN concert AS T2 "
        "ON T1.Stadium_ID = T2.Stadium_ID GROUP BY T1.Stadium_ID",
    )
    feedback = RuleFeedback().feedback(request, pair, reward(pair.sql))
    added, kept = feedback.operators[:2], feedback.operators[2:]
    assert {"COUNT", "GROUP BY", "JOIN"} <= set(kept)
    assert not set(added) & {"COUNT", "GROUP BY", "JOIN"}
    assert "Keep" in feedback.text


def test_rule_feedback_only_asks_for_what_the_traversal_allows(catalog: Catalog) -> None:
    request = _request(catalog, "pets_1", ("Has_Pet",))
    no_data = replace(request, sample=None)
    pair = QAPair("How many pets are there?", "SELECT COUNT(*) FROM Has_Pet")
    for seed in range(8):
        feedback = RuleFeedback().feedback(replace(no_data, seed=seed), pair, reward(pair.sql))
        assert not {"AVG", "SUM", "LIKE", "BETWEEN", "JOIN"} & set(feedback.operators)
    unrestricted = RuleFeedback(feasible=None, add=25, pool=25)
    everything = unrestricted.feedback(no_data, pair, reward(pair.sql)).operators
    assert "LIKE" in everything and "JOIN" not in everything


def test_rule_feedback_rejects_bad_settings() -> None:
    with pytest.raises(ValueError, match="unknown names"):
        RuleFeedback(operators={"GROUP BY", "MERGE"})
    with pytest.raises(ValueError, match="add"):
        RuleFeedback(add=0)


def test_parse_operators() -> None:
    assert parse_operators("Add a range.\nOperators: BETWEEN, group by, nested query") == (
        "BETWEEN",
        "GROUP BY",
        "SUBQUERY",
    )
    assert parse_operators("Use GROUP BY with HAVING, then LIMIT the result.") == (
        "GROUP BY",
        "HAVING",
        "LIMIT",
    )
    assert parse_operators("Operators: MERGE, LIKE") == ("LIKE",)


def test_llm_feedback_prompts_with_examples_question_and_reward(catalog: Catalog) -> None:
    llm = ScriptedLLM(
        "Group singers by country and keep countries with several singers.\n"
        "Operators: GROUP BY, HAVING"
    )
    request = _request(catalog, "concert_singer", ("singer",))
    scored = reward(SIMPLE.sql)
    feedback = LLMFeedback(llm).feedback(request, SIMPLE, scored)
    assert feedback.operators == ("GROUP BY", "HAVING")
    assert feedback.text == "Group singers by country and keep countries with several singers."
    (call,) = llm.calls
    prompt = call.messages[-1].content
    assert "Example 1" in prompt and "Example 3" in prompt
    assert SIMPLE.question in prompt and SIMPLE.sql in prompt
    assert describe_reward(scored) in prompt
    assert "singer(" in prompt  # the traversal's schema
    assert "four keyword buckets" in call.system


def test_llm_feedback_without_an_operator_line_scans_the_text(catalog: Catalog) -> None:
    llm = ScriptedLLM("Ask for the top 3 singers by age: ORDER BY and LIMIT.")
    request = _request(catalog, "concert_singer", ("singer",))
    feedback = LLMFeedback(llm).feedback(request, SIMPLE, reward(SIMPLE.sql))
    assert feedback.operators == ("ORDER BY", "LIMIT")
    assert feedback.text.startswith("Ask for the top 3")


def test_feedback_example_rewards_are_computed_not_typed() -> None:
    line = describe_reward(reward("SELECT COUNT(*) FROM Dogs WHERE weight > 10"))
    assert line.startswith("reward 3.75")
    assert "COUNT" in line and "f=3" in line
