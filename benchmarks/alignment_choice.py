"""How often the hop alignment alone (no model) picks a walk that reaches gold, under variants of its pieces.

    OMP_NUM_THREADS=2 .venv/bin/python benchmarks/alignment_choice.py --per-type 10 \\
        datasets/multidomain/dbpedia_dev.jsonl datasets/multidomain/geography_dev.jsonl \\
        datasets/multidomain/wikidata_dev.jsonl datasets/metaqa_full_kb/metaqa_dev_full_kb_90.jsonl

For the first --per-type questions of each type of each dataset, every walk of up to 3 hops the graph holds
from the question's entity (`reading.paths.relation_paths`) is scored by `alignment.joint_alignment` alone,
for each variant: a (cover weight, threshold) grid, and the defaults without the pairs of words apart
(`alignment.APART_AT`), without the answer words (`alignment.ANSWER_WORDS`), or without both, and with the words
of the whole domain lowered (`reading_domain_words`, `alignment.spread_discount`; off by default); the best-scoring
walk is walked in the graph and counted when it reaches a gold answer.  It is the cheap first look at a change to the alignment: the reader
weighs the model's choice by it (`benchmarks/reading.py` measures that).  No model is loaded.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from kgqa_core.eval.dataset import load_dataset  # noqa: E402
from kgqa_core.graph.embeddings import load_embedder  # noqa: E402
from kgqa_core.reading import alignment  # noqa: E402
from kgqa_core.reading.paths import relation_paths  # noqa: E402
from reading import WITHOUT_PIECES, _norm, _set_alignment, walk_plan  # noqa: E402

GRID = [(0.0, alignment.COVER_AT)] + [(w, at) for w in (0.5, 1.0, 2.0) for at in (0.35, 0.45, 0.55)]
# (name, cover weight, module settings): the cover grid at the other defaults, then the defaults less one piece
VARIANTS = [(f"cover {w:g}, threshold {at:g}", w, {"COVER_AT": at}) for w, at in GRID] + [
    ("defaults", alignment.COVER_WEIGHT, {}),
    ("no words apart", alignment.COVER_WEIGHT, {"APART_AT": WITHOUT_PIECES["APART_AT"]}),
    ("no answer words", alignment.COVER_WEIGHT, {"ANSWER_WORDS": WITHOUT_PIECES["ANSWER_WORDS"]}),
    ("no answer nouns", alignment.COVER_WEIGHT, {"ANSWER_NOUNS": False}),
    ("answer nouns name no hop", alignment.COVER_WEIGHT, {"ANSWER_NOUN_NAMES": False}),
    ("answer nouns, every relation they are close to (not only where they stand out)", alignment.COVER_WEIGHT,
     {"NOUN_STANDS_OUT": 0.0}),
] + [(f"answer nouns standing out by {d:g}", alignment.COVER_WEIGHT, {"NOUN_STANDS_OUT": d})
     for d in (0.1, 0.15, 0.25)] + [
    ("neither", alignment.COVER_WEIGHT, WITHOUT_PIECES),
    ("copular questions' nouns (what are the films ...) as answer nouns (COPULAR_NOUNS on)", alignment.COVER_WEIGHT,
     {"COPULAR_NOUNS": True}),
    ("a noun before an entity's name (the movie Heat) names hops as any word (APPOSITIVES off)",
     alignment.COVER_WEIGHT, {"APPOSITIVES": False}),
    ("a noun before a participle and 'by' (the films written by X) names hops as any word (AGENT_NOUNS off)",
     alignment.COVER_WEIGHT, {"AGENT_NOUNS": False}),
    ("a noun before a relative clause or participle and an entity (states bordering X) names hops as any word "
     "(RELATIVE_NOUNS off)", alignment.COVER_WEIGHT, {"RELATIVE_NOUNS": False}),
    ("the answer's noun said again (what states border states that ...) names hops as any word (KIND_REPEATS off)",
     alignment.COVER_WEIGHT, {"KIND_REPEATS": False}),
] + [
    ("domain words (reading_domain_words)", alignment.COVER_WEIGHT, {"SPREAD_WEIGHT": alignment.SPREAD_ON}),
] + [(f"domain words {w:g}, floor {f:g}", alignment.COVER_WEIGHT, {"SPREAD_WEIGHT": w, "SPREAD_FLOOR": f})
     for w in (1.0, 2.0, 3.0) for f in (0.3, 0.35)] + [
    ("domain words, no paraphrase kept", alignment.COVER_WEIGHT,
     {"SPREAD_WEIGHT": alignment.SPREAD_ON, "SPREAD_KEEP": 9.0}),
    ("domain words, nothing stands out", alignment.COVER_WEIGHT,
     {"SPREAD_WEIGHT": alignment.SPREAD_ON, "SPREAD_STANDS_OUT": 9.0})] + [
    (f"hops in the question's order, {c:g} a pair out of it (ORDER_COST)", alignment.COVER_WEIGHT, {"ORDER_COST": c})
    for c in (0.0, 0.05, 0.1, 0.2, 0.4) if c != alignment.ORDER_COST] + [
    ("the answer's kind from its relation's name only (ENTITY_KIND_WEIGHT 0)", alignment.COVER_WEIGHT,
     {"ENTITY_KIND_WEIGHT": 0.0})] + [
    (f"the answer's kind from the entity reached, weight {w:g}, above {at:g}", alignment.COVER_WEIGHT,
     {"ENTITY_KIND_WEIGHT": w, "ENTITY_KIND_AT": at})
    for w in (0.5, 1.0, 2.0) for at in (0.4, 0.45, 0.5)
    if (w, at) != (alignment.ENTITY_KIND_WEIGHT, alignment.ENTITY_KIND_AT)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("datasets", nargs="+", type=Path)
    ap.add_argument("--per-type", type=int, default=10)
    ap.add_argument("--show", action="store_true", help="each question's best walk with the defaults and with neither piece")
    ap.add_argument("--against", default="neither", help="the variant --show compares the defaults with")
    ap.add_argument("--only", default="", help="only the variants whose name holds this text (and the defaults)")
    args = ap.parse_args(argv)
    variants = [v for v in VARIANTS if not args.only or args.only in v[0] or v[0] in ("defaults", args.against)]
    embedder = load_embedder()
    if embedder is None:
        print("the packaged sentence-embedding model is not installed: nothing to align with", file=sys.stderr)
        return 2
    hits: dict[str, dict] = {v[0]: defaultdict(int) for v in variants}
    n: dict[tuple[str, str], int] = defaultdict(int)
    graphs: dict = {}
    for path in args.datasets:
        ds = load_dataset(path)
        taken: dict[str, int] = defaultdict(int)
        for q in ds:
            taken[q.type] += 1
            if taken[q.type] > args.per_type:
                continue
            graph = graphs.setdefault(q.graph_file, q.graph())
            plans = relation_paths(graph, q.topic_entities, 3)
            if not plans:
                continue
            key = (ds.name, q.type)
            n[key] += 1
            gold = {_norm(a) for a in q.answers}
            reaches: dict[tuple, bool] = {}
            for name, weight, settings in variants:
                saved = _set_alignment(settings)
                try:
                    scores = alignment.joint_alignment(q.question, q.topic_entities, [[p] for p in plans],
                                                       embedder=embedder, cover=weight)
                finally:
                    _set_alignment(saved)
                if scores is None:
                    continue
                best = plans[max(range(len(plans)), key=lambda i: scores[i])]
                k = (best.topic, tuple(best.relations), tuple(h.forward for h in best.hops))
                if k not in reaches:
                    reaches[k] = bool(gold & {_norm(e) for e in walk_plan(graph, best)})
                hits[name][key] += reaches[k]
                if args.show and name in ("defaults", args.against):
                    print(f"{name}: {q.question!r} -> {best.text} ({'gold' if reaches[k] else 'not gold'})")
    keys = sorted(n)
    print("| variant | " + " | ".join(f"{d} {t}" for d, t in keys) + " | all |")
    print("|---" * (len(keys) + 2) + "|")
    for name, _, _ in variants:
        cells = [f"{hits[name][k]}/{n[k]}" for k in keys]
        print(f"| {name} | " + " | ".join(cells) + f" | {sum(hits[name].values())}/{sum(n.values())} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
