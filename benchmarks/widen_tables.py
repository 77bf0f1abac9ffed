"""Write a copy of a Spider-layout pool whose tables are wide.

Real warehouses keep tables of hundreds of columns, and the columns a question needs may sit
anywhere in them. This turns a clean pool into such an estate without changing its questions:
each widened table keeps its first column first (Spider's key, usually) and gets filler
columns until it has a width drawn from `--width`; its other columns are scattered among the
filler at random positions. Filler names are what wide tables carry: audit and load columns
(`etl_batch_id`, `valid_from`), per-period measures from `evaluation.estates` (`q3_revenue`)
and numbered custom attributes (`udf_017`). `--filler scattered` (the default) draws them one by
one, so a table holds a few of each period measure; `--filler pivoted` gives every widened table
all twelve audit columns and whole period families (`m1_revenue` ... `m12_revenue`, `q1` ...
`q4`, `w1` ... `w52`), each family's columns side by side, as pivoted warehouse tables hold
them, with the table's own columns placed between the families. Keys are remapped, so the gold
SQL of the pool's questions still names the same tables and columns. The SQLite files are
copied with the filler columns added (numbers computed from the row id, text for `TEXT_AUDIT`),
so the index build validates its synthetic SQL on them as on the original pool.

    .venv/bin/python benchmarks/widen_tables.py ../shared/data/spider W
    .venv/bin/schemarag bench recall --tables W/tables.json --databases W/database \
        --questions ../shared/data/spider/dev.json --per-question --json R.json

Every choice is drawn from `random.Random(seed)`, per database and table.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sqlite3
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

from evaluation.estates import WIDE_PERIODS, WIDE_STEMS
from schemagraph.readonly import quote_identifier
from schemagraph.seeds import derive_seed

REPO = Path(__file__).resolve().parent.parent
AUDIT = (
    "etl_batch_id",
    "etl_load_ts",
    "src_system_cd",
    "src_record_key",
    "row_hash",
    "is_current",
    "is_deleted",
    "valid_from",
    "valid_to",
    "created_by",
    "updated_by",
    "record_version",
)
#: the audit columns that hold text (ids, codes, hashes); every other filler column is a number
TEXT_AUDIT = frozenset(AUDIT[:5])
FILLER = (
    AUDIT
    + tuple(f"{p}_{s}" for p in WIDE_PERIODS for s in WIDE_STEMS)
    + tuple(f"udf_{i:03d}" for i in range(1, 200))
)


#: the pivoted filler's periods and how many of each
PIVOTS = (("m", 12), ("q", 4), ("w", 52))


def widen(
    db: dict[str, Any], width: tuple[int, int], share: float, seed: int, pivoted: bool = False
) -> tuple[dict[str, Any], int]:
    """`db` (a tables.json entry) with a `share` of its tables widened; and how many were."""
    names = db["column_names_original"]
    by_table: dict[int, list[int]] = {}
    for index, (table, _) in enumerate(names):
        if table >= 0:
            by_table.setdefault(table, []).append(index)
    order: list[tuple[int, Any, Any, str]] = [(-1, names[0], db["column_names"][0], "text")]
    new_index = {0: 0}
    widened = 0
    for table in range(len(db["table_names_original"])):
        rng = random.Random(derive_seed(seed, "widen", db["db_id"], table))
        own = by_table.get(table, [])
        columns: list[int | str] = list(own)
        internal = db["table_names_original"][table].lower().startswith("sqlite_")
        if own and not internal and rng.random() < share:
            taken = {names[i][1].lower() for i in own}
            count = max(0, rng.randint(*width) - len(own))
            units: list[list[int | str]] = [[i] for i in own[1:]]
            if pivoted:
                units += _pivoted(rng, taken, count)
            else:
                filler = [f for f in FILLER if f not in taken]
                units += [[f] for f in rng.sample(filler, min(count, len(filler)))]
            rng.shuffle(units)
            columns = [own[0], *(c for unit in units for c in unit)]
            widened += 1
        for column in columns:
            if isinstance(column, int):
                new_index[column] = len(order)
                order.append(
                    (table, names[column], db["column_names"][column], db["column_types"][column])
                )
            else:
                kind = "text" if column in TEXT_AUDIT else "number"
                order.append((table, [table, column], [table, column.replace("_", " ")], kind))
    out = dict(db)
    out["column_names_original"] = [o[1] for o in order]
    out["column_names"] = [o[2] for o in order]
    out["column_types"] = [o[3] for o in order]
    out["primary_keys"] = [_remap(k, new_index) for k in db["primary_keys"]]
    out["foreign_keys"] = [[new_index[a], new_index[b]] for a, b in db["foreign_keys"]]
    return out, widened


def _pivoted(rng: random.Random, taken: set[str], count: int) -> list[list[int | str]]:
    """The audit columns one by one, then whole period families until `count` columns."""
    units: list[list[int | str]] = [[a] for a in AUDIT if a not in taken]
    families = [[f"{p}{i}_{s}" for i in range(1, n + 1)] for p, n in PIVOTS for s in WIDE_STEMS]
    rng.shuffle(families)
    total = len(units)
    for family in families:
        if total >= count:
            break
        units.append([c for c in family if c not in taken])
        total += len(units[-1])
    return units


def add_filler(path: Path, before: dict[str, Any], after: dict[str, Any]) -> None:
    """Add the columns `after` has and `before` lacks to the SQLite file at `path`, filled."""
    own = {(t, name.lower()) for t, name in before["column_names_original"]}
    with closing(sqlite3.connect(path)) as conn:
        present = {
            name.lower()
            for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        for index, table in enumerate(after["table_names_original"]):
            if table.lower() not in present:
                continue
            added = [
                (name, kind)
                for (t, name), kind in zip(
                    after["column_names_original"], after["column_types"], strict=True
                )
                if t == index and (t, name.lower()) not in own
            ]
            quoted = quote_identifier(table)
            for name, kind in added:
                sql_type = "TEXT" if kind == "text" else "INTEGER"
                conn.execute(f"ALTER TABLE {quoted} ADD COLUMN {quote_identifier(name)} {sql_type}")
            if added:
                values = ", ".join(
                    f"{quote_identifier(name)} = "
                    + ("'v' || (rowid % 7)" if kind == "text" else f"(rowid * {31 + i}) % 997")
                    for i, (name, kind) in enumerate(added)
                )
                conn.execute(f"UPDATE {quoted} SET {values}")
        conn.commit()


def _remap(key: int | list[int], new_index: dict[int, int]) -> int | list[int]:
    return [new_index[k] for k in key] if isinstance(key, list) else new_index[key]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pool", type=Path, help="a Spider-layout folder: tables.json, database/")
    parser.add_argument("out", type=Path, help="the folder to write (the same layout)")
    parser.add_argument("--width", type=int, nargs=2, default=(100, 300), metavar=("LOW", "HIGH"))
    parser.add_argument("--share", type=float, default=1.0, help="share of tables widened")
    parser.add_argument("--filler", choices=("scattered", "pivoted"), default="scattered")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not 0 < args.width[0] <= args.width[1] or not 0 <= args.share <= 1:
        print("widen_tables: error: --width needs 0 < LOW <= HIGH, --share 0..1", file=sys.stderr)
        return 2
    try:
        pool = json.loads((args.pool / "tables.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"widen_tables: error: cannot read {args.pool}/tables.json: {exc}", file=sys.stderr)
        return 2
    out, widened, tables, files = [], 0, 0, 0
    for db in pool:
        wide, count = widen(db, tuple(args.width), args.share, args.seed, args.filler == "pivoted")
        out.append(wide)
        widened += count
        tables += len(db["table_names_original"])
        source = args.pool / "database" / db["db_id"] / f"{db['db_id']}.sqlite"
        if source.is_file():
            target = args.out / "database" / db["db_id"] / source.name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
            add_filler(target, db, wide)
            files += 1
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "tables.json").write_text(json.dumps(out), encoding="utf-8")
    summary = {"databases": len(out), "tables": tables, "widened": widened, "sqlite": files}
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
