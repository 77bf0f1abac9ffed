"""BIRD train in a mixed pool, with and without column documentation: the input files.

    python benchmarks/bird_docs.py ../shared/data/bird .schemarag/bird-train
    schemarag bench recall --tables ../shared/data/spider/tables.json \
        .schemarag/bird-train/tables.json --questions .schemarag/bird-train/questions.json
    schemarag bench recall ... --docs .schemarag/bird-train/docs.json

Writes to OUT:
- `tables.json`: BIRD's train_tables.json with every db_id prefixed `bird_` (so that the pool
  can hold Spider's databases too without a clash);
- `questions.json`: the evaluated questions, train.json shuffled with `random.Random(seed)` and
  the first `--count` kept, db_id prefixed;
- `docs.json`: a `docs:` file (`bird_db.table.column` → text) from train_column_meaning.json
  (`"db|table|column": text`). Those texts were written by a language model and often name
  their database ("... column in the 'divisions' table of the 'european_football_1'
  database ..."); the database's name is removed, because documentation does not usually spell
  out the id a router is asked to find.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from evaluation.bird import docs_entries, evaluated_questions, prefixed_tables


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bird", type=Path, help="folder of train_tables.json, train.json, ...")
    parser.add_argument("out", type=Path, help="folder to write")
    parser.add_argument("--count", type=int, default=2000, help="questions evaluated")
    parser.add_argument("--seed", type=int, default=0, help="shuffle seed")
    args = parser.parse_args()

    def read(name: str) -> Any:
        return json.loads((args.bird / name).read_text(encoding="utf-8"))

    args.out.mkdir(parents=True, exist_ok=True)
    files = {
        "tables.json": prefixed_tables(read("train_tables.json")),
        "questions.json": evaluated_questions(read("train.json"), args.count, args.seed),
        "docs.json": docs_entries(read("train_column_meaning.json")),
    }
    for name, data in files.items():
        (args.out / name).write_text(json.dumps(data, indent=1, ensure_ascii=False))
        print(f"{args.out / name}: {len(data)} entries")


if __name__ == "__main__":
    main()
