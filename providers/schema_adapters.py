"""Low-rank adapters that fit MiniLM to schema routing, merged into its weights at load.

An adapter file (.npz) holds, for each adapted linear layer of the BERT encoder
(``layer.K.attention.self.query`` ...), ``NAME.A`` (rank x in) and ``NAME.B`` (out x rank,
its scale applied; float16 or float32): the layer's weight becomes ``W + B @ A``.
`benchmarks/train_embedder.py` trains them on train questions.

The shipped adapters (``minilm+schema``, `providers.minilm_embedder.SCHEMA_ADAPTERS`, version
2) were trained on Spider train, its Spider-Syn rewrites and BIRD train's tuning questions (four
fifths of the databases: the others were kept for the fusion's held-out checks), pulling each
question towards its gold tables' documents and its database's synthetic questions; half of the
trained update is written, which did better than all of it on those held-out questions
(the decision log of docs/BENCHMARKS.md). Version 1
(``minilm+schema-v1``, Spider's questions only) stays for the indexes built with it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from providers.adapter_files import misfit, read_deltas

__all__ = ["TARGETS", "LoRALinear", "merge"]

#: the linear layers of a BERT layer that get an adapter
TARGETS = (
    "attention.self.query",
    "attention.self.key",
    "attention.self.value",
    "attention.output.dense",
    "intermediate.dense",
    "output.dense",
)


class LoRALinear(torch.nn.Module):
    """`base(x) + scale * x A^T B^T`, with `base` frozen (for training)."""

    def __init__(self, base: torch.nn.Linear, rank: int, alpha: float | None = None) -> None:
        super().__init__()
        self.base = base
        self.scale = (alpha if alpha is not None else 2.0 * rank) / rank
        self.A = torch.nn.Parameter(torch.empty(rank, base.in_features))
        self.B = torch.nn.Parameter(torch.zeros(base.out_features, rank))
        torch.nn.init.kaiming_uniform_(self.A, a=5**0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.base(x) + (x @ self.A.T @ self.B.T) * self.scale


def merge(bert: Any, path: Path) -> int:
    """Add the adapters of `path` to `bert`'s (a transformers `BertModel`) linear weights;
    returns how many layers changed. A file that is no adapter file of this model is a
    `ConfigurationError`, and then no weight has changed."""
    deltas = {}
    for name, delta in read_deltas(path).items():
        try:
            layer = bert.encoder.get_submodule(name)
        except AttributeError:
            raise misfit(path, name) from None
        if not isinstance(layer, torch.nn.Linear) or delta.shape != layer.weight.shape:
            raise misfit(path, name)
        deltas[name] = (layer, torch.from_numpy(delta))
    with torch.no_grad():
        for layer, delta in deltas.values():
            layer.weight += delta.to(layer.weight.dtype)
    return len(deltas)
