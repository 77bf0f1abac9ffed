"""Write a generated enterprise-like estate (`evaluation.estates`) in the Spider layout.

    .venv/bin/python benchmarks/make_estate.py 1000 /tmp/estate-1000 [--seed 0] [--sharded 0.1]
    .venv/bin/schemarag index build spider:/tmp/estate-1000 spider:../shared/data/spider --store ...

Prints what was written (databases, tables, columns, wide tables, families, tenant groups,
staging pairs) as JSON. Every knob of `EstateSpec` is an option.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import fields
from pathlib import Path

from evaluation.estates import EstateSpec, generate_estate
from schemagraph.errors import SourceError

REPO = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("databases", type=int)
    parser.add_argument("out", type=Path)
    defaults = EstateSpec(1)
    for knob in fields(EstateSpec):
        if knob.name == "databases":
            continue
        value = getattr(defaults, knob.name)
        option = "--" + knob.name.replace("_", "-")
        if isinstance(value, tuple):
            parser.add_argument(option, type=int, nargs=2, default=value, metavar=("LOW", "HIGH"))
        else:
            parser.add_argument(option, type=type(value), default=value)
    args = parser.parse_args()
    knobs = {k: tuple(v) if isinstance(v, list) else v for k, v in vars(args).items()}
    out = knobs.pop("out")
    try:
        summary = generate_estate(EstateSpec(**knobs), out)
    except SourceError as exc:
        print(f"make_estate: error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(summary.as_dict(), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
