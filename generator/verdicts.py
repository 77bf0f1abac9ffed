"""Read a critic's answer: a True/False verdict, or the index of the best candidate.

Critics are asked for one word or a small JSON object, and answer "True.", "**False**",
"Answer: yes", "```json {\"correct\": false}```", "The query is not correct." and so on.
`parse_verdict` reads all of these and returns None only when the reply commits to nothing;
`parse_index` reads "2", "Candidate 2", "[2]", `{"best": 2}`. Neither raises.
"""

from __future__ import annotations

import re
from typing import Any

from providers import extract_json

_POSITIVE = {"true", "yes", "correct", "right", "valid", "accept", "accepted", "approve", "pass"}
_NEGATIVE = {
    "false",
    "no",
    "incorrect",
    "wrong",
    "invalid",
    "reject",
    "rejected",
    "fail",
    "not correct",
    "not right",
    "not valid",
}
_WORD = (
    r"(not\s+correct|not\s+right|not\s+valid|true|false|yes|no|incorrect|correct|wrong|right|"
    r"invalid|valid|rejected|reject|accepted|accept|approve|pass|fail)"
)
_LEADING = re.compile(r"^\W*" + _WORD + r"\b", re.IGNORECASE)
_LABELLED = re.compile(
    r"\b(?:final\s+answer|answer|verdict|judg(?:e)?ment|decision|conclusion|result|output)"
    r"\s*(?:is)?\s*[:=\-]?\s*\W*" + _WORD + r"\b",
    re.IGNORECASE,
)
_BOOLEAN = re.compile(r"\b(true|false)\b", re.IGNORECASE)
_PHRASE = re.compile(
    r"\b(?:is|looks|seems)\s+(not\s+correct|incorrect|correct|wrong|right|not\s+right)\b",
    re.IGNORECASE,
)
_MARKDOWN = re.compile(r"[*_`#>]+")
_JSON_VERDICT_KEYS = ("correct", "is_correct", "verdict", "answer", "accept", "valid", "result")
_JSON_INDEX_KEYS = ("best", "index", "choice", "candidate", "answer", "selected")


def parse_verdict(reply: str) -> bool | None:
    """True (accept), False (reject) or None (the reply does not say)."""
    if not isinstance(reply, str) or not reply.strip():
        return None
    from_json = _json_verdict(reply)
    if from_json is not None:
        return from_json
    text = " ".join(_MARKDOWN.sub(" ", reply).split())
    for pattern in (_LEADING, _LABELLED):
        match = pattern.search(text)
        if match:
            return _meaning(match.group(1))
    booleans = _BOOLEAN.findall(text)
    if booleans:
        return _meaning(booleans[-1])
    phrase = _PHRASE.search(text)
    if phrase:
        return _meaning(phrase.group(1))
    return None


def parse_index(reply: str, count: int) -> int | None:
    """The 0-based index of the chosen candidate, from a reply numbering them 1..`count`."""
    if not isinstance(reply, str) or count < 1:
        return None
    number: Any = None
    try:
        value = extract_json(reply)
    except ValueError:
        value = None
    if isinstance(value, dict):
        for key in _JSON_INDEX_KEYS:
            if key in value:
                number = value[key]
                break
    elif isinstance(value, int) and not isinstance(value, bool):
        number = value
    if isinstance(number, str):
        digits = re.search(r"\d+", number)
        number = int(digits.group()) if digits else None
    if not isinstance(number, int) or isinstance(number, bool):
        text = _MARKDOWN.sub(" ", reply)
        labelled = re.search(
            r"\b(?:candidate|option|query|answer|best|choice)\s*(?:is|:|#|no\.?)?\s*\[?(\d+)\]?",
            text,
            re.IGNORECASE,
        )
        bare = labelled or re.search(r"\[(\d+)\]", text) or re.match(r"\s*(\d+)\b", text)
        number = int(bare.group(1)) if bare else None
    if number is None or not 1 <= number <= count:
        return None
    return int(number) - 1


def _meaning(word: str) -> bool | None:
    key = " ".join(word.lower().split())
    if key in _POSITIVE:
        return True
    if key in _NEGATIVE:
        return False
    return None


def _json_verdict(reply: str) -> bool | None:
    if "{" not in reply:
        return None
    try:
        value = extract_json(reply)
    except ValueError:
        return None
    if isinstance(value, dict):
        for key in _JSON_VERDICT_KEYS:
            if key in value:
                found = value[key]
                if isinstance(found, bool):
                    return found
                if isinstance(found, str):
                    return parse_verdict(found)
    return None
