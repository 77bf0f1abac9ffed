#!/bin/bash
# ICRL with a local model against the template synthesizer, on 5 Spider dev databases
# (docs/BENCHMARKS.md, decision log). Needs ../shared/data/spider and a GGUF
# model (benchmarks/fetch_local_model.py). Replies are cached in OUT/cache.sqlite: a rerun
# costs no model call.
#
#     benchmarks/icrl_local.sh [MODEL.gguf] [OUT] [LABEL]     (LABEL: llm05, the knowledge base's name)
set -e
cd "$(dirname "$0")/.."
M=${1:-.schemarag/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf}
I=${2:-.schemarag/icrl}
L=${3:-llm05}
mkdir -p "$I"
DBS="concert_singer pets_1 employee_hire_evaluation flight_2 car_1"
.venv/bin/python - <<PY
import json, os
from pathlib import Path
dbs = "$DBS".split()
spider = Path("../shared/data/spider")
pool = Path("$I/pool"); (pool / "database").mkdir(parents=True, exist_ok=True)
tables = [t for t in json.loads((spider / "tables.json").read_text()) if t["db_id"] in dbs]
(pool / "tables.json").write_text(json.dumps(tables))
for db in dbs:
    link = pool / "database" / db
    if not link.exists():
        link.symlink_to((spider / "database" / db).resolve())
dev = [q for q in json.loads((spider / "dev.json").read_text()) if q["db_id"] in dbs]
Path("$I/dev5.json").write_text(json.dumps(dev))
print(len(tables), "databases,", len(dev), "dev questions")
PY
SET="--chains 1 --iterations 2 --max-per-database 2 --walks 1"
echo "$(date +%T) template build" >> $I/log
SCHEMARAG_CACHE=$I/cache.sqlite .venv/bin/schemarag index build spider:$I/pool --store $I/kb-template $SET --report $I/kb-template.json > $I/kb-template.out 2>&1
echo "$(date +%T) llm build" >> $I/log
SCHEMARAG_CACHE=$I/cache.sqlite .venv/bin/schemarag index build spider:$I/pool --store $I/kb-$L $SET --synthesizer llamacpp:$M --feedback llamacpp:$M --report $I/kb-$L.json > $I/kb-$L.out 2>&1
for kb in template $L; do
  echo "$(date +%T) recall $kb" >> $I/log
  .venv/bin/schemarag bench recall --tables $I/pool/tables.json --questions $I/dev5.json --databases $I/pool/database --store $I/kb-$kb --json $I/recall-$kb.json --per-question > $I/recall-$kb.out 2>&1 || echo "recall $kb failed" >> $I/log
done
echo "$(date +%T) done" >> $I/log
