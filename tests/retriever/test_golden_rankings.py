"""Golden rankings: the bundled sample, built by the real indexer (template synthesis, the hashing
embedder), ranks a fixed set of questions exactly as it did when the file was written: every
database and table in order, their scores, the confidence, twins and `also_in`. Fusion, twins,
confidence and table choice can be moved or restructured; what a user gets cannot change unless
a commit of its own means it (and measures it). Write the file again only then:

    .venv/bin/python -c "import runpy; runpy.run_path(
        'tests/retriever/test_golden_rankings.py')['write_golden']()"

The questions are the template synthesizer's own, drawn with a seed the build does not use, so
that most are not in the index word for word.
"""

from __future__ import annotations

import gzip
import json
import tempfile
from pathlib import Path
from typing import Any

from indexer import (
    BuildConfig,
    BuildServices,
    build_index,
    make_chain_runner,
    make_feedback,
    make_synthesizer,
)
from indexer.synthesis.pairs import SynthesisRequest
from indexer.synthesis.templates import TemplateSynthesizer
from providers import HashingEmbedder
from retriever import Retriever
from schemagraph import (
    TraversalConfig,
    build_graph,
    enumerate_traversals,
    load_spider,
    sample_database,
)
from store import StoreLocation

GOLDEN = Path(__file__).resolve().parent / "golden" / "sample_rankings.json.gz"
SAMPLE = Path(__file__).resolve().parents[2] / "schemarag" / "samples" / "spider"
QUESTION_SEED = 9_001


def questions(sample_dir: Path = SAMPLE) -> list[str]:
    catalog = load_spider(sample_dir)
    synth = TemplateSynthesizer()
    out: list[str] = []
    for traversal in enumerate_traversals(build_graph(catalog)):
        db = catalog.database(traversal.db_id)
        request = SynthesisRequest(db, traversal, sample_database(db), count=1, seed=QUESTION_SEED)
        out += [pair.question for pair in synth.synthesize(request)]
    return list(dict.fromkeys(out))


def rankings(store: Path, sample_dir: Path = SAMPLE) -> dict[str, Any]:
    """Build the sample into `store`, then each question's result without its timings."""
    embedder = HashingEmbedder(256)
    runner = make_chain_runner(
        make_synthesizer("template", None), make_feedback("rule", None), chains=2, iterations=1
    )
    config = BuildConfig(traversal=TraversalConfig(max_per_database=4, walks=1, seed=0), seed=0)
    build_index(
        load_spider(sample_dir),
        StoreLocation.parse(store),
        BuildServices(runner, "template", embedder),
        config,
    )
    out: dict[str, Any] = {}
    with Retriever.open(store, embedder) as retriever:
        for question in questions(sample_dir):
            result = retriever.retrieve(question, top_databases=5, top_tables=6).as_dict()
            result.pop("timings", None)
            out[question] = result
    return out


def write_golden() -> None:
    GOLDEN.parent.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        found = rankings(Path(tmp) / "kb")
    GOLDEN.write_bytes(gzip.compress(json.dumps(found, indent=0, sort_keys=True).encode(), mtime=0))


def test_the_sample_ranks_as_it_did(tmp_path: Path) -> None:
    expected = json.loads(gzip.decompress(GOLDEN.read_bytes()))
    found = json.loads(json.dumps(rankings(tmp_path / "kb"), sort_keys=True))
    assert len(found) >= 40
    assert sorted(found) == sorted(expected)
    changed = [q for q in expected if found[q] != expected[q]]
    assert changed == [], f"{len(changed)} of {len(expected)} rankings changed, first: {changed[0]}"
