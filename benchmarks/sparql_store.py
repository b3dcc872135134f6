"""What a SPARQL store costs next to an upload: a generated 1M-triplet store in Oxigraph on loopback.

Run from the repository root (needs the ``oxigraph`` dev requirement):

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/sparql_store.py [--films 100000] [--questions 10]
        [--model smollm2-135m] [--no-model]

1. Generates a MetaQA-shaped movie graph (films, people, genres, years,
   languages, tags; about 10.5 fact triples per film plus labels) as
   N-Triples, bulk-loads it with ``oxigraph load`` and serves it read-only on
   a free 127.0.0.1 port.
2. For 10 questions (topic: a film), measures on the store and, as the
   reference, on the in-memory graph of the same fetched subgraph:
   * DoG's G_q expansion: the question's neighbourhood fetch (one batched
     neighbours call per hop, the store's defaults: 3 hops, 200 triplets per
     entity, 5000 per question) and a chain's G_q expansions (the query-centric
     subgraph visiting the topic, then the tails of two triplets);
   * READS' search: the topic's triplets, then one batched call over every
     entity a chosen relation reaches, then the next hop;
   printing queries per question, p50/p95 latency per expansion, and the
   cache hit rate (a second pass over the same questions, and overlap between
   questions).
3. Unless --no-model: DoG with the 135M model on each question, on the store
   and on the same subgraph uploaded, and the store's share of a question's
   wall time (target: the store adds at most 20%), on --model-questions of them.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kgqa_core.decoding.query_subgraph import QueryCentricSubgraph  # noqa: E402
from kgqa_core.graph.sparql import SparqlGraphStore  # noqa: E402
from kgqa_core.graph.sparql.local_server import OxigraphServer  # noqa: E402
from kgqa_core.graph.sparql.terms import literal  # noqa: E402

EX = "http://example.org/movies/"
LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
WORDS = ("night day blue red silent last first lost golden dark river city storm empire shadow heart "
         "king queen road house garden winter summer ghost iron glass fire water star moon sun secret "
         "broken wild quiet endless hidden second paper crystal black white green distant small great").split()
FIRST = "Anna Ben Carla David Emma Frank Grace Henry Iris Jack Kate Leo Maria Nina Oscar Paul Rosa Sam Tina Victor".split()
LAST = "Adams Baker Clark Davis Evans Foster Garcia Hill Irving Jones King Lopez Moore Nolan Ortiz Price Reed Scott Turner Wong".split()
GENRES = "Drama Comedy Thriller Action Horror Romance Documentary Animation Western Mystery Fantasy Crime War Musical Adventure".split()
LANGS = "English French German Spanish Italian Japanese Korean Hindi Russian Swedish Danish Polish".split()


def generate(path: Path, films: int, seed: int = 0) -> int:
    """Write the N-Triples file; returns the number of fact triples (labels not counted)."""
    rnd = random.Random(seed)
    people = films // 3
    tags = 2000
    facts = 0
    with path.open("w", encoding="utf-8") as fh:
        w = fh.write

        def label(iri: str, name: str) -> None:
            w(f"<{iri}> <{LABEL}> {literal(name, lang='en')} .\n")

        for i in range(people):
            label(f"{EX}p{i}", f"{FIRST[i % 20]} {LAST[(i // 20) % 20]} {i // 400}")
        for i, g in enumerate(GENRES):
            label(f"{EX}g{i}", g)
        for i, lang in enumerate(LANGS):
            label(f"{EX}l{i}", lang)
        for i in range(tags):
            label(f"{EX}t{i}", f"{WORDS[i % len(WORDS)]} {WORDS[(i // len(WORDS)) % len(WORDS)]} theme")
        for rel in ("directed_by", "written_by", "starred_actors", "has_genre", "release_year", "in_language", "has_tags"):
            label(f"{EX}{rel}", rel)
        for f in range(films):
            film = f"{EX}f{f}"
            label(film, f"The {WORDS[f % len(WORDS)].title()} {WORDS[(f // 7) % len(WORDS)].title()} {f}")
            out = [("directed_by", f"<{EX}p{rnd.randrange(people)}>"), ("written_by", f"<{EX}p{rnd.randrange(people)}>")]
            out += [("starred_actors", f"<{EX}p{rnd.randrange(people)}>") for _ in range(3)]
            out += [("has_genre", f"<{EX}g{g}>") for g in {rnd.randrange(len(GENRES)) for _ in range(rnd.choice((1, 2)))}]
            out.append(("release_year", literal(str(1950 + rnd.randrange(75)))))
            out.append(("in_language", f"<{EX}l{rnd.randrange(len(LANGS))}>"))
            out += [("has_tags", f"<{EX}t{t}>") for t in {rnd.randrange(tags) for _ in range(2)}]
            for rel, obj in dict.fromkeys(out):
                w(f"<{film}> <{EX}{rel}> {obj} .\n")
                facts += 1
    return facts


def pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def gq_and_reads(graph, topic: str, expansions: list[float], reads_steps: list[float]) -> None:
    """One question, fetching lazily: G_q expansions along a chain, then READS' search steps."""
    gq, s = timed(lambda: QueryCentricSubgraph(graph, [topic]))
    expansions.append(s)
    for _ in range(2):  # a chain's next triplets: the first new neighbour's edge
        trips = [t for t in gq.triplets() if t.tail not in gq.visited or t.head not in gq.visited]
        if not trips:
            break
        _, s = timed(lambda t=trips[0]: gq.expand(t))
        expansions.append(s)
    # READS: topic's triplets, then the entities one relation reaches (batched), then one more hop
    first, s = timed(lambda: graph.neighbours_batch([topic], "both", None, 200))
    reads_steps.append(s)
    by_rel: dict[str, list[str]] = {}
    for t in first.triplets[topic]:
        by_rel.setdefault(t.relation, []).append(t.other(topic))
    if not by_rel:
        return
    rel = sorted(by_rel, key=lambda r: (len(by_rel[r]), r))[-1]
    second, s = timed(lambda: graph.neighbours_batch(by_rel[rel], "both", None, 200))
    reads_steps.append(s)
    reached = sorted({t.other(e) for e, ts in second.triplets.items() for t in ts} - {topic})[:50]
    _, s = timed(lambda: graph.neighbours_batch(reached, "both", None, 200))
    reads_steps.append(s)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--films", type=int, default=100_000)
    ap.add_argument("--questions", type=int, default=10)
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--no-model", action="store_true")
    ap.add_argument("--model-questions", type=int, default=10, help="questions DoG runs on (store and upload)")
    ap.add_argument("--keep", help="directory to keep the generated store in (default: a temp dir)")
    args = ap.parse_args()

    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="kgqa-sparql-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    nt = work / "movies.nt"
    if not nt.exists():
        facts, s = timed(lambda: generate(nt, args.films))
        print(f"generated {facts:,} fact triples (+ labels) in {s:.1f}s: {nt.stat().st_size / 2**20:.0f} MB")
    else:
        facts = None
    db = work / "db"
    with OxigraphServer([] if db.exists() else [nt], location=db) as server:
        if server.load_seconds:
            print(f"oxigraph load: {server.load_seconds:.1f}s")
        probe = SparqlGraphStore(server.endpoint, "rdf")
        total = probe.count_triples()
        print(f"store: {total:,} triples at {server.endpoint} (load {os.getloadavg()[0]:.1f})")
        rnd = random.Random(7)
        films = [rnd.randrange(args.films) for _ in range(args.questions)]
        store = SparqlGraphStore(server.endpoint, "rdf")
        names = []
        for i in films:
            rows = store.client.select(f"SELECT ?l WHERE {{ <{EX}f{i}> <{LABEL}> ?l }}").rows
            names.append(rows[0]["l"].value)

        exp_store: list[float] = []
        reads_store: list[float] = []
        per_question_queries = []
        for name in names:  # lazily, as DoG's G_q and READS' search visit entities
            q0 = store.costs.queries
            gq_and_reads(store, name, exp_store, reads_store)
            per_question_queries.append(store.costs.queries - q0)
        lazy = store.costs
        fetch_store: list[float] = []
        fetch_queries = []
        snapshots = {}
        for name in names:  # the bounded 3-hop neighbourhood a method run fetches (run_on_store)
            q0 = store.costs.queries
            hood, s = timed(lambda: store.subgraph_around([name]))
            fetch_store.append(s)
            fetch_queries.append(store.costs.queries - q0)
            snapshots[name] = hood.graph
        first_pass = store.costs
        exp_again: list[float] = []
        reads_again: list[float] = []
        for name in names:
            gq_and_reads(store, name, exp_again, reads_again)
            store.subgraph_around([name])
        second = store.costs.since(first_pass)

        exp_mem: list[float] = []
        reads_mem: list[float] = []
        fetch_mem: list[float] = []
        for name in names:
            gq_and_reads(snapshots[name], name, exp_mem, reads_mem)
            _, s = timed(lambda: snapshots[name].subgraph_around([name], 3, 200, 5000))
            fetch_mem.append(s)

        sizes = [len(g) for g in snapshots.values()]
        hit_rate = first_pass.cache_hits / max(first_pass.cache_hits + first_pass.cache_misses, 1)
        print(f"\nlazy G_q + READS per question: {statistics.mean(per_question_queries):.0f} queries "
              f"(min {min(per_question_queries)}, max {max(per_question_queries)}); cache hit rate "
              f"{lazy.cache_hits / max(lazy.cache_hits + lazy.cache_misses, 1):.1%}")
        print(f"3-hop neighbourhood per question: {statistics.mean(fetch_queries):.0f} queries; "
              f"{statistics.median(sizes):.0f} triplets median (max {max(sizes)}); cache hit rate over both "
              f"{hit_rate:.1%}")
        print(f"second pass over the same questions: {second.queries} queries, cache hit rate "
              f"{second.cache_hits / max(second.cache_hits + second.cache_misses, 1):.1%}")
        for label, a, b in (("G_q expansion", exp_store, exp_mem), ("READS search step", reads_store, reads_mem),
                             ("3-hop fetch", fetch_store, fetch_mem), ("G_q (cached)", exp_again, exp_mem)):
            print(f"{label:18s} store p50 {pct(a, .5) * 1000:8.1f} ms  p95 {pct(a, .95) * 1000:8.1f} ms | "
                  f"in-memory p50 {pct(b, .5) * 1000:7.2f} ms  p95 {pct(b, .95) * 1000:7.2f} ms  (n={len(a)})")

        if args.no_model:
            return 0
        from kgqa_core.methods.base import MethodRequest, run_method
        from kgqa_core.models import load_model

        model = load_model(args.model)
        params = {"beam_size": 1, "max_steps": 2, "max_new_tokens": 64}
        warm = names[0]  # load the pruning embedder and warm the model outside the timed runs
        run_method("dog", MethodRequest(graph=snapshots[warm], question=f"Who directed {warm}?", model=model,
                                        topic_entities=[warm], params=dict(params)))
        shares, walls, walls_mem = [], [], []
        for name in names[: args.model_questions]:
            fresh = SparqlGraphStore(server.endpoint, "rdf")  # a new session: nothing cached
            question = f"Who directed {name}?"
            model.clear_prefix_cache()
            t0 = time.perf_counter()
            trace = run_method("dog", MethodRequest(graph=fresh, question=question, model=model,
                                                    topic_entities=[name], params=dict(params)))
            wall = time.perf_counter() - t0
            store_s = fresh.costs.seconds
            model.clear_prefix_cache()
            t0 = time.perf_counter()
            run_method("dog", MethodRequest(graph=snapshots[name], question=question, model=model,
                                            topic_entities=[name], params=dict(params)))
            wall_mem = time.perf_counter() - t0
            walls.append(wall)
            walls_mem.append(wall_mem)
            shares.append(store_s / wall)
            print(f"  {name[:40]:40s} store {trace.graph_queries:4d} queries {store_s:6.2f}s / wall {wall:6.1f}s "
                  f"(uploaded subgraph {wall_mem:6.1f}s) answer {', '.join(trace.answer_texts)[:30]!r}")
        print(f"\nDoG ({args.model}, {params}): store share of wall time p50 {pct(shares, .5):.1%}, "
              f"max {max(shares):.1%}; wall store/uploaded {sum(walls) / sum(walls_mem):.3f} (target: store adds <= 20%)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
