"""When does the reader walk one hop past its horizon?  `reading.horizon.horizon_hop` on the dev questions' walks.

    .venv/bin/python benchmarks/horizon.py datasets/multidomain/*.jsonl datasets/metaqa_full_kb/metaqa_dev_full_kb_90.jsonl

No language model: only the sentence embedder the readers use.  For each
question of 3 or more hops, the walk a reader would hand on at its horizon
(3 hops) is given, and whether `horizon_hop` adds a hop, and which, is
counted:

* a 3-hop question: its right 3-hop walk (the gold chain's relations, or,
  without one, of the 3-hop relation paths from the topic entity that reach
  a gold answer the one whose hops the question's words name best, as the
  readers weigh walks): any hop added is wrong (*added, wrongly*);
* a 4-hop question with a gold chain: its first three hops; the added hop
  should be the chain's fourth (*right*), else *wrong* or *none*.

Printed per dataset and type; ``--show`` prints each added hop with the word that named it.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kgqa_core.eval.dataset import load_dataset  # noqa: E402
from kgqa_core.graph.embeddings import load_embedder  # noqa: E402
from kgqa_core.reading.alignment import hop_alignment  # noqa: E402
from kgqa_core.reading.horizon import horizon_hop  # noqa: E402
from kgqa_core.reading.paths import plan_ends, relation_paths  # noqa: E402
from kgqa_core.reading.reading import PlanHop, RelationPlan  # noqa: E402


def chain_plan(topic: str, chain: list) -> RelationPlan:
    """The gold chain as a relation plan from `topic` (each triplet read forwards when it leaves the walk's end)."""
    at, hops = topic, []
    for h, r, t in chain:
        forward = h == at
        hops.append(PlanHop(r, forward))
        at = t if forward else h
    return RelationPlan(topic, tuple(hops))


def right_walks(q, graph, embedder) -> list[RelationPlan]:
    """The 3-hop walks that answer `q`: its gold chain's, or those from its topic that reach a gold answer."""
    chain = q.gold_chain
    topic = q.topic_entities[0]
    if chain:
        return [chain_plan(topic, chain)]
    gold = {a.casefold() for a in q.answers}
    walks = [p for p in relation_paths(graph, [topic], max_hops=3) if len(p.hops) == 3
             and {e.casefold() for e in plan_ends(graph, p)} & gold]
    if len(walks) < 2:
        return walks
    # many walks reach a gold answer by chance: the one whose hops the question's words name best is the one a reader
    # hands on (the alignment the readers weigh walks by)
    aligned = hop_alignment(q.question, q.topic_entities, walks, None, embedder)
    return [walks[max(range(len(walks)), key=lambda i: aligned[i])]]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("datasets", nargs="+", type=Path)
    ap.add_argument("--show", action="store_true")
    args = ap.parse_args(argv)
    embedder = load_embedder()
    print("| dataset | type | questions | walks | added, wrongly | right | wrong | none |")
    print("|---|---|---|---|---|---|---|---|")
    for path in args.datasets:
        counts: dict[str, Counter] = {}
        for q in load_dataset(path).questions:
            kind = q.type
            if kind not in ("3hop", "4hop") or len(q.topic_entities) != 1:
                continue
            graph = q.graph()
            c = counts.setdefault(kind, Counter())
            c["questions"] += 1
            chain = q.gold_chain
            if kind == "4hop":
                if not chain or len(chain) != 4:
                    continue
                plan = chain_plan(q.topic_entities[0], chain)
                walks = [RelationPlan(plan.topic, plan.hops[:3])]
            else:
                walks = right_walks(q, graph, embedder)
            for walk in walks:
                c["walks"] += 1
                past = horizon_hop(q.question, q.topic_entities, graph, walk, None, embedder)
                if kind == "3hop":
                    c["added, wrongly"] += past is not None
                elif past is None:
                    c["none"] += 1
                else:
                    c["right" if past.plan.hops[-1] == plan.hops[-1] else "wrong"] += 1
                if past is not None and args.show:
                    print(f"    {q.question!r}: + {past.plan.hops[-1].label} ('{past.word}', {past.closeness:.2f})")
        for kind, c in sorted(counts.items()):
            print(f"| {path.stem} | {kind} | {c['questions']} | {c['walks']} | {c['added, wrongly']} | {c['right']} | "
                  f"{c['wrong']} | {c['none']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
