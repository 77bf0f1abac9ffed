"""Every strategy end to end with scripted LLMs, including malformed output and failing SQL."""

from __future__ import annotations

import json

import pytest

from generator import (
    STRATEGIES,
    ActorCriticConfig,
    CritiqueConfig,
    FewShot,
    GenerationConfig,
    Models,
    PromptConfig,
    SamplingPlan,
    TestCaseConfig,
    VoterSets,
    generate_sql,
)
from generator.errors import GeneratorConfigError, NoDataError
from providers import LLMRequest, ScriptedLLM, UsageMeter
from schemagraph import Database

QUESTION = "How many singers are from France?"
GOOD = "SELECT count(*) FROM singer WHERE Country = 'France'"
WRONG = "SELECT count(*) FROM singer"


def _fenced(sql: str) -> str:
    return f"```sql\n{sql}\n```"


def _judge(request: LLMRequest) -> str:
    """A critic for every judging stage: accepts GOOD, picks GOOD, predicts GOOD's result."""
    text = request.messages[-1].content
    if "True or False" in text:
        return "**True**" if GOOD in text else "False."
    if "### Candidate" in text:
        blocks = text.split("### Candidate ")[1:]
        best = next((i for i, b in enumerate(blocks, 1) if GOOD in b), 1)
        return f'{{"best": {best}}}'
    data = text.split("<data>\n", 1)[1].split("\n</data>", 1)[0]
    singers = next(json.loads(line) for line in data.splitlines() if '"singer"' in line)
    country = singers["columns"].index("Country")
    return json.dumps({"rows": [[sum(1 for r in singers["rows"] if r[country] == "France")]]})


def _models() -> Models:
    return Models(
        (
            ScriptedLLM([_fenced(GOOD), _fenced(WRONG), _fenced(GOOD)], model="a"),
            ScriptedLLM(f"Sure. {WRONG};", model="b"),
            ScriptedLLM(_fenced(GOOD), model="c"),
        ),
        critic=ScriptedLLM(_judge, model="judge"),
    )


EXPECTED = {
    "single": GOOD,
    "presql": WRONG,  # model a's second reply
    "actor-critic": GOOD,  # WRONG rejected by the critic, then GOOD accepted
    "vote": WRONG,  # the wrong majority wins a plain vote
    "fine-vote": GOOD,  # only model c votes on easy questions
    "critique": GOOD,
    "rerank": GOOD,
}


@pytest.mark.parametrize("strategy", list(STRATEGIES))
def test_every_strategy_returns_sql_and_a_json_trace(concert: Database, strategy: str) -> None:
    meter = UsageMeter({})
    config = GenerationConfig(strategy=strategy, voters=VoterSets({"easy": ("scripted:c",)}))
    result = generate_sql(QUESTION, concert, _models(), config=config, meter=meter)
    assert result.sql == EXPECTED[strategy]
    data = json.loads(json.dumps(result.as_dict()))
    stages = [event["stage"] for event in data["trace"]]
    assert data["strategy"] == strategy and data["db_id"] == "concert_singer"
    if strategy == "single":
        assert stages == ["prompt", "generate"]
        return
    assert stages[:4] == ["presql prompt", "presql", "linking", "finsql prompt"]
    assert result.presql == GOOD and result.tables == ("singer",) and result.hardness == "easy"
    assert meter.report()["total"]["calls"] >= 2
    if strategy in ("vote", "fine-vote", "critique", "rerank"):
        assert stages[-2:] == ["candidates", "selection"]
        assert len(result.candidates) == 3 and result.selection is not None


def test_presql_strategy_uses_the_linked_schema_for_the_final_prompt(concert: Database) -> None:
    llm = ScriptedLLM([_fenced(GOOD), _fenced(GOOD)], model="a")
    result = generate_sql(QUESTION, concert, Models((llm,)))
    first, second = (c.messages[-1].content for c in llm.calls)
    assert "CREATE TABLE stadium" in first and "CREATE TABLE stadium" not in second
    assert result.sql == GOOD


def test_malformed_presql_falls_back_to_the_full_schema(concert: Database) -> None:
    llm = ScriptedLLM(["I am not sure what you mean.", _fenced(GOOD)], model="a")
    result = generate_sql(QUESTION, concert, Models((llm,)))
    linking = next(e for e in result.trace if e.stage == "linking")
    assert linking.data["fallback"] and len(result.tables) == 4
    presql = next(e for e in result.trace if e.stage == "presql")
    assert presql.data["sql"] is None and "not sure" in presql.data["reply"]
    assert result.sql == GOOD


def test_no_sql_anywhere_gives_a_result_without_sql(concert: Database) -> None:
    result = generate_sql(QUESTION, concert, Models((ScriptedLLM("Sorry."),)))
    assert result.sql is None


def test_vote_with_all_candidates_failing_returns_the_first(concert: Database) -> None:
    models = Models((ScriptedLLM([_fenced(GOOD), "SELECT nope FROM singer"]),))
    config = GenerationConfig(strategy="vote", sampling=SamplingPlan(samples=1))
    result = generate_sql(QUESTION, concert, models, config=config)
    assert result.sql == "SELECT nope FROM singer"
    assert result.selection is not None and "no candidate ran" in result.selection.reason


def test_vote_ties_go_to_the_first_generated(concert: Database) -> None:
    models = Models(
        (ScriptedLLM([_fenced(GOOD), _fenced(WRONG)], model="a"), ScriptedLLM(GOOD, model="b"))
    )
    result = generate_sql(QUESTION, concert, models, config=GenerationConfig(strategy="vote"))
    assert result.sql == WRONG  # WRONG (model a) and GOOD (model b) tie 1-1; a came first


def test_actor_critic_strategy_records_attempts(concert: Database) -> None:
    actor = ScriptedLLM([_fenced(GOOD), "SELECT nope", _fenced(WRONG), _fenced(GOOD)], model="a")
    config = GenerationConfig(strategy="actor-critic", actor_critic=ActorCriticConfig(attempts=4))
    result = generate_sql(
        QUESTION, concert, Models((actor,), critic=ScriptedLLM(_judge)), config=config
    )
    assert result.actor_critic is not None
    verdicts = [a.verdict for a in result.actor_critic.attempts]
    assert verdicts == ["rejected", "rejected", "accepted"] and result.sql == GOOD


def test_few_shot_examples_reach_the_prompt(concert: Database) -> None:
    llm = ScriptedLLM(_fenced(GOOD))
    shots = [FewShot("How many concerts?", "SELECT count(*) FROM concert", "concert(concert_ID*)")]
    generate_sql(
        QUESTION,
        concert,
        Models((llm,)),
        examples=shots,
        config=GenerationConfig(strategy="single"),
    )
    assert "How many concerts?" in llm.calls[0].messages[-1].content


def test_prompt_cuts_are_reported_in_the_trace(concert: Database) -> None:
    config = GenerationConfig(strategy="single", prompt=PromptConfig(budget_tokens=400))
    result = generate_sql(QUESTION, concert, Models((ScriptedLLM(GOOD),)), config=config)
    cuts = result.trace[0].data["cuts"]
    assert cuts["tables_dropped"] or cuts["sample_rows_to"] < 3
    assert result.trace[0].data["tokens"] <= 400


def test_executing_strategies_need_the_database_file(concert: Database) -> None:
    no_data = Database("ddl_only", concert.tables)
    llm = ScriptedLLM(_fenced(GOOD))
    assert generate_sql(QUESTION, no_data, Models((llm,))).sql == GOOD  # presql needs no data
    with pytest.raises(NoDataError, match="no SQLite file"):
        generate_sql(QUESTION, no_data, Models((llm,)), config=GenerationConfig(strategy="vote"))


def test_settings_are_validated(concert: Database) -> None:
    with pytest.raises(GeneratorConfigError, match="unknown strategy"):
        GenerationConfig(strategy="magic")
    with pytest.raises(GeneratorConfigError, match="at least one"):
        Models(())
    with pytest.raises(GeneratorConfigError, match="empty"):
        generate_sql("  ", concert, Models((ScriptedLLM("x"),)))
    with pytest.raises(GeneratorConfigError, match="samples"):
        SamplingPlan(samples=0)
    assert CritiqueConfig().max_per_call >= 2 and TestCaseConfig().max_tests >= 1
