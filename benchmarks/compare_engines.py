"""Do MiniLM's two engines route alike? Spider dev over one index, torch (bf16 where the CPU
has it, what `bench recall` and `serve` run) against NumPy (fp32, what `retrieve` and `ask`
run): top-1 database and the order of the top five databases, question by question.

    .venv/bin/python benchmarks/compare_engines.py STORE [--questions dev.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from providers import MiniLMEmbedder
from retriever import Retriever
from schemarag.cli.retrieve import single_threaded
from schemarag.settings import Settings
from store import StoreLocation
from store.manifest import read_manifest

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("store")
    parser.add_argument(
        "--questions", type=Path, default=REPO.parent / "shared/data/spider/dev.json"
    )
    args = parser.parse_args()
    questions = [q["question"] for q in json.loads(args.questions.read_text())]
    location = StoreLocation.parse(args.store)
    build = location.current()
    if build is None:
        print(f"compare_engines: {args.store}: no built index", file=sys.stderr)
        return 2
    spec = read_manifest(location, build).embedder_spec()
    single_threaded(torch=True)
    rankings = {}
    for engine in ("torch", "numpy"):
        embedder = Settings.from_env().embedder(spec)
        assert isinstance(embedder, MiniLMEmbedder), spec
        with Retriever.open(args.store, embedder.with_engine(engine)) as retriever:
            started = time.perf_counter()
            rankings[engine] = [
                tuple(d.db_id for d in retriever.retrieve(q, 5, 5).databases) for q in questions
            ]
            per_question = (time.perf_counter() - started) / len(questions) * 1000
        print(f"{engine}: {per_question:.1f} ms a question")
    pairs = list(zip(rankings["torch"], rankings["numpy"], strict=True))
    first = sum(a[:1] == b[:1] for a, b in pairs)
    five = sum(a == b for a, b in pairs)
    print(f"top-1 database equal {first}/{len(pairs)}, top-5 order equal {five}/{len(pairs)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
