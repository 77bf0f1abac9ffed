"""A BERT sentence encoder (mean pooling, unit length) that runs a batch without padding.

sentence-transformers pads every text of a batch to the longest one. On Spider's questions
(15.6 tokens on average; 21.2 in length-sorted batches of 8) a quarter of the matrix products is
spent on padding. `PackedBert` concatenates the batch's tokens into one sequence instead: the
linear layers, which are nearly all the work, see only real tokens. Attention is the one step
that mixes tokens; for it the tokens are scattered into a (texts x longest) layout, attended per
text with a key mask, and gathered back. The result is the padded computation's, minus the
padding: vectors equal sentence-transformers' to 2e-7 in fp32.

The linear layers' weights are reordered for oneDNN once, at load (what `torch.compile` does
for CPU linears), rather than on every call. In bf16 the hidden states stay fp32 (layer norms,
residuals, attention, pooling) and each linear layer multiplies in bfloat16. Measured on one
core (Spider dev questions, batches of 8, tokenization included), per question: fp32 1.8 ms
against 4.3 for the padded pipeline traced to TorchScript (3.7 packed without reordered
weights); bf16 1.10 ms against 1.59 traced with autocast; a lone question 3.2 ms in fp32
against 6.2, 1.9 in bf16 against 3.4.

The module is compiled with TorchScript: a call runs in C++ without holding Python's
interpreter lock, so a server's other threads go on while it embeds.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

__all__ = ["PackedBert", "compile_packed", "encode", "padded_length", "supports"]


def supports(model: Any) -> bool:
    """Whether a sentence-transformers model is the pipeline `PackedBert` computes: a BERT
    encoder (GELU, absolute positions), mean pooling, normalization."""
    modules = [type(m).__name__ for m in model]
    if modules != ["Transformer", "Pooling", "Normalize"]:
        return False
    if getattr(model[1], "pooling_mode", None) != "mean":
        return False
    config = getattr(getattr(model[0], "auto_model", None), "config", None)
    return (
        getattr(config, "model_type", None) == "bert"
        and getattr(config, "hidden_act", None) == "gelu"
        and getattr(config, "position_embedding_type", "absolute") == "absolute"
    )


class PackedBert(torch.nn.Module):
    """`bert` (a transformers `BertModel`) as a packed-batch encoder; `bf16`: linear layers in
    bfloat16; `packed_weights`: reordered for oneDNN (which torch must have, with its bf16
    kernels for bf16), else plain `linear` calls."""

    def __init__(self, bert: Any, bf16: bool, packed_weights: bool) -> None:
        super().__init__()
        config = bert.config
        embeddings = bert.embeddings
        self.heads = int(config.num_attention_heads)
        self.head_dim = int(config.hidden_size) // self.heads
        self.eps = float(config.layer_norm_eps)
        self.dtype = torch.bfloat16 if bf16 else torch.float32
        self.packed = packed_weights

        def fp32(tensor: Any) -> torch.Tensor:
            return tensor.detach().float().clone()

        self.words = fp32(embeddings.word_embeddings.weight)
        self.positions = fp32(embeddings.position_embeddings.weight)
        self.token_type = fp32(embeddings.token_type_embeddings.weight[0])
        self.norm = [fp32(embeddings.LayerNorm.weight), fp32(embeddings.LayerNorm.bias)]
        weights: list[torch.Tensor] = []
        biases: list[torch.Tensor] = []
        for layer in bert.encoder.layer:
            attention = layer.attention.self
            linears = [
                (  # query, key and value in one product
                    torch.cat(
                        [attention.query.weight, attention.key.weight, attention.value.weight]
                    ),
                    torch.cat([attention.query.bias, attention.key.bias, attention.value.bias]),
                ),
                (layer.attention.output.dense.weight, layer.attention.output.dense.bias),
                (layer.intermediate.dense.weight, layer.intermediate.dense.bias),
                (layer.output.dense.weight, layer.output.dense.bias),
            ]
            for weight, bias in linears:
                weight = weight.detach().to(self.dtype).clone()
                if packed_weights:
                    weight = torch.ops.mkldnn._reorder_linear_weight(weight, 128)
                weights.append(weight)
                biases.append(bias.detach().to(self.dtype).clone())
            self.norm += [
                fp32(layer.attention.output.LayerNorm.weight),
                fp32(layer.attention.output.LayerNorm.bias),
                fp32(layer.output.LayerNorm.weight),
                fp32(layer.output.LayerNorm.bias),
            ]
        self.weights = weights
        self.biases = biases

    def _linear(self, x: torch.Tensor, i: int, gelu: bool) -> torch.Tensor:
        if self.packed:
            attr = "gelu" if gelu else "none"
            algorithm = "none" if gelu else ""
            y = torch.ops.mkldnn._linear_pointwise(
                x.to(self.dtype), self.weights[i], self.biases[i], attr, [], algorithm
            )
            return y.float()
        y = torch.nn.functional.linear(x.to(self.dtype), self.weights[i], self.biases[i]).float()
        return torch.nn.functional.gelu(y) if gelu else y

    def _norm(self, x: torch.Tensor, i: int) -> torch.Tensor:
        return torch.nn.functional.layer_norm(
            x, [x.shape[-1]], self.norm[2 * i], self.norm[2 * i + 1], self.eps
        )

    def forward(
        self, ids: torch.Tensor, positions: torch.Tensor, texts: torch.Tensor, count: int
    ) -> torch.Tensor:
        """`ids`, `positions`, `texts`: per token, its id, its position in its text and its
        text's row (0..count-1). Returns (count x hidden) unit vectors."""
        hidden = self._norm(self.words[ids] + self.positions[positions] + self.token_type, 0)
        longest = int(positions.max()) + 1
        slot = texts * longest + positions  # the token's row in the (texts x longest) layout
        present = torch.zeros(count * longest, dtype=torch.bool).index_fill_(0, slot, True)
        mask = torch.zeros(count, 1, 1, longest).masked_fill(
            ~present.view(count, 1, 1, longest), float("-inf")
        )
        scale = 1.0 / math.sqrt(self.head_dim)
        width = self.heads * self.head_dim
        for layer in range(len(self.weights) // 4):
            qkv = self._linear(hidden, 4 * layer, False)
            laid = torch.zeros(count * longest, 3 * width).index_copy_(0, slot, qkv)
            qkv = laid.view(count, longest, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
            scores = torch.matmul(qkv[0], qkv[1].transpose(-1, -2)) * scale + mask
            context = torch.matmul(torch.softmax(scores, dim=-1), qkv[2])
            context = context.permute(0, 2, 1, 3).reshape(count * longest, width)[slot]
            hidden = self._norm(self._linear(context, 4 * layer + 1, False) + hidden, 2 * layer + 1)
            inner = self._linear(hidden, 4 * layer + 2, True)
            hidden = self._norm(self._linear(inner, 4 * layer + 3, False) + hidden, 2 * layer + 2)
        sums = torch.zeros(count, hidden.shape[1]).index_add_(0, texts, hidden)
        tokens = torch.bincount(texts, minlength=count).clamp(min=1).to(hidden.dtype)
        return torch.nn.functional.normalize(sums / tokens[:, None], dim=1)


def compile_packed(model: Any, bf16: bool, packed_weights: bool) -> Any:
    """`PackedBert` of a sentence-transformers model (see `supports`), TorchScript-compiled
    (torch 2.13 warns that TorchScript is deprecated; `torch.compile` would need a C++ compiler
    at run time and a compilation in every process)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return torch.jit.script(PackedBert(model[0].auto_model, bf16, packed_weights).eval())


def padded_length(tokens: int) -> int:
    """`tokens` rounded up to a multiple of 4 (up to 64), 16 (up to 512) or 64. oneDNN keeps
    kernels and buffers per matrix shape: embedding 3,000 batches of 1 to 32 Spider questions
    with each batch's exact token count grew a process by 0.97 GB (the padded pipeline before
    this one grew as much); with these sizes, by 0.14 GB, for 6-9 % more work."""
    step = 4 if tokens <= 64 else 16 if tokens <= 512 else 64
    return -(-tokens // step) * step


def encode(
    module: Any, tokenizer: Any, texts: Sequence[str], batch_size: int, max_length: int
) -> np.ndarray:
    """Unit vectors of `texts` (stripped, truncated to `max_length` tokens), `batch_size`
    texts per call, longest first as sentence-transformers batches them; rows in input order."""
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    out: np.ndarray | None = None
    for start in range(0, len(order), batch_size):
        rows = order[start : start + batch_size]
        encoded = tokenizer(
            [texts[i].strip() for i in rows], truncation=True, max_length=max_length
        )["input_ids"]
        # filler tokens (a text of their own, dropped) round the length up to a few sizes
        tokens = sum(len(text) for text in encoded)
        filler = padded_length(tokens) - tokens
        ids = torch.tensor([t for text in encoded for t in text] + [0] * filler)
        positions = torch.tensor([p for text in encoded for p in range(len(text))] + [0] * filler)
        owner = [row for row, text in enumerate(encoded) for _ in text] + [len(rows)] * filler
        with torch.inference_mode():
            vectors = module(ids, positions, torch.tensor(owner), len(rows) + 1).numpy()
        vectors = vectors[: len(rows)]
        if out is None:
            out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
        out[rows] = vectors
    return out if out is not None else np.zeros((0, 0), dtype=np.float32)
