"""How much of the prompt's context an embedding pool keeps, and what it saves: `context_pool` against every candidate.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/context_pool.py --per-type 3 --pools 600,1000

For the first --per-type questions of each type of each dev domain (each over
its whole graph), the prompt's 40 triplets are chosen twice in one process:
from every candidate (up to 2,000, the paper's ranking, ``context_pool=0``)
and from an embedding pool of each size.  Printed per domain: the share of
the 40 triplets both choose (overlap) and the triplets embedded, with the
ratio.  The embedder caches what it encoded, so the seconds of the second
choice are not a cost figure; the embedded counts are.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kgqa_core.datasets.multidomain import DEV_DOMAINS  # noqa: E402

from kgqa_core.eval.dataset import load_dataset  # noqa: E402
from kgqa_core.graph import pruning  # noqa: E402

DOMAINS = {name: ROOT / path for name, path in DEV_DOMAINS.items()}


def _embedded(note: str) -> int:
    """Triplets the note says were ranked by cosine similarity ("ranked 1000 of 2000 ..." or "ranked 2000 ...")."""
    words = note.split()
    return int(words[words.index("ranked") + 1]) if "ranked" in words else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-type", type=int, default=3)
    ap.add_argument("--pools", default="600,1000")
    ap.add_argument("--budget", type=int, default=40)
    args = ap.parse_args(argv)
    pools = [int(p) for p in args.pools.split(",")]
    print("| domain | pool | questions | overlap (median) | overlap (min) | triplets embedded (median) | of all candidates |")
    print("|---|---|---|---|---|---|---|")
    for domain, path in DOMAINS.items():
        ds = load_dataset(path)
        taken: dict[str, int] = {}
        rows: dict[int, list[tuple[float, int, int]]] = {p: [] for p in pools}
        for q in ds:
            if taken.get(q.type, 0) >= args.per_type:
                continue
            taken[q.type] = taken.get(q.type, 0) + 1
            graph = q.graph()
            full = pruning.prune_to_budget(graph, q.question, q.topic_entities, max_triplets=args.budget)
            every = _embedded(full.note) or len(full.triplet_ids)
            for p in pools:
                part = pruning.prune_to_budget(graph, q.question, q.topic_entities, max_triplets=args.budget,
                                               embed_pool=p)
                same = len(set(full.triplet_ids) & set(part.triplet_ids)) / max(1, len(full.triplet_ids))
                rows[p].append((same, _embedded(part.note) or len(part.triplet_ids), every))
        for p in pools:
            r = rows[p]
            print(f"| {domain} | {p} | {len(r)} | {statistics.median(x[0] for x in r):.2f} | "
                  f"{min(x[0] for x in r):.2f} | {statistics.median(x[1] for x in r):.0f} | "
                  f"{statistics.median(x[2] for x in r):.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
