"""complete_json: tolerant parsing, validation, one retry with the error, then a clear error."""

from __future__ import annotations

import pytest

from providers import (
    JSON_INSTRUCTION,
    ConfigurationError,
    Message,
    ScriptedLLM,
    StructuredOutputError,
    complete_json,
    extract_json,
)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"tables": ["singer"]}', {"tables": ["singer"]}),
        ("  [1, 2, 3]\n", [1, 2, 3]),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('Here you go:\n```\n{"a": "```"}\n```\nDone.', {"a": "```"}),
        (
            'Sure! The answer is {"sql": "SELECT \'}\' FROM t"} as requested.',
            {"sql": "SELECT '}' FROM t"},
        ),
        ('Tables [see below]: ["singer", "concert"] end', ["singer", "concert"]),
        (
            '{"outer": {"inner": [1, {"x": null}]}} trailing {"second": 2}',
            {"outer": {"inner": [1, {"x": None}]}},
        ),
        ('"just a string"', "just a string"),
        ("42", 42),
    ],
)
def test_extract_json_finds_the_value(reply, expected):
    assert extract_json(reply) == expected


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("", "empty"),
        ("no json here", "no JSON object or array"),
        ("{'single': 'quotes'}", "no valid JSON"),
        ("[unclosed, ", "no valid JSON"),
    ],
)
def test_extract_json_says_why_nothing_parsed(reply, message):
    with pytest.raises(ValueError, match=message):
        extract_json(reply)


def test_complete_json_appends_the_instruction_and_leaves_the_system_prompt_alone():
    llm = ScriptedLLM('{"ok": true}')

    value = complete_json(llm, "SCHEMA", [Message.user("Which tables?")])

    assert value == {"ok": True}
    (call,) = llm.calls
    assert call.system == "SCHEMA"
    assert call.messages[-1].content == f"Which tables?\n\n{JSON_INSTRUCTION}"


def test_validate_transforms_the_value():
    llm = ScriptedLLM('{"tables": ["a", "b"]}')

    tables = complete_json(
        llm, "s", [Message.user("q")], validate=lambda value: tuple(value["tables"])
    )

    assert tables == ("a", "b")


def test_a_bad_reply_is_retried_once_with_the_error_in_the_conversation():
    llm = ScriptedLLM(["I think the tables are singer and concert.", '["singer", "concert"]'])

    value = complete_json(llm, "s", [Message.user("Which tables?")])

    assert value == ["singer", "concert"]
    assert llm.call_count == 2
    retry = llm.calls[1].messages
    assert retry[1] == Message.assistant("I think the tables are singer and concert.")
    assert retry[2].role == "user"
    assert "no JSON object or array" in retry[2].content
    assert JSON_INSTRUCTION in retry[2].content


def test_a_validation_failure_is_retried_with_the_validators_message():
    def validate(value):
        if not isinstance(value, list):
            raise ValueError("expected a list of table names")
        return value

    llm = ScriptedLLM(['{"tables": "singer"}', '["singer"]'])

    assert complete_json(llm, "s", [Message.user("q")], validate=validate) == ["singer"]
    assert "expected a list of table names" in llm.calls[1].messages[-1].content


def test_two_bad_replies_raise_an_error_that_shows_the_reply():
    llm = ScriptedLLM(["not json", "still not json, sorry"])

    with pytest.raises(StructuredOutputError) as caught:
        complete_json(llm, "s", [Message.user("q")])

    error = caught.value
    assert llm.call_count == 2
    assert error.attempts == 2
    assert error.reply == "still not json, sorry"
    assert "still not json, sorry" in str(error)
    assert "no JSON object or array" in str(error)


def test_a_long_bad_reply_is_truncated_in_the_message_but_kept_whole_on_the_error():
    reply = "x" * 5000
    llm = ScriptedLLM(reply)

    with pytest.raises(StructuredOutputError) as caught:
        complete_json(llm, "s", [Message.user("q")], retries=0)

    assert caught.value.reply == reply
    assert len(str(caught.value)) < 1000
    assert "4500 more characters" in str(caught.value)
    assert llm.call_count == 1


def test_key_and_type_errors_from_validate_also_trigger_the_retry():
    llm = ScriptedLLM(['{"a": 1}', '{"tables": []}'])

    assert complete_json(llm, "s", [Message.user("q")], validate=lambda v: v["tables"]) == []
    assert "'tables'" in llm.calls[1].messages[-1].content


def test_messages_must_end_with_a_user_turn():
    with pytest.raises(ConfigurationError, match="user message"):
        complete_json(ScriptedLLM("{}"), "s", [Message.assistant("x")])
    with pytest.raises(ConfigurationError, match="retries"):
        complete_json(ScriptedLLM("{}"), "s", [Message.user("x")], retries=-1)
