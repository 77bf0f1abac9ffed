import json,sys
from pathlib import Path
from evaluation import load_files
from schemagraph.containment import find_relations, table_key
from schemagraph.model import fold
ds=load_files(Path('/work/shared/data/spider2-lite/tables.json'),Path('/work/shared/data/spider2-lite/questions_dev.json'))
rel=find_relations(ds.catalog)
keys={fold(db.id):{table_key(t.name) for t in db.tables} for db in ds.catalog}
contains={}
for g in rel.containment:
  for c in g.copies: contains.setdefault(fold(c),set()).add(fold(g.base))
twin={}
for g in rel.twins:
  for m in g.members: twin[fold(m)]=set(fold(x) for x in g.members)
d=json.load(open(sys.argv[1]))
def holds(db,q):
  return fold(db)==fold(q['db_id']) or all(table_key(t.split('.',1)[-1]) in keys[fold(db)] for t in q['gold_tables'])
base=new=hb=hn=0;changed=[]
for q in d['per_question']:
  r=q['rankings']['schemarag']; dbs=r['databases']; best=fold(dbs[0])
  chosen=[]
  for t in r['tables']:
    db,tab=t.split('.',1)
    if fold(db)!=best: break
    chosen.append(table_key(tab))
  top=dbs[0]
  for other in dbs[1:5]:
    o=fold(other)
    if o in contains.get(best,()) and all(c in keys[o] for c in chosen):
      top=other; break
  base+=fold(dbs[0])==fold(q['db_id']); new+=fold(top)==fold(q['db_id'])
  hb+=holds(dbs[0],q); hn+=holds(top,q)
  if top!=dbs[0]: changed.append((q['db_id'],dbs[0],top))
n=len(d['per_question'])
print(f"strict {100*base/n:.1f} -> {100*new/n:.1f}; holds {100*hb/n:.1f} -> {100*hn/n:.1f}; changed {len(changed)}")
for c in changed: print(c)
