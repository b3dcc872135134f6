"""Benchmark: load and index a 200,000-triplet TSV, then link entities in questions.

    .venv/bin/python benchmarks/graph_load.py [--triplets 200000] [--repeat 3]

The file is the MetaQA KB (133,582 triplets, from ../shared/data/metaqa)
topped up with deterministic synthetic triplets, written to a temp dir.
Reported: parse + build (`load_graph`), the entity-name index used by
linking, linking a set of questions, and a neighbour lookup. Wall and CPU times are
both printed: on a shared machine CPU time is the steadier figure.
"""

from __future__ import annotations

import argparse
import gzip
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kgqa_core.graph import link_entities, load_graph  # noqa: E402
from kgqa_core.graph.linking import entity_index  # noqa: E402

METAQA = ROOT.parent / "shared" / "data" / "metaqa" / "kb.tsv.gz"
QUESTIONS = [
    "what movies did [Tom Hanks] star in",
    "who directed Forrest Gump",
    "which films share the director of The Matrix",
    "what genre is Inceptoin",  # typo: exercises the fuzzy path
    "the films written by Quentin Tarantino were released in which years",
    "what languages are the movies starring gert frobe in",
]


def write_tsv(path: Path, n: int) -> int:
    rng = random.Random(0)
    written = 0
    relations = ["directed_by", "written_by", "starred_actors", "has_genre", "release_year", "in_language"]
    with open(path, "w", encoding="utf-8") as out:
        if METAQA.exists():
            with gzip.open(METAQA, "rt", encoding="utf-8") as fh:
                for line in fh:
                    if written >= n:
                        break
                    out.write(line)
                    written += 1
        while written < n:
            i = written
            out.write(f"Synthetic Film {i % 40000}\t{rng.choice(relations)}\tSynthetic Person {rng.randrange(60000)}\n")
            written += 1
    return written


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--triplets", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kb200k.tsv"
        n = write_tsv(path, args.triplets)
        size_mb = path.stat().st_size / 1e6
        loads, indexes, links, cpu, cpu_load = [], [], [], [], []
        for _ in range(args.repeat):
            c0 = time.process_time()
            t0 = time.perf_counter()
            graph = load_graph(path)
            t1 = time.perf_counter()
            c1 = time.process_time()
            entity_index(graph)
            t2 = time.perf_counter()
            c2 = time.process_time()
            for q in QUESTIONS:
                link_entities(q, graph)
            t3 = time.perf_counter()
            loads.append(t1 - t0)
            indexes.append(t2 - t1)
            links.append((t3 - t2) / len(QUESTIONS))
            cpu.append(c2 - c0)
            cpu_load.append(c1 - c0)
        t0 = time.perf_counter()
        for e in graph.entities[:10000]:
            graph.neighbours(e)
        nb = (time.perf_counter() - t0) / 10000
    print(f"file: {n:,} triplet lines, {size_mb:.1f} MB (MetaQA KB + synthetic)")
    print(f"graph: {len(graph):,} triplets, {len(graph.entities):,} entities, {graph.duplicates_dropped:,} duplicates dropped")
    print(f"load_graph (parse + build):  median {statistics.median(loads):.2f} s wall (min {min(loads):.2f}), "
          f"{statistics.median(cpu_load):.2f} s CPU")
    print(f"entity-name index:           median {statistics.median(indexes):.2f} s wall, "
          f"{statistics.median(c - l for c, l in zip(cpu, cpu_load)):.2f} s CPU")
    print(f"load + index:                median {statistics.median(l + i for l, i in zip(loads, indexes)):.2f} s wall, "
          f"{statistics.median(cpu):.2f} s CPU (the machine may be shared: CPU time is the steadier figure)")
    print(f"link_entities per question:  median {statistics.median(links) * 1000:.1f} ms ({len(QUESTIONS)} questions)")
    print(f"neighbours(entity):          {nb * 1e6:.1f} µs")
    for q in QUESTIONS[:4]:
        top = link_entities(q, graph)[:1]
        print(f"  {q!r} -> {[(c.entity, c.score, c.method) for c in top]}")


if __name__ == "__main__":
    main()
