"""How many graph triplets the prompt needs: sweep `max_prompt_triplets` for DoG and Direct.

Reading the prompt dominates a question's time once decoding is fast (issue
16): every graph triplet in the prompt is about a dozen tokens to read.  This
script runs the same questions at several budgets (default 20, 40, 80, 120)
and prints Hits@1, F1, seconds per question and prompt tokens per budget, so
the default can be chosen from measurements.

A question whose pruned context is the same at two budgets (a 17-triplet graph
is shown whole at 20 and at 120) gets the same prompt, the same G_q and, with
greedy decoding, the same run: it is run once, at the smallest such budget,
and its record is counted at every budget it serves (the table says how many
records each budget ran itself).  The runs themselves are ordinary `run_eval`
runs, one output folder per budget, resumable and shardable::

    OMP_NUM_THREADS=1 python benchmarks/prompt_budget.py --shard 1/2 &
    OMP_NUM_THREADS=1 python benchmarks/prompt_budget.py --shard 2/2 &
    wait; python benchmarks/prompt_budget.py          # runs what is left, prints the table
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kgqa_core.decoding.context import topic_entities  # noqa: E402
from kgqa_core.eval.dataset import load_dataset  # noqa: E402
from kgqa_core.eval.runner import load_results, run_eval, summarize_records  # noqa: E402
from kgqa_core.graph.pruning import prune_to_budget  # noqa: E402


def context_key(question: Any, budget: int) -> tuple[int, ...]:
    """The triplet ids the prompt shows at `budget`, in prompt order (what decides the prompt)."""
    graph = question.graph()
    request = SimpleNamespace(graph=graph, question=question.question, topic_entities=list(question.topic_entities))
    try:
        topics = topic_entities(request, [])
    except ValueError:  # no topic entity: the method fails the same way at every budget
        return ()
    return tuple(prune_to_budget(graph, question.question, topics, max_triplets=budget).triplet_ids)


def canonical_budgets(questions: list[Any], budgets: list[int]) -> dict[tuple[str, int], int]:
    """For each (question, budget): the smallest budget giving the same prompt context."""
    out: dict[tuple[str, int], int] = {}
    for q in questions:
        seen: dict[tuple[int, ...], int] = {}
        for b in budgets:
            key = context_key(q, b)
            out[(q.id, b)] = seen.setdefault(key, b)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", default=str(ROOT / "datasets/metaqa_sample/metaqa_dev_50.jsonl"))
    ap.add_argument("--methods", default="dog,direct")
    ap.add_argument("--budgets", default="20,40,80,120")
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--backend", default=None)
    ap.add_argument("--param", action="append", default=[], metavar="KEY=VALUE", help="extra method parameter")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--shard", default=None, metavar="K/N")
    ap.add_argument("--out", default=str(ROOT / "runs/bench/prompt-budget"))
    args = ap.parse_args()

    methods = [m for m in args.methods.split(",") if m]
    budgets = sorted({int(b) for b in args.budgets.split(",")})
    extra = dict(p.split("=", 1) for p in args.param)
    shard = tuple(int(x) for x in args.shard.split("/")) if args.shard else None
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    dataset = load_dataset(args.dataset)
    questions = dataset.questions[: args.limit] if args.limit else list(dataset.questions)
    canon = canonical_budgets(questions, budgets)
    raw = {json.loads(line)["id"]: line for line in Path(args.dataset).read_text(encoding="utf-8").splitlines() if line.strip()}

    model = None
    for b in budgets:
        own = [q for q in questions if canon[(q.id, b)] == b]
        subset = out / f"questions-{b}.jsonl"
        subset.write_text("".join(raw[q.id].rstrip("\n") + "\n" for q in own), encoding="utf-8")
        done = {(r["id"], r["method"]) for r in load_results(out / f"b{b}")}
        if any((q.id, m) not in done for q in own for m in methods) and own:
            if model is None:
                from kgqa_core.models import load_model

                model = load_model(args.model, backend=args.backend)
            run_eval(subset, methods, args.model, out / f"b{b}", params={**extra, "max_prompt_triplets": b},
                     progress=False, shard=shard, model=model, n_boot=200)
    if shard is not None:
        print(f"shard {shard[0]}/{shard[1]} done; run without --shard for the table")
        return 0

    records: dict[int, dict[tuple[str, str], dict[str, Any]]] = {
        b: {(r["id"], r["method"]): r for r in load_results(out / f"b{b}")} for b in budgets
    }
    print(f"{len(questions)} questions of {args.dataset}; model {args.model}; extra parameters {extra or 'none'}")
    print("| method | budget | runs (own / reused) | Hits@1 | F1 | s/question mean | p50 | prompt tokens mean |")
    print("|---|---|---|---|---|---|---|---|")
    for m in methods:
        for b in budgets:
            recs, own = [], 0
            for q in questions:
                c = canon[(q.id, b)]
                r = records[c].get((q.id, m))
                if r is None:
                    continue
                recs.append(dict(r, type=q.type))
                own += c == b
            if not recs:
                continue
            overall, _ = summarize_records(recs, [m], n_boot=200)
            g = overall[0]
            secs = [r["metrics"].get("wall_seconds") or r["metrics"].get("seconds") or 0.0 for r in recs]
            ptoks = []
            for r in recs:
                try:
                    trace = json.loads((out / f"b{canon[(r['id'], b)]}" / r["trace"]).read_text(encoding="utf-8"))
                    ptoks.append(trace.get("extra", {}).get("prompt_tokens") or trace.get("tokens_in") or 0)
                except OSError:
                    pass
            print(f"| {m} | {b} | {len(recs)} ({own} / {len(recs) - own}) | {g.hits1.value:.3f} | {g.f1.value:.3f} | "
                  f"{statistics.mean(secs):.1f} | {statistics.median(secs):.1f} | "
                  f"{statistics.mean(ptoks) if ptoks else 0:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
