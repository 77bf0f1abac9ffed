"""Synthetic questions rewritten as an analyst would ask them, by a local model, for the reranker.

Template-written questions spell the schema ("... among epa historical air quality number 2
daily summaries whose observation percent ..."); a reranker trained on them learns the lexical
matching the fast ranker already does. A local GGUF model (`llamacpp:`) rewrites each one in
a colleague's words, keeping its conditions; `benchmarks/reranker_groups.py --paraphrases`
then ranks the rewrites with the fast ranker to mine training groups.

It reads the groups of `benchmarks/reranker_groups.py` (the fast ranker's confusions first: a
group whose gold database was not first, then the rest, each in a seeded order) and appends one
line per question to `--out`, so a stopped run resumes where it stopped:

    .venv/bin/python benchmarks/paraphrase_questions.py \
        --groups .schemarag/reranker/groups-export.jsonl \
        --model .schemarag/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf \
        --out .schemarag/reranker/paraphrases-export.jsonl --threads 1

A line: n (the group's), the synthetic question, the database, its tables, and `question`, the
rewrite, or `rejected` with why (empty, the same words, too short, a copied identifier).
"""

from __future__ import annotations

import argparse
import json
import logging
import random
import re
import sys
import time
from pathlib import Path
from typing import Any

from providers.llamacpp_llm import LlamaCppLLM
from providers.llm import Message
from retriever.text import normalize_question

log = logging.getLogger("paraphrase_questions")

SYSTEM = (
    "You rewrite questions about a database the way a business analyst would ask a colleague: "
    "short, natural English, no column or table names spelled with underscores, keep every "
    "condition and number. Answer with the rewritten question only."
)
SHOT = [
    Message(
        "user",
        "Among the session sources with more than 2 web analytics ga sessions, which 3 session "
        "sources have the largest total hits product product revenue?",
    ),
    Message("assistant", "Which three traffic sources brought in the most product revenue?"),
]
#: fewest words of a kept rewrite
MIN_WORDS = 4
IDENTIFIER = re.compile(r"\b\w+_\w+\b")


def ordered(groups: list[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
    """The fast ranker's confusions first (gold not first), then the rest, each shuffled."""
    rng = random.Random(seed)
    hard = [g for g in groups if g.get("gold", -1) > 0]
    easy = [g for g in groups if g.get("gold", -1) == 0]
    rng.shuffle(hard)
    rng.shuffle(easy)
    return hard + easy


def rejection(synthetic: str, rewrite: str) -> str | None:
    """Why `rewrite` is not kept, or None."""
    if not rewrite:
        return "empty"
    if normalize_question(rewrite) == normalize_question(synthetic):
        return "the same words"
    if len(rewrite.split()) < MIN_WORDS:
        return "too short"
    if IDENTIFIER.search(rewrite):
        return "a copied identifier"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--groups", type=Path, required=True)
    parser.add_argument("--model", type=Path, required=True, help="a GGUF file")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    if not args.groups.is_file():
        print(f"paraphrase_questions: error: {args.groups}: no such groups file", file=sys.stderr)
        return 2
    with args.groups.open(encoding="utf-8") as lines:
        groups = [g for g in map(json.loads, lines) if g.get("gold", -1) >= 0]
    todo = ordered(groups, args.seed)[: args.limit]
    done: set[int] = set()
    if args.out.is_file():
        with args.out.open(encoding="utf-8") as lines:
            done = {json.loads(line)["n"] for line in lines if line.strip()}
    todo = [g for g in todo if g["n"] not in done]
    log.info("%d groups, %d already rewritten, %d to go", len(groups), len(done), len(todo))
    llm = LlamaCppLLM(args.model, threads=args.threads, n_ctx=1024, seed=args.seed)
    started = time.perf_counter()
    with args.out.open("a", encoding="utf-8") as out:
        for i, group in enumerate(todo, start=1):
            reply = llm.complete(SYSTEM, [*SHOT, Message("user", group["question"])], max_tokens=80)
            rewrite = reply.text.strip().splitlines()[0].strip().strip('"') if reply.text else ""
            record: dict[str, Any] = {
                "n": group["n"],
                "synthetic": group["question"],
                "db": group["db"],
                "tables": group["tables"],
            }
            why = rejection(group["question"], rewrite)
            record.update({"rejected": why, "rewrite": rewrite} if why else {"question": rewrite})
            out.write(json.dumps(record) + "\n")
            out.flush()
            if i % 25 == 0:
                elapsed = time.perf_counter() - started
                log.info("%d of %d (%.1f s each)", i, len(todo), elapsed / i)
    return 0


if __name__ == "__main__":
    sys.exit(main())
