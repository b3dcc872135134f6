"""What DoG's trie and G_q cost around hub entities of the whole MetaQA KB.

Run from the repository root:

    .venv/bin/python benchmarks/hub_trie.py [--model smollm2-135m] [--questions 30] [--cap 200]

For the topic entity of each question of the whole-KB dev set (first
--questions of datasets/metaqa_full_kb), one DoG step that lands on the
topic's highest-degree neighbour (a genre, a year, a prolific actor) grows
G_q by that hub.  Printed, per G_q as the paper defines it over the whole
graph, per G_q capped per entity (`kgqa_core.graph.hub_caps`, --cap), and per
G_q as DoG builds it here (inside the prompt context of
``max_prompt_triplets`` = 120): triplets, readings (both directions), trie
nodes and trie build milliseconds (cold token cache, then warm), median
and maximum over the questions.  Only the tokenizer runs; no decoding.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kgqa_core.decoding.query_subgraph import QueryCentricSubgraph  # noqa: E402
from kgqa_core.decoding.readings import readings  # noqa: E402
from kgqa_core.decoding.triplet_trie import TripletTokenCache, TripletTrie  # noqa: E402
from kgqa_core.graph.hub_caps import capped_neighbours, relation_relevance  # noqa: E402
from kgqa_core.graph.loaders import load_graph  # noqa: E402
from kgqa_core.graph.pruning import prune_to_budget  # noqa: E402
from kgqa_core.models import load_model  # noqa: E402

DATA = ROOT / "datasets" / "metaqa_full_kb" / "metaqa_dev_full_kb_90.jsonl"


def trie_cost(triplets, tokenizer) -> tuple[int, int, float, float]:
    """(readings, trie nodes, cold ms, warm ms) for a trie over both readings of `triplets`."""
    reads = readings(triplets, True)
    cache = TripletTokenCache(tokenizer)
    t0 = time.perf_counter()
    trie = TripletTrie.build(reads, opener="<", cache=cache)
    cold = (time.perf_counter() - t0) * 1000
    t0 = time.perf_counter()
    TripletTrie.build(reads, opener="<", cache=cache)
    warm = (time.perf_counter() - t0) * 1000
    return len(reads), trie.n_nodes, cold, warm


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--questions", type=int, default=30)
    ap.add_argument("--cap", type=int, default=200)
    args = ap.parse_args(argv)
    questions = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    questions = questions[:: max(1, len(questions) // args.questions)][: args.questions]
    t0 = time.perf_counter()
    graph = load_graph(DATA.parent / questions[0]["graph_file"])
    print(f"whole KB: {len(graph)} triplets, loaded in {time.perf_counter() - t0:.1f} s")
    tokenizer = load_model(args.model).tokenizer
    rows: dict[str, list[tuple[int, int, int, float, float]]] = {"whole graph": [], f"cap {args.cap}": [],
                                                                  "prompt context (DoG here)": []}
    for q in questions:
        topic = q["topic_entities"][0]
        hub = max((t.other(topic) for t in graph.neighbours(topic)), key=graph.degree)
        sub = QueryCentricSubgraph(graph, [topic])
        sub.expand(next(t for t in graph.neighbours(topic) if t.other(topic) == hub))
        full = sub.triplets()
        rel = relation_relevance(q["question"], sorted({t.relation for t in full}))
        capped: dict[int, object] = {}
        for ent in sub.visited:
            for t in capped_neighbours(graph, ent, args.cap, rel)[0]:
                capped[t.id] = t
        pruned = prune_to_budget(graph, q["question"], [topic], max_triplets=120)
        context = graph.subgraph(pruned.triplet_ids)
        ctx_sub = QueryCentricSubgraph(context, [topic])
        if context.has_entity(hub):
            ctx_sub.expand(next(t for t in context.neighbours(topic) if t.other(topic) == hub))
        for name, trips in (("whole graph", full), (f"cap {args.cap}", list(capped.values())),
                            ("prompt context (DoG here)", ctx_sub.triplets())):
            rows[name].append((len(trips), *trie_cost(trips, tokenizer)))
    print(f"{len(questions)} questions; G_q after one step onto the topic's highest-degree neighbour")
    print("| G_q | triplets p50 / max | readings p50 / max | trie nodes p50 / max | build ms cold p50 / max "
          "| build ms warm p50 / max |")
    print("|---|---|---|---|---|---|")
    for name, vals in rows.items():
        cols = list(zip(*vals))
        cells = " | ".join(
            f"{statistics.median(c):.0f} / {max(c):.0f}" if i < 3 else f"{statistics.median(c):.1f} / {max(c):.1f}"
            for i, c in enumerate(cols)
        )
        print(f"| {name} | {cells} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
