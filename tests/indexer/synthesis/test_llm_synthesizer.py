"""The LLM synthesizer, offline with a scripted model: prompt contents, JSON parsing, and
dropping pairs whose SQL leaves the traversal or names columns that do not exist."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from indexer.synthesis.llm_synthesizer import SYSTEM_PROMPT, LLMSynthesizer
from indexer.synthesis.pairs import Feedback, QAPair, SynthesisRequest, Synthesizer
from providers.llm import LLMRequest
from providers.scripted import ScriptedLLM
from schemagraph import Catalog, Traversal, load_spider, sample_database

GOOD = {
    "question": "How many pets are owned by students older than 20?",
    "sql": "SELECT count(*) FROM Student AS T1 JOIN Has_Pet AS T2 ON T1.StuID = T2.StuID "
    "WHERE T1.Age > 20",
}
OTHER = {
    "question": "What is the average weight of dogs?",
    "sql": "SELECT AVG(weight) FROM Pets WHERE PetType = 'dog'",
}


@pytest.fixture(scope="module")
def catalog(sample_dir: Path) -> Catalog:
    return load_spider(sample_dir)


@pytest.fixture
def request_(catalog: Catalog) -> SynthesisRequest:
    db = catalog.database("pets_1")
    traversal = Traversal(db.id, ("Student", "Has_Pet", "Pets"), "enumerated")
    return SynthesisRequest(db, traversal, sample_database(db), count=2)


def test_it_is_a_synthesizer_named_after_its_model() -> None:
    synthesizer = LLMSynthesizer(ScriptedLLM("[]", model="claude-x"))
    assert isinstance(synthesizer, Synthesizer)
    assert synthesizer.name == "scripted:claude-x"


def test_valid_pairs_come_back(request_: SynthesisRequest) -> None:
    llm = ScriptedLLM(json.dumps([GOOD, OTHER]))
    pairs = LLMSynthesizer(llm).synthesize(request_)
    assert pairs == [QAPair(GOOD["question"], GOOD["sql"]), QAPair(OTHER["question"], OTHER["sql"])]
    assert llm.call_count == 1


def test_the_prompt_holds_schema_rows_previous_questions_and_feedback(
    request_: SynthesisRequest,
) -> None:
    llm = ScriptedLLM(json.dumps([GOOD]))
    request = SynthesisRequest(
        request_.db,
        request_.traversal,
        request_.sample,
        previous=(QAPair("Which students have a cat?", "SELECT 1"),),
        feedback=Feedback("Add a range condition on age.", ("BETWEEN",)),
        feedback_history=(Feedback("Use a join."),),
        count=1,
    )
    LLMSynthesizer(llm).synthesize(request)
    (call,) = llm.calls
    prompt = call.messages[-1].content
    assert call.system == SYSTEM_PROMPT
    assert "CREATE TABLE Student" in prompt and "CREATE TABLE Pets" in prompt
    assert "example rows from Pets" in prompt  # sampled rows
    assert "- Which students have a cat?" in prompt
    assert "Add a range condition on age." in prompt and "BETWEEN" in prompt
    assert "Earlier feedback:\n- Use a join." in prompt
    assert "Write 1 new question with SQL" in prompt
    assert "CREATE TABLE Dorm" not in prompt  # only the traversal's tables


def test_the_prompts_hold_no_example_a_small_model_could_copy(
    request_: SynthesisRequest,
) -> None:
    """Qwen2.5-Coder-0.5B answered every pets_1 traversal with the system prompt's example
    ("Which countries have more than 3 car makers?", SQL over a `CarMakers` table): the
    prompts speak of the schema they show and of nothing else."""
    llm = ScriptedLLM(json.dumps([GOOD]))
    LLMSynthesizer(llm).synthesize(request_)
    (call,) = llm.calls
    text = (call.system + call.messages[-1].content).lower()
    assert "car" not in text.split() and "maker" not in text and "countries" not in text


def test_a_reply_is_capped_by_the_pairs_it_holds(request_: SynthesisRequest) -> None:
    """A looping reply stops after a few hundred tokens per pair, not at 2,048."""
    llm = ScriptedLLM(json.dumps([GOOD, OTHER]))
    LLMSynthesizer(llm, tokens_per_pair=300).synthesize(request_)  # count=2
    assert llm.calls[0].max_tokens == 700
    LLMSynthesizer(llm, max_tokens=500).synthesize(request_)
    assert llm.calls[1].max_tokens == 500


def test_bad_items_are_dropped(request_: SynthesisRequest) -> None:
    reply = json.dumps(
        [
            GOOD,
            {"question": "Which dorms are large?", "sql": "SELECT dorm_name FROM Dorm"},
            {"question": "What are the nicknames?", "sql": "SELECT nickname FROM Student"},
            {"question": "Delete the cats.", "sql": "DELETE FROM Pets WHERE PetType = 'cat'"},
            {"question": "", "sql": "SELECT Age FROM Student"},
            {"question": "Ages?"},
            "not an object",
        ]
    )
    pairs = LLMSynthesizer(ScriptedLLM(reply)).synthesize(request_)
    assert pairs == [QAPair(GOOD["question"], GOOD["sql"])]


def test_a_table_of_the_database_outside_the_traversal_is_refused(catalog: Catalog) -> None:
    db = catalog.database("pets_1")
    request = SynthesisRequest(db, Traversal(db.id, ("Pets",), "enumerated"), None)
    reply = json.dumps([GOOD])  # uses Student and Has_Pet
    llm = ScriptedLLM(reply)
    assert LLMSynthesizer(llm).synthesize(request) == []
    assert llm.call_count == 2  # asked once more with the reason


def test_the_retry_says_what_to_write_not_only_what_was_wrong(catalog: Catalog) -> None:
    """Real replies of Qwen2.5-Coder-1.5B (ICRL on car_1): a join to a table the database does
    not have; told only that, it answered the retry with an empty array."""
    db = catalog.database("pets_1")
    request = SynthesisRequest(db, Traversal(db.id, ("Pets",), "enumerated"), None)
    joins = {
        "question": "Which pets belong to owners called Smith?",
        "sql": "SELECT T1.PetID FROM Pets AS T1 INNER JOIN owner_list AS T2 ON T1.PetID = T2.PetID",
    }
    llm = ScriptedLLM([json.dumps(joins), "```json\n[]\n```"])
    assert LLMSynthesizer(llm).synthesize(request) == []
    retry = llm.calls[1].messages[-1].content
    assert "unknown table 'owner_list'" in retry
    assert "Write 1 new question/SQL pair using only these tables" in retry
    assert "as the schema shows them: Pets\n" in retry


def test_a_fenced_reply_with_prose_parses(request_: SynthesisRequest) -> None:
    reply = "Here you go:\n```json\n" + json.dumps({"pairs": [GOOD]}) + "\n```\nEnjoy."
    pairs = LLMSynthesizer(ScriptedLLM(reply)).synthesize(request_)
    assert pairs == [QAPair(GOOD["question"], GOOD["sql"])]


def test_a_malformed_reply_is_retried_once_with_the_error(request_: SynthesisRequest) -> None:
    llm = ScriptedLLM(["this is not json at all", json.dumps([GOOD])])
    pairs = LLMSynthesizer(llm).synthesize(request_)
    assert pairs == [QAPair(GOOD["question"], GOOD["sql"])]
    assert llm.call_count == 2
    retry = llm.calls[1].messages
    assert retry[-2].content == "this is not json at all"
    assert "could not be used" in retry[-1].content


def test_an_unusable_reply_yields_no_pairs(request_: SynthesisRequest) -> None:
    llm = ScriptedLLM(['{"question": 3}', "[1, 2"])
    assert LLMSynthesizer(llm).synthesize(request_) == []


def test_repeated_questions_are_dropped(request_: SynthesisRequest) -> None:
    request = SynthesisRequest(
        request_.db,
        request_.traversal,
        request_.sample,
        previous=(QAPair(GOOD["question"].upper(), GOOD["sql"]),),
        count=3,
    )

    def reply(call: LLMRequest) -> str:
        return json.dumps([GOOD, OTHER, OTHER])

    pairs = LLMSynthesizer(ScriptedLLM(reply)).synthesize(request)
    assert pairs == [QAPair(OTHER["question"], OTHER["sql"])]


def test_count_caps_the_pairs(request_: SynthesisRequest) -> None:
    request = SynthesisRequest(request_.db, request_.traversal, request_.sample, count=1)
    pairs = LLMSynthesizer(ScriptedLLM(json.dumps([GOOD, OTHER]))).synthesize(request)
    assert len(pairs) == 1


def test_settings_are_validated() -> None:
    with pytest.raises(ValueError, match="rows"):
        LLMSynthesizer(ScriptedLLM("[]"), rows=-1)
