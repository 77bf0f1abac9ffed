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
import random
import re
from pathlib import Path
from typing import Any

PREFIX = "bird_"


def prefixed_tables(tables: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**entry, "db_id": PREFIX + entry["db_id"]} for entry in tables]


def evaluated_questions(rows: list[dict[str, Any]], count: int, seed: int) -> list[dict[str, Any]]:
    shuffled = list(rows)
    random.Random(seed).shuffle(shuffled)
    return [{**row, "db_id": PREFIX + row["db_id"]} for row in shuffled[:count]]


def without_database_name(text: str, db_id: str) -> str:
    """`text` without the phrases that name database `db_id` ("of the 'hockey' database",
    "identified by db id 'address'")."""
    name = re.escape(db_id)
    quoted = rf"['\"`]?{name}['\"`]?"
    text = re.sub(
        rf",?\s*(?:identified (?:by db id|as)|(?:with)?in|of|from|for)\s+(?:the\s+)?{quoted}"
        rf"(?:\s+database)?\b",
        "",
        text,
        flags=re.IGNORECASE,
    )
    text = re.sub(rf"\b(?:the\s+)?{quoted}\s+database\b", "the database", text, flags=re.I)
    return re.sub(r"\s+", " ", text).strip()


def docs_entries(meanings: dict[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, text in meanings.items():
        db_id, table, column = key.split("|", 2)
        out[f"{PREFIX}{db_id}.{table}.{column}"] = without_database_name(text, db_id)
    return out


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
