"""The BIRD train split of the users'-examples benchmark, written as files the CLI reads.

BIRD train (`../shared/data/bird/train.json`, 9,428 questions over 69 databases) is shuffled with
`random.Random(0)`; the first 2,000 are evaluated (the fixed measured part of issues 14 and 15),
the other 7,428 may become users' examples. BIRD ids are prefixed `bird_`, since Spider has
databases of the same name, so the pool is Spider's 166 + BIRD train's 69 = 235 databases.

Written to OUT (default `.schemarag/bird-split`):

- `train_tables.json`  BIRD train's tables.json with `bird_` ids (schema only: no SQLite files);
- `evaluated.json`     the 2,000 evaluated questions (`question`, `SQL`, `db_id`);
- `examples_10.jsonl`, `examples_50.jsonl`  10 % and 50 % of the other 7,428, as users'
  examples (`question`, `sql`, `db_id`): the rest shuffled with `random.Random(SEED)`, the first
  743 and 3,714 (so the 10 % are part of the 50 %);
- `tuning.json`        500 questions of the rest that are in neither example file (for tuning;
  never the evaluated ones).

A question of the rest whose text equals an evaluated question's (normalized as the benchmark's
leakage check compares them) never becomes an example: it is left out and counted.

    .venv/bin/python benchmarks/bird_split.py [--bird DIR] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

from retriever.text import normalize_question

REPO = Path(__file__).resolve().parent.parent
BIRD = REPO.parent / "shared/data/bird"
PREFIX = "bird_"
EVALUATED = 2000
#: the seed that chooses the examples among the 7,428 (the evaluated split is seed 0)
SEED = 14
SHARES = {"10": 0.10, "50": 0.50}
TUNING = 500


def split(items: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The evaluated questions, the example sets and the tuning questions (see the docstring)."""
    items = [{**item, "db_id": PREFIX + item["db_id"]} for item in items]
    random.Random(0).shuffle(items)
    evaluated, rest = items[:EVALUATED], items[EVALUATED:]
    seen = {normalize_question(q["question"]) for q in evaluated}
    candidates = list(range(len(rest)))
    random.Random(SEED).shuffle(candidates)
    out: dict[str, list[dict[str, Any]]] = {"evaluated": evaluated}
    largest = 0
    for name, share in SHARES.items():
        size = round(share * len(rest))
        largest = max(largest, size)
        chosen = [rest[i] for i in candidates[:size]]
        out[f"examples_{name}"] = [
            {"question": q["question"], "sql": q["SQL"], "db_id": q["db_id"]}
            for q in chosen
            if normalize_question(q["question"]) not in seen
        ]
    out["tuning"] = [rest[i] for i in candidates[largest : largest + TUNING]]
    out["left_out"] = [
        q for q in rest if normalize_question(q["question"]) in seen
    ]  # for the summary only
    for name in SHARES:
        texts = {normalize_question(e["question"]) for e in out[f"examples_{name}"]}
        assert not texts & seen, "an evaluated question became an example"
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bird", type=Path, default=BIRD, help="BIRD train folder")
    parser.add_argument("--out", type=Path, default=REPO / ".schemarag/bird-split")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    tables = json.loads((args.bird / "train_tables.json").read_text(encoding="utf-8"))
    for db in tables:
        db["db_id"] = PREFIX + db["db_id"]
    (args.out / "train_tables.json").write_text(json.dumps(tables), encoding="utf-8")
    parts = split(json.loads((args.bird / "train.json").read_text(encoding="utf-8")))
    for name in ("evaluated", "tuning"):
        (args.out / f"{name}.json").write_text(json.dumps(parts[name], indent=1), encoding="utf-8")
    for name in SHARES:
        rows = parts[f"examples_{name}"]
        with (args.out / f"examples_{name}.jsonl").open("w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    print(
        f"{args.out}: {len(tables)} databases; evaluated {len(parts['evaluated'])}; examples "
        + ", ".join(f"{n} %: {len(parts[f'examples_{n}'])}" for n in SHARES)
        + f"; tuning {len(parts['tuning'])}; {len(parts['left_out'])} of the rest left out "
        "(their text equals an evaluated question)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
