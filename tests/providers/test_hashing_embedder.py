"""HashingEmbedder: deterministic, normalized, and texts sharing words end up close."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from providers import ConfigurationError, Embedder, HashingEmbedder, tokenize, tokenize_words

REPO = Path(__file__).resolve().parents[2]
GOLDEN_TEXT = "concert singer: singer id, name, country"
# sha256 of the float32 bytes of GOLDEN_TEXT's vector at dim 512. If this changes, every cached
# or stored hashing embedding is stale: change it only together with the embedder's name.
GOLDEN_DIGEST = "1818fa6308d9e9d36fa5a015f2a78107c3a8e25b0e19fd0806c8bb2dceea11f1"


@pytest.fixture(scope="module")
def embedder() -> HashingEmbedder:
    return HashingEmbedder(512)


def test_vectors_have_the_documented_shape_dtype_and_unit_norm(embedder):
    vectors = embedder.embed_documents(["singer name", "stadium capacity", "x"])

    assert vectors.shape == (3, 512)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    assert embedder.embed_query("singer name").shape == (512,)
    assert embedder.embed_documents([]).shape == (0, 512)


def test_output_is_pinned_to_a_golden_digest(embedder):
    vector = embedder.embed_query(GOLDEN_TEXT)

    assert hashlib.sha256(vector.tobytes()).hexdigest() == GOLDEN_DIGEST


def test_output_is_identical_in_a_fresh_process_with_another_hash_seed(embedder):
    code = (
        "import hashlib; from providers import HashingEmbedder; "
        f"v = HashingEmbedder(512).embed_query({GOLDEN_TEXT!r}); "
        "print(hashlib.sha256(v.tobytes()).hexdigest())"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "12345", "PYTHONPATH": str(REPO)},
        cwd=REPO,
    )

    assert result.stdout.strip() == GOLDEN_DIGEST


def test_texts_sharing_words_are_closer_than_unrelated_texts(embedder):
    anchor, related, unrelated = embedder.embed_documents(
        [
            "How many singers do we have?",
            "Count the number of singers.",
            "What is the average horsepower of cars made in 1970?",
        ]
    )

    assert anchor @ related > 0.4
    assert anchor @ unrelated < 0.1


def test_word_pieces_make_inflections_close(embedder):
    pairs = [
        ("singers", "singer"),
        ("countries", "country"),
        ("employees", "employee"),
        ("students", "student"),
        ("airports", "airport"),
    ]
    plurals = embedder.embed_documents([plural for plural, _ in pairs])
    singulars = embedder.embed_documents([singular for _, singular in pairs])

    inflections = np.sum(plurals * singulars, axis=1)
    unrelated = plurals @ plurals.T - np.eye(len(pairs))

    assert inflections.min() > 0.25
    assert unrelated.mean() < 0.05


def test_function_words_are_ignored_unless_nothing_else_is_left(embedder):
    with_filler, without = embedder.embed_documents(
        ["What is the name of the singer?", "name singer"]
    )
    only_filler = embedder.embed_query("what is the")

    np.testing.assert_allclose(with_filler, without, atol=1e-6)
    assert not np.array_equal(only_filler, embedder.embed_query(""))


def test_identifiers_are_split_into_words(embedder):
    assert tokenize("SingerID order_date HTTPServer") == [
        "singer",
        "id",
        "order",
        "date",
        "http",
        "server",
    ]
    snake, spaced = embedder.embed_documents(["order_date", "order date"])
    np.testing.assert_allclose(snake, spaced)


def test_tokens_grouped_by_written_word() -> None:
    assert tokenize_words("GitHub repos, order_date") == [
        ["git", "hub"],
        ["repos"],
        ["order"],
        ["date"],
    ]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("aZb9_ .-'HtTpSé"), max_size=30))
def test_grouped_tokens_are_the_tokens(text: str) -> None:
    grouped = tokenize_words(text)
    assert [t for word in grouped for t in word] == tokenize(text)
    assert all(grouped)


def test_documents_and_queries_are_embedded_alike(embedder):
    np.testing.assert_array_equal(
        embedder.embed_query("pets owned by students"),
        embedder.embed_documents(["pets owned by students"])[0],
    )


def test_empty_and_punctuation_only_texts_still_get_unit_vectors(embedder):
    empty, blank, punct = embedder.embed_documents(["", "   ", "?!"])

    np.testing.assert_array_equal(empty, blank)
    assert np.linalg.norm(punct) == pytest.approx(1.0, abs=1e-6)
    assert not np.array_equal(empty, punct)


def test_name_dim_and_protocol():
    embedder = HashingEmbedder(64)

    assert embedder.name == "hashing:64"
    assert embedder.dim == 64
    assert isinstance(embedder, Embedder)


@pytest.mark.parametrize("dim", [0, 7, -1, 12.5, True])
def test_invalid_dim_is_rejected(dim):
    with pytest.raises(ConfigurationError, match="dim"):
        HashingEmbedder(dim)


def test_a_single_string_is_not_mistaken_for_a_list_of_texts(embedder):
    with pytest.raises(ConfigurationError, match="not one string"):
        embedder.embed_documents("singer")


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=200), dim=st.sampled_from([8, 64, 512]))
def test_any_text_gets_a_unit_vector_and_the_same_one_twice(text, dim):
    embedder = HashingEmbedder(dim)

    first = embedder.embed_query(text)
    second = HashingEmbedder(dim).embed_documents([text])[0]

    assert first.shape == (dim,)
    assert np.isfinite(first).all()
    assert float(np.linalg.norm(first)) == pytest.approx(1.0, abs=1e-5)
    np.testing.assert_array_equal(first, second)
