"""The multi-domain dev benchmark: DoG (workbench and paper presets), Direct, READS and RoK on every domain's whole graph.

Run from the repository root, one process per core (resumable; the same --out extends a run):

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/multidomain.py --per-type 3 --out runs/eval/multidomain --shard 1/2 &
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/multidomain.py --per-type 3 --out runs/eval/multidomain --shard 2/2
    .venv/bin/python benchmarks/multidomain.py --per-type 3 --out runs/eval/multidomain --report

Domains (datasets/multidomain, built by `python -m kgqa_core.datasets`; README there): DBpedia (MLPQ
dev, 2-3 hops), US geography (GeoQuery), Wikidata fact chains (MQuAKE), and MetaQA's whole KB.  Each
question is asked over its domain's whole graph.  Types up to 3 hops by default (the readers plan at most 3);
``--types 1hop,2hop,3hop,4hop`` adds the longer ones (Wikidata's, geography's one), ``--types 2i`` runs the
two-entity sets (questions naming two entities, generated on the geography and MetaQA graphs: ``geography-2i``,
``metaqa-2i``; the ``nomeet`` run is DoG without ``meet_topics``).
``dog`` runs with the workbench defaults, ``dog-paper`` with ``preset=paper`` (a second eval folder).
The report prints one table: per domain and method, n, Hits@1, F1, ill-triplet rate, p50 seconds,
and the medians of the prompt tokens the model read beyond its cached prefix and of the tokens it wrote
(from each trace's cost breakdown, `Trace.costs`), the per-domain rows first, then per hop.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kgqa_core.datasets.multidomain import DEV_DOMAINS, TWO_ENTITY_SETS  # noqa: E402

from kgqa_core.eval.dataset import load_dataset  # noqa: E402
from kgqa_core.eval.runner import load_results, run_eval  # noqa: E402
from kgqa_core.reading.vocabulary import RelationVocabulary  # noqa: E402

DOMAINS = {name: ROOT / path for name, path in (DEV_DOMAINS | TWO_ENTITY_SETS).items()}
TYPES = ["1hop", "2hop", "3hop"]
# the dev domains' types (4-hop: Wikidata's and geography's longer questions; 2i: the two-entity sets')
ALL_TYPES = TYPES + ["4hop", "2i"]
# "previous": DoG without this session's pieces (issue 32's terse examples, free-text cap and embedding pool;
# issue 29's skip_restatements), to show what they changed on the same questions in one run
PREVIOUS = {"prompt_examples": "paper", "free_text_cap": 0, "context_pool": 0, "skip_restatements": False}
# "unsure": DoG whose unsure readings narrow each step to their likely plans' relations (unsure_relations, an
# ablation of that switch against the defaults)
# "nomeet": DoG without ranking the answers by the question's other entities (meet_topics, an ablation)
# "list8": DoG whose unsure readings list the 8 likeliest walks, not all 12 (reading_listed, an ablation)
RUNS = {"main": (["dog", "direct", "reads", "rok"], {}), "paper": (["dog"], {"preset": "paper"}),
        "previous": (["dog"], PREVIOUS), "unsure": (["dog"], {"unsure_relations": 0.8}),
        "nomeet": (["dog"], {"meet_topics": False}), "list8": (["dog"], {"reading_listed": 8}),
        "drafted": (["dog"], {}), "kind": (["dog"], {"reading_answer_kind": 2.0}),
        "told": (["dog"], {"reading_every_relation": False}),
        "arrow": (["dog"], {"reading_one_arrow": False}),
        "pieces": (["dog"], {"describe_other_languages": False})}
# "pieces": DoG that describes only the relation names the sentence embedder knows in pieces, not those of another
# language it holds whole ('nord', 'ville': describe_other_languages off): the A/B for that default
# "arrow": DoG whose reading's first look writes a hop walked backwards with its own arrow, 'A <-r- B' (the reader
# option one_arrow off; on by default since measured): the A/B for that default
# "told": DoG whose reading's first look names only the relations it was told the meaning of (reading_every_relation
# off: the prompt before it), the A/B for that default
# "kind": DoG whose reading also weighs the answer's kind from the entity a walk reaches (reading_answer_kind=2;
# off by default): the A/B that decides that default
# "drafted": DoG with the vocabulary the model drafted for the domain's graph (``python -m kgqa_core vocabulary
# draft``), read from ``--vocabularies DIR`` as DIR/<domain>.txt (a domain without one is skipped)


def _shard(text: str | None) -> tuple[int, int] | None:
    if not text:
        return None
    k, n = (int(x) for x in text.split("/"))
    return k, n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="qwen2.5-coder-1.5b")
    ap.add_argument("--per-type", type=int, default=3)
    ap.add_argument("--domains", default=",".join(DOMAINS))
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--shard", default=None)
    ap.add_argument("--workers", type=int, default=1, help="worker processes per evaluation (eval --workers)")
    ap.add_argument("--runs", default=",".join(RUNS), help="which of the runs: " + ", ".join(RUNS))
    ap.add_argument("--methods", default="",
                    help="only these of each run's methods (e.g. dog: a change to DoG alone, the others' rows kept "
                         "from an earlier --out)")
    ap.add_argument("--types", default=",".join(TYPES),
                    help="question types to run (default up to 3 hops; e.g. 4hop for Wikidata's and geography's longer ones)")
    ap.add_argument("--vocabularies", type=Path, default=None,
                    help="folder of <domain>.txt vocabularies for the 'drafted' run")
    ap.add_argument("--tag", default="",
                    help="the 'drafted' run's folder and rows are drafted-TAG (two drafts of a domain side by side)")
    ap.add_argument("--report", action="store_true",
                    help="after the shards: print the table (runs whatever is still missing, unsharded)")
    args = ap.parse_args(argv)
    unknown = [t for t in args.types.split(",") if t and t not in ALL_TYPES]
    if unknown or not args.types.strip(","):
        ap.error(f"--types {args.types!r}: choose from {', '.join(ALL_TYPES)}")
    rows = []
    for domain in [d for d in args.domains.split(",") if d]:
        types = [t for t in args.types.split(",") if t in load_dataset(DOMAINS[domain]).types]
        if not types:  # the two-entity sets hold 2i questions only, the domains none
            continue
        for run, (methods, params) in RUNS.items():
            if run not in args.runs.split(","):
                continue
            if args.methods:
                methods = [m for m in methods if m in args.methods.split(",")]
                if not methods:
                    continue
            vocabulary = None
            if run == "drafted":
                path = (args.vocabularies or Path("-")) / f"{domain}.txt"
                if not path.is_file():
                    continue
                vocabulary = RelationVocabulary.read(path)
            folder = f"{run}-{args.tag}" if run == "drafted" and args.tag else run
            summary = run_eval(DOMAINS[domain], methods, args.model, args.out / domain / folder, params=params or None,
                               vocabulary=vocabulary,
                               progress=False, per_type=args.per_type, types=types,
                               shard=None if args.report else _shard(args.shard),
                               workers=1 if args.report or args.shard else args.workers)
            costs = _costs(args.out / domain / folder)
            for g in summary.by_type + summary.overall:
                name = g.method if run == "main" else f"{g.method}-{folder}"
                rows.append((domain, g.type or "all", name, g, _medians(costs, g.method, g.type)))
    print(f"{args.model}, --per-type {args.per_type}")
    print("| domain | type | method | n | Hits@1 | F1 | ill% | p50 s | prompt tokens read | tokens written |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    order = {"dog": 0, "dog-previous": 1, "dog-unsure": 1.5, "dog-nomeet": 1.7, "dog-list8": 1.8, "dog-drafted": 1.9, "dog-kind": 1.95, "dog-told": 1.96,
             "dog-paper": 2,
             "direct": 3, "reads": 4, "rok": 5}
    for domain, qtype, name, g, (read, written) in sorted(
            rows, key=lambda r: (r[1] != "all", r[0], r[1], order.get(r[2], 9))):
        hits = f"{g.hits1.value:.2f}" if g.hits1 else "-"
        f1 = f"{g.f1.value:.2f}" if g.f1 else "-"
        ill = f"{100 * g.ill_triplet_rate.value:.0f}" if g.ill_triplet_rate else "-"
        print(f"| {domain} | {qtype} | {name} | {g.n} | {hits} | {f1} | {ill} | {g.seconds_p50:.0f} | {read} | "
              f"{written} |")
    return 0


def _costs(out: Path) -> list[tuple[str, str, dict]]:
    """(method, question type, the trace's cost breakdown) for every answered pair of an eval folder."""
    found = []
    for r in load_results(out):
        path = out / str(r.get("trace") or "")
        if not r.get("trace") or not path.is_file():
            continue
        costs = json.loads(path.read_text()).get("costs")
        if costs:
            found.append((r.get("method", ""), r.get("type", ""), costs))
    return found


def _medians(costs: list[tuple[str, str, dict]], method: str, qtype: str | None) -> tuple[str, str]:
    """Median prompt tokens read beyond the cached prefix and median tokens written ("-" without breakdowns)."""
    mine = [c for m, t, c in costs if m == method and (qtype in (None, "", "all") or t == qtype)]
    if not mine:
        return "-", "-"
    return (f"{statistics.median(c.get('prompt_tokens_read', 0) for c in mine):.0f}",
            f"{statistics.median(c.get('tokens_written', 0) for c in mine):.0f}")


if __name__ == "__main__":
    raise SystemExit(main())
