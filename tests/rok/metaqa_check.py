"""A few MetaQA dev questions through RoK with a local model (a sanity check, not a benchmark; not collected by pytest).

Usage: PYTHONPATH=. .venv/bin/python tests/rok/metaqa_check.py MODEL ONE_HOP_LINES TWO_HOP_LINES  (e.g. qwen2.5-coder-1.5b 0 0)
"""
import gzip, json, re, sys, time
from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.methods.base import MethodRequest, run_method
from kgqa_core.models import load_model

model_name = sys.argv[1]
picks = [("1hop", int(i)) for i in sys.argv[2].split(",")] + [("2hop", int(i)) for i in sys.argv[3].split(",")]
trips = [l.rstrip("\n").split("\t") for l in gzip.open("/work/shared/data/metaqa/kb.tsv.gz", "rt")]
g = KnowledgeGraph.from_triplets(trips, name="metaqa")
m = load_model(model_name)
rows = []
for split, idx in picks:
    lines = gzip.open(f"/work/shared/data/metaqa/qa_dev_{split}.txt.gz", "rt").read().splitlines()
    q, gold = lines[idx].split("\t")
    gold = gold.split("|")
    topic = [re.search(r"\[(.+?)\]", q).group(1)]
    t = time.time()
    tr = run_method("rok", MethodRequest(graph=g, question=q, model=m, topic_entities=topic))
    ans = [a.entity or a.text for a in tr.answers]
    hit = bool(ans) and ans[0] in gold
    ev = set()
    for s in tr.steps:
        if s.kind == "rok.branches":
            ev = g.entities_of(s.subgraph_after)
    recall = len(set(gold) & ev) / len(gold)
    row = dict(split=split, idx=idx, q=q, gold=gold, answers=ans, hit1=hit, evidence_recall=round(recall, 2),
               keys=tr.extra["key_entities"], calls=tr.model_calls, sec=round(time.time() - t, 1),
               cot=tr.steps[0].model_text[:300], filt=tr.steps[4].model_text[:200], raw=tr.raw_output,
               n_branches=len(tr.steps[4].candidates), kept=len(tr.extra["branches_kept"]), notes=tr.notes)
    rows.append(row)
    print(json.dumps(row, ensure_ascii=False), flush=True)
    open(f"/tmp/rok_metaqa_{split}_{idx}.json", "w").write(tr.to_json())
print("hits@1", sum(r["hit1"] for r in rows), "/", len(rows))
