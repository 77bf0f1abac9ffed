"""all-MiniLM-L6-v2 in NumPy, for a process that embeds a few questions and exits.

Loading the model through sentence-transformers imports torch and transformers first: about
5 s of a command's start-up, for one question. `NumpyBert` reads the same weights
(``model.safetensors``, with the schema adapters merged the same way) and the same tokenizer
(``tokenizer.json`` through the ``tokenizers`` library) and computes the same pipeline: BERT,
mean pooling over the real tokens, unit length. Its vectors equal sentence-transformers' fp32
ones to about 1e-6 (tests/providers/test_numpy_minilm.py). Texts of the same length in tokens
run as one batch; in fp32, and without `providers.packed_bert`'s reordered weights, it is slower
than the torch pipeline on a large batch, and far quicker to start.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from providers.adapter_files import misfit, read_deltas
from providers.embedding import normalize_rows
from providers.errors import MissingDependencyError

__all__ = ["NumpyBert", "supports"]

Array = npt.NDArray[np.float32]


def supports(path: Path) -> bool:
    """Whether the sentence-transformers model in `path` is the pipeline `NumpyBert` computes:
    a BERT encoder (GELU, absolute positions) in safetensors, mean pooling, normalization."""
    try:
        config = json.loads((path / "config.json").read_text())
        modules = json.loads((path / "modules.json").read_text())
        pooling = json.loads((path / "1_Pooling" / "config.json").read_text())
    except (OSError, ValueError):
        return False
    kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules]
    return (
        config.get("model_type") == "bert"
        and config.get("hidden_act") == "gelu"
        and config.get("position_embedding_type", "absolute") == "absolute"
        and kinds == ["Transformer", "Pooling", "Normalize"]
        and bool(pooling.get("pooling_mode_mean_tokens"))
        and not any(
            pooling.get(k)
            for k in (
                "pooling_mode_cls_token",
                "pooling_mode_max_tokens",
                "pooling_mode_mean_sqrt_len_tokens",
            )
        )
        and (path / "model.safetensors").is_file()
        and (path / "tokenizer.json").is_file()
    )


class NumpyBert:
    """The sentence encoder of `path` (see `supports`), with the low-rank `adapters` (an .npz
    of ``NAME.A``/``NAME.B`` pairs, `providers.schema_adapters`) added to its linear weights."""

    def __init__(self, path: Path, adapters: Path | None = None) -> None:
        try:
            from safetensors.numpy import load_file
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise MissingDependencyError(
                "sentence-transformers", "minilm", "the MiniLM embedder"
            ) from exc
        config = json.loads((path / "config.json").read_text())
        settings = json.loads((path / "sentence_bert_config.json").read_text())
        self._heads = int(config["num_attention_heads"])
        self._layers = int(config["num_hidden_layers"])
        self._eps = float(config["layer_norm_eps"])
        self._weights: dict[str, Array] = {
            name: array
            for name, array in load_file(str(path / "model.safetensors")).items()
            if array.dtype == np.float32
        }
        if adapters is not None:
            self._merge(adapters)
        self._tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        self._tokenizer.enable_truncation(int(settings["max_seq_length"]))
        self._tokenizer.no_padding()

    def _merge(self, adapters: Path) -> None:
        for name, delta in read_deltas(adapters).items():
            weight = self._weights.get(f"encoder.{name}.weight")
            if weight is None or delta.shape != weight.shape:
                raise misfit(adapters, name)
            self._weights[f"encoder.{name}.weight"] = weight + delta

    def encode(self, texts: Sequence[str]) -> Array:
        """Unit vectors of `texts`, one row each. Texts of the same length in tokens go through
        the model together, so no text is padded."""
        encodings = self._tokenizer.encode_batch(list(texts))
        by_length: dict[int, list[int]] = {}
        for i, encoding in enumerate(encodings):
            by_length.setdefault(len(encoding.ids), []).append(i)
        out = np.empty((len(encodings), self._weights["embeddings.LayerNorm.bias"].shape[0]))
        for positions in by_length.values():
            ids = np.array([encodings[i].ids for i in positions], dtype=np.int64)
            out[positions] = self._pooled(ids)
        return normalize_rows(out.astype(np.float32))

    def _pooled(self, ids: npt.NDArray[np.int64]) -> Array:
        """Mean-pooled last hidden states of `ids` (texts x tokens, no padding)."""
        w = self._weights
        hidden = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][: ids.shape[1]]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        hidden = self._norm(hidden, "embeddings.LayerNorm")
        for layer in range(self._layers):
            hidden = self._layer(hidden, f"encoder.layer.{layer}")
        pooled: Array = hidden.mean(axis=1)
        return pooled

    def _layer(self, hidden: Array, prefix: str) -> Array:
        texts, n, width = hidden.shape
        size = width // self._heads

        def heads(name: str) -> Array:
            projected = self._linear(hidden, f"{prefix}.attention.self.{name}")
            return projected.reshape(texts, n, self._heads, size).transpose(0, 2, 1, 3)

        query, key, value = heads("query"), heads("key"), heads("value")
        scores = query @ key.transpose(0, 1, 3, 2) / math.sqrt(size)
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ value).transpose(0, 2, 1, 3).reshape(texts, n, width)
        attended = self._linear(context, f"{prefix}.attention.output.dense")
        hidden = self._norm(attended + hidden, f"{prefix}.attention.output.LayerNorm")
        inner = _gelu(self._linear(hidden, f"{prefix}.intermediate.dense"))
        return self._norm(
            self._linear(inner, f"{prefix}.output.dense") + hidden, f"{prefix}.output.LayerNorm"
        )

    def _linear(self, x: Array, name: str) -> Array:
        out: Array = x @ self._weights[f"{name}.weight"].T + self._weights[f"{name}.bias"]
        return out

    def _norm(self, x: Array, name: str) -> Array:
        mean = x.mean(axis=-1, keepdims=True)
        variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        scaled = (x - mean) / np.sqrt(variance + self._eps)
        out: Array = scaled * self._weights[f"{name}.weight"] + self._weights[f"{name}.bias"]
        return out


def _gelu(x: Array) -> Array:
    """GELU with the exact error function (BERT's "gelu"), through Abramowitz and Stegun 7.1.26
    (absolute error under 1.5e-7)."""
    z = np.abs(x) / math.sqrt(2.0)
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    erf = np.sign(x) * (1.0 - poly * np.exp(-z * z))
    return (0.5 * x * (1.0 + erf)).astype(np.float32)
