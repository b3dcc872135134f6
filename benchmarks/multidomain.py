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
(from each trace's cost breakdown, `Trace.costs`), the per-domain rows first, then per hop, then a
"held out" row per method pooling every question of the domains other than MetaQA (the questions no reader or
rule was written from; its medians are over those questions, not a median of the domains' medians).
``--saved`` reports what the run folders hold and runs nothing (runs of different ``--per-type`` side by side);
``--also DIR`` (repeatable) reads a domain's run from DIR when ``--out`` does not hold it, so two earlier runs
(e.g. DBpedia's 40 per type in one folder, geography's and Wikidata's 20 in another) report as one table:

    .venv/bin/python benchmarks/multidomain.py --saved --out runs/eval/base --also runs/eval/base2 --runs main --methods dog
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
from kgqa_core.eval.runner import load_results, run_eval, summarize_records  # noqa: E402
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
    ap.add_argument("--also", type=Path, action="append", default=[],
                    help="a folder of an earlier run to read a domain's run from when --out lacks it")
    ap.add_argument("--saved", action="store_true",
                    help="print the table of what the run folders hold; run nothing")
    ap.add_argument("--report", action="store_true",
                    help="after the shards: print the table (runs whatever is still missing, unsharded)")
    args = ap.parse_args(argv)
    unknown = [t for t in args.types.split(",") if t and t not in ALL_TYPES]
    if unknown or not args.types.strip(","):
        ap.error(f"--types {args.types!r}: choose from {', '.join(ALL_TYPES)}")
    rows = []
    held_out: dict[str, list[tuple[dict, dict | None]]] = {}
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
            out = args.out
            if not (out / domain / folder / "results.jsonl").is_file():
                out = next((a for a in args.also if (a / domain / folder / "results.jsonl").is_file()), out)
            if args.saved:
                records = [r for r in load_results(out / domain / folder) if r.get("method") in methods]
                if not records:
                    continue
                overall, by_type = summarize_records(records, [m for m in methods if any(r["method"] == m for r in records)])
            else:
                summary = run_eval(DOMAINS[domain], methods, args.model, out / domain / folder, params=params or None,
                                   vocabulary=vocabulary,
                                   progress=False, per_type=args.per_type, types=types,
                                   shard=None if args.report else _shard(args.shard),
                                   workers=1 if args.report or args.shard else args.workers)
                overall, by_type = summary.overall, summary.by_type
            costs = _costs(out / domain / folder)
            for g in by_type + overall:
                name = g.method if run == "main" else f"{g.method}-{folder}"
                rows.append((domain, g.type or "all", name, g, _medians(costs, g.method, g.type)))
            if domain != HELD_IN:
                for r in load_results(out / domain / folder):
                    if r.get("method") in methods:
                        name = r["method"] if run == "main" else f"{r['method']}-{folder}"
                        held_out.setdefault(name, []).append((r, _trace_costs(out / domain / folder, r)))
    print(f"{args.model}, " + ("the runs saved" if args.saved else f"--per-type {args.per_type}"))
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
    for name, pairs in sorted(held_out.items(), key=lambda kv: order.get(kv[0], 9)):
        print(pooled_row(name, pairs))
    return 0


HELD_IN = "metaqa"  # the domain the first readers were written from: left out of the pooled "held out" row


def pooled_row(name: str, pairs: list[tuple[dict, dict | None]]) -> str:
    """One table row over every question of the held-out domains: Hits@1 and F1 means, medians of the rest.

    Why pooled rather than a mean of the domains' figures: the issues' goals are medians per question on held-out
    graphs, and a domain of 80 questions should weigh four times one of 20.

    >>> r = {"metrics": {"hits1": 1.0, "f1": 0.5, "seconds": 4.0, "ill_triplets": 0, "cited_triplets": 2}}
    >>> pooled_row("dog", [(r, {"prompt_tokens_read": 100, "tokens_written": 30}),
    ...                    (dict(r, metrics=dict(r["metrics"], hits1=0.0, seconds=8.0)), None)])
    '| held out | all | dog | 2 | 0.50 | 0.50 | 0 | 6 | 100 | 30 |'
    """
    metrics = [r.get("metrics") or {} for r, _ in pairs]
    costs = [c for _, c in pairs if c]
    cited = sum(m.get("cited_triplets", 0) or 0 for m in metrics)
    ill = f"{100 * sum(m.get('ill_triplets', 0) or 0 for m in metrics) / cited:.0f}" if cited else "-"
    read = f"{statistics.median(c.get('prompt_tokens_read', 0) for c in costs):.0f}" if costs else "-"
    written = f"{statistics.median(c.get('tokens_written', 0) for c in costs):.0f}" if costs else "-"
    mean = lambda key: sum(m.get(key, 0.0) or 0.0 for m in metrics) / len(metrics)  # noqa: E731
    seconds = statistics.median(m.get("seconds", 0.0) or 0.0 for m in metrics)
    return (f"| held out | all | {name} | {len(pairs)} | {mean('hits1'):.2f} | {mean('f1'):.2f} | {ill} | "
            f"{seconds:.0f} | {read} | {written} |")


def _trace_costs(out: Path, r: dict) -> dict | None:
    """The cost breakdown of one result's trace (None without a trace or a breakdown)."""
    path = out / str(r.get("trace") or "")
    if not r.get("trace") or not path.is_file():
        return None
    return json.loads(path.read_text()).get("costs") or None


def _costs(out: Path) -> list[tuple[str, str, dict]]:
    """(method, question type, the trace's cost breakdown) for every answered pair of an eval folder."""
    found = []
    for r in load_results(out):
        costs = _trace_costs(out, r)
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
