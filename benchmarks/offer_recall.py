"""Is the gold walk among the walks the question reader offers the model?  (No reading model call.)

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/offer_recall.py [--model qwen2.5-coder-1.5b] [--show] \\
        datasets/multidomain/dbpedia_dev.jsonl datasets/madeup/software_dev.jsonl ...

For every question naming one entity, the `paths` reader's offer (`ModelPathReader.offer`: the lexicon's
shortlist and the best-aligned walks) is built as DoG builds it, and the gold walk (its relations in order,
directions aside) is looked for in it.  The gold walk is the dataset's gold chain's walk (`miss_kinds.gold_walk`);
a dataset without gold chains (MetaQA's whole-KB questions) gets the walk of the question's hop count whose ends
are most like its answers (Jaccard at least 0.5), or none.  With ``--model`` the relation names the embedder cannot
read are described as DoG's defaults describe them (`drafting.describe_relations`, from the saved descriptions when
there are any); without one they are read by their names.  Printed per dataset and type: questions, those whose gold
walk the graph holds within the reader's three hops, and those whose gold walk is offered; ``--show`` lists each
question whose gold walk exists and is not offered.  Why: `miss_kinds.py` sorts a run's misses after the fact; this
says, before any run, how often the model is even shown the walk it should choose.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from kgqa_core.eval.dataset import load_dataset  # noqa: E402
from kgqa_core.graph.embeddings import load_embedder  # noqa: E402
from kgqa_core.reading.drafting import describe_relations  # noqa: E402
from kgqa_core.reading.paths import relation_paths  # noqa: E402
from kgqa_core.reading.readers import ModelPathReader  # noqa: E402
from miss_kinds import gold_walk, walk_relations  # noqa: E402
from reading import walk_plan  # noqa: E402


def answers_walk(graph, plans, answers: set[str], hops: int) -> tuple[str, ...] | None:
    """The relations of the walk of `hops` hops whose ends are most like `answers` (Jaccard >= 0.5), or None."""
    best, walk = 0.0, None
    for p in plans:
        if len(p.hops) != hops:
            continue
        ends = walk_plan(graph, p)
        score = len(ends & answers) / max(1, len(ends | answers))
        if score > best:
            best, walk = score, walk_relations(p.text)
    return walk if best >= 0.5 else None


def offer_recall(path: Path, model=None, show: bool = False) -> Counter:
    """Counts per (dataset, type, what): ``n``, ``exists`` (the gold walk within three hops), ``offered``."""
    out: Counter = Counter()
    embedder = load_embedder()
    for q in load_dataset(path):
        if len(q.topic_entities) != 1:
            continue
        graph, topic = q.graph(), q.topic_entities[0]
        plans = relation_paths(graph, [topic], 3)
        hops = int(q.type[0]) if q.type[:1].isdigit() else 0
        gold = gold_walk(topic, q.gold_chain) if q.gold_chain else answers_walk(graph, plans, set(q.answers), hops)
        key = (path.stem, q.type)
        out[key + ("n",)] += 1
        if not gold or not any(walk_relations(p.text) == gold for p in plans):
            continue
        out[key + ("exists",)] += 1
        vocabulary = describe_relations(model, graph, plans, None, embedder, other_languages=True).vocabulary \
            if model is not None else None
        offer = ModelPathReader(model, vocabulary, embedder).offer(q.question, graph, [topic])
        if gold in [walk_relations(offer.plans[i].text) for i in offer.indices]:
            out[key + ("offered",)] += 1
        elif show:
            print(f"not offered: {q.id} {q.question} ({' -> '.join(gold)})", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("datasets", nargs="+", type=Path)
    ap.add_argument("--model", default=None, help="describe the names the embedder cannot read with this model")
    ap.add_argument("--show", action="store_true", help="list each gold walk that exists and is not offered")
    args = ap.parse_args(argv)
    model = None
    if args.model:
        from kgqa_core.models import load_model

        model = load_model(args.model)
    counts: Counter = Counter()
    for path in args.datasets:
        counts.update(offer_recall(path, model, args.show))
    print("| dataset | type | questions | gold walk within 3 hops | offered |")
    print("|---|---|---|---|---|")
    for key in sorted({k[:2] for k in counts}):
        print(f"| {key[0]} | {key[1]} | {counts[key + ('n',)]} | {counts[key + ('exists',)]} | "
              f"{counts[key + ('offered',)]} |")
    exists = sum(v for k, v in counts.items() if k[2] == "exists")
    offered = sum(v for k, v in counts.items() if k[2] == "offered")
    print(f"all: the gold walk offered for {offered} of the {exists} questions whose gold walk the graph holds")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
