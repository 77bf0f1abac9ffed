import json,re,collections
T=json.load(open('/work/shared/data/spider2-lite/tables.json'))
Q=json.load(open('/work/shared/data/spider2-lite/questions_dev.json'))
idx=collections.defaultdict(set)
for e in T:
    for t in e['table_names_original']:
        for part in [t]+t.split('__'): idx[part.lower()].add(e['db_id'])
    for ti,c in e['column_names_original']:
        if ti>=0: idx[c.lower()].add(e['db_id'])
n=0;hit=0;amb=collections.Counter()
for q in Q:
    toks=set(re.findall(r'[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+',q['question']))
    toks|=set(t for t in re.findall(r'[`"\']([A-Za-z_][A-Za-z0-9_.]*)[`"\']',q['question']))
    found={t:idx.get(t.lower(),set()) for t in toks}
    found={t:s for t,s in found.items() if s}
    if found:
        n+=1
        g=q['db_id']
        ok=any(g in s for s in found.values())
        hit+=ok
        print(g, ok, {t:len(s) for t,s in found.items()})
print(n,hit,len(Q))
d=json.load(open('/work/exp/cur.json'))
rk={q['question']:q['rankings']['schemarag']['databases'] for q in d['per_question']}
from collections import Counter
c=Counter()
for q in Q:
    toks=set(re.findall(r'[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+',q['question']))|set(re.findall(r'`([A-Za-z_][A-Za-z0-9_.]*)`',q['question']))
    found={t:idx.get(t.lower(),set()) for t in toks}; found={t:s for t,s in found.items() if s}
    if not found: continue
    r=rk[q['question']]; g=q['db_id']
    ok = r[0]==g
    inany=any(g in s for s in found.values())
    c[(ok,inany)]+=1
    if not ok and inany: print(g, r[:3], {t:sorted(s)[:4] for t,s in found.items()})
print(c)
