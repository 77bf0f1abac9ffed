"""An embedder with no model: word and character n-grams hashed with sha256 into a vector."""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
import re
from collections.abc import Sequence

import numpy as np

from providers.embedding import Vectors
from providers.errors import ConfigurationError

__all__ = ["STOPWORDS", "HashingEmbedder", "tokenize", "tokenize_words"]

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[^\W_]+")

#: Weights of the three feature kinds. A token's character 3-grams together have the length
#: of one unigram (each weighs 1/sqrt(count)), so long words do not outweigh short ones.
_UNIGRAM_WEIGHT = 1.0
_BIGRAM_WEIGHT = 0.7
_EMPTY_FEATURE = "e:"

#: Function words dropped before hashing (unless a text has nothing else): they carry no
#: information about which table a question is about.
STOPWORDS = frozenset(
    {
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "i",
        "in",
        "is",
        "it",
        "its",
        "many",
        "me",
        "much",
        "my",
        "of",
        "on",
        "or",
        "that",
        "the",
        "their",
        "them",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "whose",
        "why",
        "with",
        "you",
        "your",
    }
)


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens; ``snake_case`` and ``camelCase`` identifiers are split."""
    return [token.lower() for token in _WORD.findall(_CAMEL.sub(" ", text))]


def tokenize_words(text: str) -> list[list[str]]:
    """`tokenize`'s tokens grouped by the written word each comes from: a ``camelCase`` word is
    one word of several tokens (``"GitHub repos"`` → ``[["git", "hub"], ["repos"]]``)."""
    return [[t.lower() for t in _WORD.findall(_CAMEL.sub(" ", w))] for w in _WORD.findall(text)]


@functools.lru_cache(maxsize=1 << 18)
def _bucket(feature: str, dim: int) -> tuple[int, float]:
    """The signed bucket of one feature: sha256, so identical in every process."""
    digest = hashlib.sha256(feature.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "little") % dim, 1.0 if digest[8] & 1 else -1.0


@functools.lru_cache(maxsize=1 << 16)
def _token_features(token: str, dim: int) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """Buckets and signed weights of a token's unigram and character 3-gram features."""
    bucket, sign = _bucket("w:" + token, dim)
    buckets = [bucket]
    weights = [sign * _UNIGRAM_WEIGHT]
    padded = f"<{token}>"
    grams = [padded[i : i + 3] for i in range(len(padded) - 2)]
    gram_weight = 1.0 / math.sqrt(len(grams))
    for gram in grams:
        bucket, sign = _bucket("c:" + gram, dim)
        buckets.append(bucket)
        weights.append(sign * gram_weight)
    return tuple(buckets), tuple(weights)


class HashingEmbedder:
    """An `Embedder` that needs nothing but numpy, for offline runs and tests.

    Features: word unigrams, word bigrams and character 3-grams within words (``<name>``
    padded), after dropping common function words (`STOPWORDS`). Each is hashed with sha256
    into one of ``dim`` buckets with a sign taken from the hash (so collisions cancel out on
    average rather than pile up). Vectors are L2-normalized, so texts that share words, or
    parts of words, have a higher dot product. Output is the same in every process and on
    every machine. A text with no word characters is hashed as one
    token; an empty text gets a fixed unit vector. Queries and documents are embedded alike.
    """

    #: queries are embedded as documents: a batch of queries may go through `embed_documents`
    symmetric = True

    def __init__(self, dim: int = 512) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 8:
            raise ConfigurationError(f"dim must be an integer >= 8, got {dim!r}")
        self._dim = dim

    @property
    def name(self) -> str:
        return f"hashing:{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def _vector(self, text: str) -> Vectors:
        dim = self._dim
        tokens = tokenize(text)
        if not tokens and text.strip():
            tokens = [text.strip().lower()]
        tokens = [token for token in tokens if token not in STOPWORDS] or tokens
        buckets: list[int] = []
        weights: list[float] = []
        for token in tokens:
            token_buckets, token_weights = _token_features(token, dim)
            buckets.extend(token_buckets)
            weights.extend(token_weights)
        for left, right in itertools.pairwise(tokens):
            bucket, sign = _bucket(f"b:{left} {right}", dim)
            buckets.append(bucket)
            weights.append(sign * _BIGRAM_WEIGHT)
        if buckets:
            vector = np.bincount(buckets, weights=weights, minlength=dim)
            norm = float(np.linalg.norm(vector))
            if norm > 0.0:
                return (vector / norm).astype(np.float32)
        # Nothing to hash, or every feature cancelled out: a fixed unit vector.
        empty = np.zeros(dim, dtype=np.float32)
        empty[_bucket(_EMPTY_FEATURE, dim)[0]] = 1.0
        return empty

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if isinstance(texts, str):
            raise ConfigurationError("texts must be a sequence of strings, not one string")
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        return np.stack([self._vector(text) for text in texts])

    def embed_query(self, text: str) -> Vectors:
        return self._vector(text)
