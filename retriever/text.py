"""Words of questions, schema names and cell values, as the lexical signals compare them.

`terms` turns text into lower-case, lightly stemmed content words (`"Singers' ages"` →
`["singer", "age"]`), and `joined_terms` adds the word pairs a schema writes as one word;
`normalize_question` is the key the leakage check compares; `skeleton` masks schema words and
values (PET-SQL's question skeleton) for few-shot selection.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Container
from itertools import pairwise

from providers import tokenize
from providers.hashing_embedder import STOPWORDS as HASHING_STOPWORDS

#: the embedder's function words, and the words of requests ("show", "list", "number of")
STOPWORDS = HASHING_STOPWORDS | frozenset(
    {
        "all",
        "also",
        "any",
        "both",
        "called",
        "can",
        "count",
        "display",
        "each",
        "either",
        "every",
        "find",
        "get",
        "give",
        "given",
        "less",
        "list",
        "more",
        "named",
        "no",
        "not",
        "number",
        "one",
        "only",
        "other",
        "our",
        "please",
        "return",
        "same",
        "show",
        "tell",
        "than",
        "total",
        "value",
        "values",
        "whole",
    }
)

_NUMBER = re.compile(r"^\d+(\.\d+)?$")
_QUOTED = re.compile(r"\"[^\"]*\"|'[^']*'|“[^”]*”")
_SPACE = re.compile(r"\s+")
_NON_WORD = re.compile(r"[^\w]+")


@functools.lru_cache(maxsize=1 << 16)
def stem(token: str) -> str:
    """A crude English stem, enough to match plurals: `cities` → `city`, `classes` → `class`.

    Memoized: every query stems its words several times (BM25, linking, skeleton)."""
    if len(token) <= 3 or token.isdigit():
        return token
    if token.endswith("ies") and len(token) > 4:
        return token[:-3] + "y"
    if token.endswith(("sses", "shes", "ches", "xes")):
        return token[:-2]
    if token.endswith("s") and not token.endswith(("ss", "us", "is")):
        return token[:-1]
    return token


#: texts whose tokens and terms are remembered: a warehouse repeats its column names across
#: hundreds of shards and mirrors (opening the retriever on Spider 2.0-lite's 8,402 tables
#: tokenized 2.2 million names, most of them seen before)
MEMO_TEXTS = 1 << 18


@functools.lru_cache(maxsize=MEMO_TEXTS)
def _tokens(text: str) -> tuple[str, ...]:
    return tuple(tokenize(text))


@functools.lru_cache(maxsize=MEMO_TEXTS)
def _terms(text: str) -> tuple[str, ...]:
    return tuple(stem(w) for w in _tokens(text) if w not in STOPWORDS)


def words(text: str) -> list[str]:
    """Lower-case word tokens; `snake_case` and `camelCase` are split."""
    return list(_tokens(text))


def terms(text: str) -> list[str]:
    """Stemmed content words (stopwords dropped) in order, repeats kept."""
    return list(_terms(text))


def joined_terms(text: str, known: Container[str]) -> list[str]:
    """Terms of two adjacent content words written as one ("high schoolers" → `highschooler`),
    each of at least 3 letters, that `known` holds: schema names join words that questions
    write apart (`Highschooler`, `Hiredate`, `Bandmate`), which `terms` cannot match."""
    tokens = tokenize(text)
    return [
        joined
        for a, b in pairwise(tokens)
        if len(a) > 2 and len(b) > 2 and a not in STOPWORDS and b not in STOPWORDS
        if (joined := stem(a + b)) in known
    ]


def normalize_question(text: str) -> str:
    """The form two questions are compared in: lower case, punctuation and spacing removed."""
    return _SPACE.sub(" ", _NON_WORD.sub(" ", text.casefold())).strip()


def normalize_value(value: str) -> str:
    """A cell value as matched against question n-grams."""
    return " ".join(_tokens(value))


def skeleton(question: str, schema_words: Collection[str], values: Collection[str] = ()) -> str:
    """The question with schema words, values and numbers masked (PET-SQL's skeleton).

    `schema_words`: lower-case (stemmed or not) words of the database's table and column names;
    `values`: normalized cell values. Masked runs collapse to one `_`.
    """
    tokens = tokenize(_QUOTED.sub(" _ ", question))
    masked = [False] * len(tokens)
    if values:
        # every 1..4-gram, each built from the one before it (no slicing and joining)
        for start in range(len(tokens)):
            gram = tokens[start]
            for end in range(start + 1, min(len(tokens), start + 4) + 1):
                if end > start + 1:
                    gram = f"{gram} {tokens[end - 1]}"
                if gram in values:
                    masked[start:end] = [True] * (end - start)
    out: list[str] = []
    for token, hidden in zip(tokens, masked, strict=True):
        if hidden or token in schema_words or _NUMBER.match(token) or stem(token) in schema_words:
            if not out or out[-1] != "_":
                out.append("_")
        else:
            out.append(token)
    return " ".join(out)
