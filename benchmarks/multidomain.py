"""The multi-domain dev benchmark: DoG (workbench and paper presets), Direct, READS and RoK on every domain's whole graph.

Run from the repository root, one process per core (resumable; the same --out extends a run):

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/multidomain.py --per-type 3 --out runs/eval/multidomain --shard 1/2 &
    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/multidomain.py --per-type 3 --out runs/eval/multidomain --shard 2/2
    .venv/bin/python benchmarks/multidomain.py --per-type 3 --out runs/eval/multidomain --report

Domains (datasets/multidomain, built by `python -m kgqa_core.datasets`; README there): DBpedia (MLPQ
dev, 2-3 hops), US geography (GeoQuery), Wikidata fact chains (MQuAKE), and MetaQA's whole KB.  Each
question is asked over its domain's whole graph.  Types up to 3 hops (the readers plan at most 3).
``dog`` runs with the workbench defaults, ``dog-paper`` with ``preset=paper`` (a second eval folder).
The report prints one table: per domain and method, n, Hits@1, F1, ill-triplet rate and p50 seconds,
the per-domain rows first, then per hop.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kgqa_core.eval.dataset import load_dataset  # noqa: E402
from kgqa_core.eval.runner import run_eval  # noqa: E402

DOMAINS = {
    "dbpedia": ROOT / "datasets" / "multidomain" / "dbpedia_dev.jsonl",
    "geography": ROOT / "datasets" / "multidomain" / "geography_dev.jsonl",
    "wikidata": ROOT / "datasets" / "multidomain" / "wikidata_dev.jsonl",
    "metaqa": ROOT / "datasets" / "metaqa_full_kb" / "metaqa_dev_full_kb_90.jsonl",
}
TYPES = ["1hop", "2hop", "3hop"]
RUNS = {"main": (["dog", "direct", "reads", "rok"], {}), "paper": (["dog"], {"preset": "paper"})}


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
    ap.add_argument("--report", action="store_true",
                    help="after the shards: print the table (runs whatever is still missing, unsharded)")
    args = ap.parse_args(argv)
    rows = []
    for domain in [d for d in args.domains.split(",") if d]:
        types = [t for t in TYPES if t in load_dataset(DOMAINS[domain]).types]
        for run, (methods, params) in RUNS.items():
            summary = run_eval(DOMAINS[domain], methods, args.model, args.out / domain / run, params=params or None,
                               progress=False, per_type=args.per_type, types=types,
                               shard=None if args.report else _shard(args.shard))
            for g in summary.by_type + summary.overall:
                name = "dog-paper" if run == "paper" else g.method
                rows.append((domain, g.type or "all", name, g))
    print(f"{args.model}, --per-type {args.per_type}")
    print("| domain | type | method | n | Hits@1 | F1 | ill% | p50 s |")
    print("|---|---|---|---|---|---|---|---|")
    order = {"dog": 0, "dog-paper": 1, "direct": 2, "reads": 3, "rok": 4}
    for domain, qtype, name, g in sorted(rows, key=lambda r: (r[1] != "all", r[0], r[1], order.get(r[2], 9))):
        hits = f"{g.hits1.value:.2f}" if g.hits1 else "-"
        f1 = f"{g.f1.value:.2f}" if g.f1 else "-"
        ill = f"{100 * g.ill_triplet_rate.value:.0f}" if g.ill_triplet_rate else "-"
        print(f"| {domain} | {qtype} | {name} | {g.n} | {hits} | {f1} | {ill} | {g.seconds_p50:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
