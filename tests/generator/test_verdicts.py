"""Critic replies in odd formats: verdicts and candidate indexes."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.verdicts import parse_index, parse_verdict


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("True", True),
        ("True.", True),
        ("**True**", True),
        ("  `true`  ", True),
        ("Answer: yes", True),
        ("Yes, the query is right.", True),
        ('{"correct": true}', True),
        ('{"verdict": "True"}', True),
        ("The SQL has no errors.\nFinal answer: True", True),
        ("Correct", True),
        ("False", False),
        ("False.", False),
        ("**False**", False),
        ("Answer: no", False),
        ("NO", False),
        ('```json\n{"correct": false}\n```', False),
        ("The query is not correct.", False),
        ("Incorrect - it misses the filter", False),
        ("Verdict - **Incorrect**", False),
        ("The query is wrong because it ignores the country.", False),
    ],
)
def test_reads_verdicts_in_odd_formats(reply: str, expected: bool) -> None:
    assert parse_verdict(reply) is expected


@pytest.mark.parametrize("reply", ["", "hmm", "I am not sure.", '{"score": 3}', "maybe"])
def test_replies_that_commit_to_nothing_give_none(reply: str) -> None:
    assert parse_verdict(reply) is None


_TEMPLATES = {
    True: [
        "True",
        "True.",
        "**True**",
        "Answer: yes",
        "yes",
        "{json}",
        "Verdict: correct",
        "After checking the joins, the final answer is True",
    ],
    False: [
        "False",
        "False.",
        "**False**",
        "Answer: no",
        "no",
        "{json}",
        "Verdict: incorrect",
        "The query is not correct.",
        "After checking the joins, the final answer is False",
    ],
}


@settings(max_examples=200, deadline=None)
@given(st.booleans(), st.data())
def test_any_rendered_verdict_parses_back(verdict: bool, data: st.DataObject) -> None:
    template = data.draw(st.sampled_from(_TEMPLATES[verdict]))
    reply = template.format(json=json.dumps({"correct": verdict}))
    if data.draw(st.booleans()):
        reply = reply.upper() if "{" not in reply else reply
    assert parse_verdict(reply) is verdict


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_verdict_parser_never_raises(reply: str) -> None:
    assert parse_verdict(reply) in (True, False, None)


@pytest.mark.parametrize(
    ("reply", "index"),
    [
        ("2", 1),
        ("Candidate 3", 2),
        ("[1]", 0),
        ('{"best": 2}', 1),
        ("I pick candidate #4.", 3),
        ('```json\n{"index": "3"}\n```', 2),
        ("**Candidate 1** is best", 0),
    ],
)
def test_reads_candidate_indexes(reply: str, index: int) -> None:
    assert parse_index(reply, 4) == index


@pytest.mark.parametrize("reply", ["", "none of them", "7", "0", '{"best": 9}', "Candidate 5"])
def test_out_of_range_or_missing_index_is_none(reply: str) -> None:
    assert parse_index(reply, 4) is None


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 20), st.data())
def test_any_rendered_index_parses_back(count: int, data: st.DataObject) -> None:
    number = data.draw(st.integers(1, count))
    template = data.draw(
        st.sampled_from(['{{"best": {n}}}', "Candidate {n}", "{n}", "[{n}]", "Best: {n}"])
    )
    assert parse_index(template.format(n=number), count) == number - 1


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200), st.integers(1, 10))
def test_index_parser_never_raises(reply: str, count: int) -> None:
    found = parse_index(reply, count)
    assert found is None or 0 <= found < count
