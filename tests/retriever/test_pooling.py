"""LLM schema pooling with replies a real local model wrote (Qwen2.5-Coder-0.5B)."""

from __future__ import annotations

from providers.scripted import ScriptedLLM
from retriever.pooling import pool, pooling_prompt
from retriever.result import RankedDatabase, RankedTable


def _db(db_id: str, *tables: str) -> RankedDatabase:
    ranked = tuple(RankedTable(t, 1.0, True) for t in tables)
    return RankedDatabase(db_id, 1.0, ranked)


CANDIDATES = [
    _db("car_1", "model_list", "car_names", "cars_data", "car_makers", "countries"),
    _db("pilot_record", "aircraft", "pilot", "pilot_record"),
]
QUESTION = "Which model has the most versions (makes) of cars?"

#: the 0.5B's reply to this question (humanized table names, repeated names, a code fence)
REAL_REPLY = """```json
{
  "databases": [
    {
      "db_id": "car_1",
      "tables": ["model list", "car names", "cars data", "car makers", "countries", "car names"]
    },
    {
      "db_id": "pilot_record",
      "tables": ["aircraft", "pilot", "pilot record", "record"]
    }
  ]
}
```"""


def test_the_prompt_offers_no_empty_answer() -> None:
    """Told it could answer with an empty list, the 0.5B answered `[]` to every question."""
    prompt = pooling_prompt(QUESTION, CANDIDATES, {"car_1": "model list: ...", "pilot_record": ""})
    assert "empty" not in prompt.lower() and "## car_1" in prompt
    assert '"databases"' in prompt and "best database first" in prompt


def test_tables_written_back_humanized_are_matched_once_each() -> None:
    chosen = pool(ScriptedLLM(REAL_REPLY), QUESTION, CANDIDATES, {})
    assert chosen == [
        ("car_1", ["model_list", "car_names", "cars_data", "car_makers", "countries"]),
        ("pilot_record", ["aircraft", "pilot", "pilot_record"]),
    ]


def test_the_model_names_databases_only_in_a_short_reply() -> None:
    """Asked for each database's tables too, the 0.5B repeated "concert", "singer", ... until
    its tokens ran out (no JSON left to parse); the ranking uses only the order anyway."""
    prompt = pooling_prompt(QUESTION, CANDIDATES, {})
    assert "tables" not in prompt.splitlines()[-1]
    llm = ScriptedLLM('{"databases": ["pilot_record", "car_1"]}')
    assert pool(llm, QUESTION, CANDIDATES, {}) == [("pilot_record", []), ("car_1", [])]
    assert llm.calls[0].max_tokens == 200
