"""Does a synthetic question read as English? A pure check of the question's text alone.

The synthetic questions route real ones and are shown to people and agents as examples, so a
question an analyst would never write is a defect even when it says what its SQL does
(`indexer.synthesis.faithful`). `readability_problems` names what is wrong, one kind each:

- `placeholder`: a value nobody gave ("with a given state fips code");
- `run-on`: more than `MAX_WORDS` words;
- `repeated word`: a word twice in a row ("places places");
- `broken grammar`: an article or "among" followed by a word that cannot start a noun phrase
  ("Among the where ...", "the with", "a whose");
- `code`: a schema name left as it is (`MONTH___202306`, `B01001_003E`, `hits.product`,
  `productRevenue`): underscores, letters run into digits, dotted paths, camelCase, or a long
  number straight after a noun ("month 202306");
- `averaged time`: a point in time summed or averaged ("the mean created at", "average
  date").

Quoted text ('Book 5', "B01001") is a value the question cites verbatim and is not checked for
code. The build report gives the share of kept questions that fail (`unreadable`).
"""

from __future__ import annotations

import itertools
import re

MAX_WORDS = 35
"""Longer than this is a run-on: Spider's and BIRD's questions are 95 % under 30 words."""

PLACEHOLDER = "placeholder"
RUN_ON = "run-on"
REPEATED = "repeated word"
GRAMMAR = "broken grammar"
CODE = "code"
TIME = "averaged time"
KINDS = (PLACEHOLDER, RUN_ON, REPEATED, GRAMMAR, CODE, TIME)

_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|`[^`]*`")
_WORD = re.compile(r"[A-Za-z0-9_.$]+(?:'[a-z]+)?")
_PLACEHOLDER = re.compile(r"\ba given\b", re.IGNORECASE)
_BROKEN = re.compile(
    r"\b(?:the|a|an|among)\s+(?:where|whose|which|that|with|of|and|or|is|are|has|have|for|by)\b"
    r"|\b(?:of|with|among|for|by)\s+(?:of|with|for|by|and|or|is|are)\b"
    r"|\b(?:whose|where|that|which)\s+(?:whose|where|that|which|and|or)\b"
    r"|^\s*(?:and|or|of|with|whose)\b",
    re.IGNORECASE,
)
_AVERAGED_TIME = re.compile(
    r"\b(?:average|mean|total|combined|sum of)\s+(?:\w+\s+)?"
    r"(?:at\b(?!\s+(?:least|most))|date\b|timestamp\b|datetime\b)",
    re.IGNORECASE,
)
_NOUN_NUMBER = re.compile(r"\b([A-Za-z]+)\s+\d{5,}\b")
# fmt: off
_BEFORE_NUMBER = frozenset((
    "than", "to", "least", "most", "between", "and", "from", "of", "is", "are", "was", "be",
    "above", "below", "over", "under", "exactly", "in", "on", "at", "by", "after", "before",
    "since", "until", "with", "equal", "or", "no", "range", "top", "outside",
))
# fmt: on
_ORDINAL = re.compile(r"^\d+(?:st|nd|rd|th|s)$", re.IGNORECASE)
_NUMBER = re.compile(r"^\d+(?:\.\d+)?%?$")


def readability_problems(question: str) -> tuple[str, ...]:
    """The kinds of readability problems of `question` (see the module docstring), in
    `KINDS` order; () when it reads as English."""
    found: set[str] = set()
    if _PLACEHOLDER.search(question):
        found.add(PLACEHOLDER)
    words = question.split()
    if len(words) > MAX_WORDS:
        found.add(RUN_ON)
    if _repeats(question):
        found.add(REPEATED)
    unquoted = _QUOTED.sub("X", question)
    if _BROKEN.search(unquoted):
        found.add(GRAMMAR)
    if any(_code_like(w) for w in _WORD.findall(unquoted)) or any(
        m.group(1).lower() not in _BEFORE_NUMBER for m in _NOUN_NUMBER.finditer(unquoted)
    ):
        found.add(CODE)
    if _AVERAGED_TIME.search(unquoted):
        found.add(TIME)
    return tuple(k for k in KINDS if k in found)


def readable(question: str) -> bool:
    return not readability_problems(question)


def _repeats(question: str) -> bool:
    words = [w.lower().strip(".,;:?!'\"()") for w in question.split()]
    words = [w for w in words if w]
    return any(a == b and not _NUMBER.match(a) for a, b in itertools.pairwise(words))


def _code_like(word: str) -> bool:
    word = word.strip(".$")
    if not word or _NUMBER.match(word) or _ORDINAL.match(word):
        return False
    if "_" in word or "$" in word:
        return True
    if "." in word:  # a dotted path (a sentence's full stop was stripped above)
        return not all(p.isdigit() for p in word.split("."))
    if any(c.isdigit() for c in word) and any(c.isalpha() for c in word):
        return True
    return bool(re.search(r"[a-z][A-Z]", word))
