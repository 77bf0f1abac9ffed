"""Golden pairs: on SQLite (Spider-style) databases the template synthesizer and the build's
chain runner write exactly the pairs they wrote before the warehouse work (issue 45), so
routing on Spider and BIRD cannot move. The file was written at 06a0ee0 by `golden_pairs`
below; write it again only when a change of the SQLite pairs is meant (and measured):

    .venv/bin/python -c "import runpy; runpy.run_path(
        'tests/indexer/synthesis/test_golden_sample.py')['write_golden']()"
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from indexer.synthesis.chains import make_chain_runner
from indexer.synthesis.feedback import RuleFeedback
from indexer.synthesis.pairs import Feedback, SynthesisRequest
from indexer.synthesis.templates import TemplateSynthesizer
from schemagraph import build_graph, enumerate_traversals, load_spider, sample_database

GOLDEN = Path(__file__).resolve().parent / "golden" / "sample_pairs.json.gz"
SAMPLE = Path(__file__).resolve().parents[3] / "schemarag" / "samples" / "spider"
_FEEDBACK = (
    ("GROUP BY", "HAVING"),
    ("LIKE", "NOT"),
    ("SUBQUERY",),
    ("LIMIT", "AVG"),
    ("BETWEEN", "OR", "DISTINCT"),
)


def golden_pairs(sample_dir: Path = SAMPLE) -> dict[str, list[list[str]]]:
    """Per traversal (`db:table,table`): the template pairs of two seeds, of each feedback
    operator set, and the chain runner's kept records (question, SQL)."""
    catalog = load_spider(sample_dir)
    samples = {db.id: sample_database(db) for db in catalog}
    synth = TemplateSynthesizer()
    runner = make_chain_runner(synth, RuleFeedback(), chains=2, iterations=2)
    out: dict[str, list[list[str]]] = {}
    for traversal in enumerate_traversals(build_graph(catalog)):
        db = catalog.database(traversal.db_id)
        sample = samples[db.id]
        pairs: list[list[str]] = []
        for seed in (0, 1):
            request = SynthesisRequest(db, traversal, sample, count=4, seed=seed)
            pairs += [[p.question, p.sql] for p in synth.synthesize(request)]
        for i, operators in enumerate(_FEEDBACK):
            feedback = Feedback("use these", operators)
            request = SynthesisRequest(db, traversal, sample, count=2, seed=i, feedback=feedback)
            pairs += [[p.question, p.sql] for p in synth.synthesize(request)]
        records: list[dict[str, Any]] = runner(db, traversal, sample, 7)
        pairs += [[r["question"], r["sql"]] for r in records if "question" in r]
        out[f"{db.id}:{','.join(traversal.tables)}"] = pairs
    return out


def write_golden() -> None:
    GOLDEN.parent.mkdir(exist_ok=True)
    text = json.dumps(golden_pairs(), indent=0, sort_keys=True)
    GOLDEN.write_bytes(gzip.compress(text.encode(), mtime=0))


def test_sqlite_pairs_are_the_pinned_ones(sample_dir: Path) -> None:
    expected = json.loads(gzip.decompress(GOLDEN.read_bytes()))
    found = golden_pairs(sample_dir)
    assert sorted(found) == sorted(expected)
    for key, pairs in expected.items():
        assert found[key] == pairs, key
