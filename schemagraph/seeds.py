"""Explicit, portable randomness: seeds derived with sha256, never Python's `hash()`."""

from __future__ import annotations

import hashlib


def derive_seed(seed: int, *parts: object) -> int:
    """A 64-bit seed from a base seed and any labels; the same on every machine and run."""
    text = "\x1f".join([str(seed), *map(str, parts)])
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")
