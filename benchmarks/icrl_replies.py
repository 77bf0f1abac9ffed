"""The local model's ICRL replies, read back from the cache `benchmarks/icrl_local.sh` fills:
how many were JSON pairs whose SQL validates on one of the pool's databases, how many held no
JSON, and how long they were (docs/BENCHMARKS.md, decision log: ICRL with a local model).

    .venv/bin/python benchmarks/icrl_replies.py [OUT]     # OUT of icrl_local.sh
"""

import collections
import json
import sqlite3
import sys
from pathlib import Path

from indexer.validate import validate_sql
from providers.structured import extract_json as parse_json
from schemagraph import load_catalog

OUT = Path(sys.argv[1] if len(sys.argv) > 1 else ".schemarag/icrl")
cat = load_catalog([f"spider:{OUT}/pool"])
c = sqlite3.connect(OUT / "cache.sqlite")
kinds = collections.Counter()
out_tokens = collections.defaultdict(list)
for (value,) in c.execute("select value from completions"):
    v = json.loads(value)
    try:
        data = parse_json(v["text"])
    except Exception:
        data = None
    items = data if isinstance(data, list) else [data]
    items = [i for i in items if isinstance(i, dict) and i.get("sql")]
    if not items:  # prose: the feedback the model wrote
        kinds["feedback (prose)"] += 1
        out_tokens["feedback"].append(v["usage"]["output_tokens"])
        continue
    out_tokens["synthesis"].append(v["usage"]["output_tokens"])
    ok = any(validate_sql(db, item["sql"]).ok for item in items for db in cat)
    kinds["synthesis: SQL valid on the database" if ok else "synthesis: no valid SQL"] += 1
print(dict(kinds))
for k, v in out_tokens.items():
    print(k, len(v), "replies, output tokens median", sorted(v)[len(v) // 2], "max", max(v))
