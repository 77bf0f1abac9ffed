"""Files of low-rank adapters (``NAME.A``, ``NAME.B`` arrays in an .npz): read once, merged by
the torch pipeline (`providers.schema_adapters.merge`) and the NumPy one
(`providers.numpy_minilm`) alike."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt

from providers.errors import ConfigurationError


def read_deltas(path: Path) -> dict[str, npt.NDArray[np.float32]]:
    """Each adapted layer's weight update ``B @ A``, by layer name (relative to the encoder).
    A file that is no adapter file is a `ConfigurationError` naming it."""
    try:
        with np.load(path) as arrays:
            loaded = {key: arrays[key].astype(np.float32) for key in arrays.files}
    except (OSError, ValueError, TypeError, AttributeError):  # not a file of named arrays
        raise ConfigurationError(
            f"adapters {str(path)!r}: not an .npz file of arrays (train adapters with "
            "benchmarks/train_embedder.py)"
        ) from None
    deltas = {}
    for name in sorted({key.rsplit(".", 1)[0] for key in loaded}):
        try:
            deltas[name] = loaded[f"{name}.B"] @ loaded[f"{name}.A"]
        except (KeyError, ValueError):
            raise misfit(path, name) from None
    return deltas


def misfit(path: Path, name: str) -> ConfigurationError:
    """The error for an adapter `name` of `path` that fits no linear layer of the model."""
    return ConfigurationError(
        f"adapters {str(path)!r}: {name!r} is no linear layer of this model, or its "
        "A and B arrays do not fit it (train them with benchmarks/train_embedder.py)"
    )
