"""One hop past the reader's horizon (`reading/horizon.py`), replayed on saved DoG runs: what it does now.

    .venv/bin/python benchmarks/horizon_replay.py runs/eval/base/dbpedia/main runs/eval/base2/wikidata/main ...

Every DoG trace of the run folders (``DOMAIN/RUN`` under an eval ``--out``: the domain is the folder's parent)
whose question names one entity and whose reading's best walk stopped at the reader's 3 hops is read again by
`horizon.horizon_hop` with today's code: the walk from the trace, the relation descriptions the run's reading
was told (`Trace.extra.described_relations`), the reader's settings of DoG's defaults.  The trace itself is
the "before": its reading was made by the code of its run, so a question printed with a hop more is one the
change can alter.  Printed per question: the hop added and whether walking the 3-hop and the 4-hop plan reaches
a gold answer (`paths.plan_ends`); then the counts.  No model is loaded: the horizon reads words and the graph.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kgqa_core.datasets.multidomain import DEV_DOMAINS  # noqa: E402
from kgqa_core.eval.dataset import load_dataset  # noqa: E402
from kgqa_core.graph.embeddings import load_embedder  # noqa: E402
from kgqa_core.graph.readings import REVERSE_SUFFIX  # noqa: E402
from kgqa_core.methods.dog import DogParams  # noqa: E402
from kgqa_core.reading.guidance import reader_spec  # noqa: E402
from kgqa_core.reading.horizon import horizon_hop  # noqa: E402
from kgqa_core.reading.paths import plan_ends  # noqa: E402
from kgqa_core.reading.readers import READER_OPTIONS, ModelPathReader  # noqa: E402
from kgqa_core.reading.reading import MAX_HOPS, PlanHop, RelationPlan  # noqa: E402
from kgqa_core.reading.vocabulary import RelationVocabulary  # noqa: E402


def plan_of(text: str, topic: str) -> RelationPlan | None:
    """The trace's plan text (``X -> r1 -> r2 (reverse)``) as a plan from `topic` (None if it does not start there)."""
    if not text.startswith(topic + " -> "):
        return None
    hops = tuple(PlanHop(h[: -len(REVERSE_SUFFIX)], False) if h.endswith(REVERSE_SUFFIX) else PlanHop(h)
                 for h in text[len(topic) + 4:].split(" -> "))
    return RelationPlan(topic, hops)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folders", nargs="+", type=Path, help="run folders (DOMAIN/RUN of an eval --out)")
    args = ap.parse_args(argv)
    spec = reader_spec(DogParams())
    options = dict(kv.split("=") for kv in spec.partition(":")[2].split(",") if kv)
    reader = ModelPathReader(None, None, load_embedder(), **{k: READER_OPTIONS[k](v) for k, v in options.items()})
    counts = {"read": 0, "added": 0, "gained": 0, "lost": 0}
    per_domain: dict[str, int] = {}
    for folder in args.folders:
        domain = folder.resolve().parent.name
        dataset, graph = load_dataset(ROOT / DEV_DOMAINS[domain]), None
        for path in sorted((folder / "traces" / "dog").glob("*.json")):
            trace = json.loads(path.read_text(encoding="utf-8"))
            plans = (trace.get("extra", {}).get("reading") or {}).get("plans") or []
            topics = trace.get("topic_entities") or []
            plan = plan_of(plans[0]["text"], topics[0]) if plans and len(topics) == 1 else None
            if plan is None or len(plan.hops) != MAX_HOPS:
                continue
            question = dataset.by_id(path.stem)
            graph = graph or question.graph()
            told = ((trace["extra"].get("described_relations") or {}).get("entries") or {})
            past = horizon_hop(trace["question"], topics, graph, plan, RelationVocabulary(dict(told)) or None,
                               reader.lexicon.embedder, reader.phrase_gain, spread=reader.spread)
            counts["read"] += 1
            per_domain[domain] = per_domain.get(domain, 0) + 1
            if past is None:
                continue
            gold = set(question.answers)
            before, after = bool(set(plan_ends(graph, plan)) & gold), bool(set(plan_ends(graph, past.plan)) & gold)
            counts["added"] += 1
            counts["gained"] += after and not before
            counts["lost"] += before and not after
            print(f"{domain} {path.stem}: +{past.plan.hops[-1].label} for '{past.word}' ({past.closeness:.2f}); "
                  f"3 hops {'reach' if before else 'miss'} gold, 4 hops {'reach' if after else 'miss'} | "
                  f"{trace['question']}")
    print("readings stopped at 3 hops: " + ", ".join(f"{d} {n}" for d, n in per_domain.items()))
    print(f"{counts['read']} readings stopped at {MAX_HOPS} hops; a hop added to {counts['added']}: "
          f"{counts['gained']} now reach gold, {counts['lost']} no longer do")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
