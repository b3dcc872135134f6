"""Running a method on a remote graph store (a SPARQL endpoint).

Every method was written against an in-memory graph, and what it reads is
the neighbourhood of the question's topic entities.  So a run on a store
(1) finds the topic entities in the store (given ones are checked, otherwise
they are linked from the question by exact label lookups), (2) fetches their
bounded k-hop neighbourhood with batched queries (`GraphStore.subgraph_around`:
canonical order, per-entity limit and total cap, both noted in the trace when
they cut), and (3) runs the method unchanged on that fetched subgraph.  The
trace records the store's queries and seconds next to the model's costs, the
store's settings, and the fetched triplets themselves, so a saved run replays
without the endpoint.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable

from .. import progress
from ..graph.knowledge_graph import KnowledgeGraph
from ..graph.store_linking import link_in_store
from ..trace.schema import Trace

FETCHED_GRAPH_KEY = "fetched_graph"
STORE_KEY = "graph_store"


def run_on_store(name: str, request: Any, run: Callable[[str, Any], Trace]) -> Trace:
    """Fetch the question's neighbourhood from `request.graph` (a store) and run method `name` on it."""
    store = request.graph
    started = time.perf_counter()
    before = store.costs.snapshot()
    notes: list[str] = []
    try:
        topics = _topics(store, request, notes)
        hood = store.subgraph_around(topics)
    except Exception as exc:  # a store error must end the run with a message, never a traceback
        from ..graph.sparql.client import SparqlError

        if not isinstance(exc, (SparqlError, ValueError)):
            raise
        trace = Trace(method=name, question=request.question, parameters=dict(request.params),
                      graph_name=store.name, graph_fingerprint=store.fingerprint,
                      error=f"graph store: {exc}", seconds=time.perf_counter() - started)
        _record(trace, store, before, None)
        return trace
    fetch_seconds = time.perf_counter() - started
    notes.append(
        f"fetched the {hood.hops}-hop neighbourhood of {', '.join(topics)} from {store.name}: "
        f"{len(hood.graph)} triplets in {fetch_seconds:.2f} s"
    )
    notes.extend(hood.notes)
    # the model's descriptions of relation names (`describe_relations`) belong to the store, not to one
    # question's neighbourhood: asked once per relation for the store, not again for every question
    hood.graph.descriptions_key = store.fingerprint
    local = dataclasses.replace(request, graph=hood.graph, topic_entities=topics)
    trace = run(name, local)
    trace.notes[:0] = notes
    trace.seconds += fetch_seconds
    if trace.costs is not None:  # the breakdown still sums to the trace's seconds
        trace.costs.add(progress.GRAPH_FETCH, fetch_seconds)
    _record(trace, store, before, hood.graph)
    trace.extra[STORE_KEY]["truncated"] = hood.truncated
    trace.extra[STORE_KEY]["fetch_seconds"] = round(fetch_seconds, 4)
    return trace


def _topics(store: Any, request: Any, notes: list[str]) -> list[str]:
    given = [e for e in request.topic_entities if e]
    if given:
        named = store.lookup_names(given)  # a bare id or another-language label -> the store's name
        present = list(dict.fromkeys(named[e] for e in given if e in named))
        missing = [e for e in given if e not in named]
        if missing:
            notes.append(f"topic entities not in the store were ignored: {', '.join(missing)}")
        if present:
            return present
    found = link_in_store(request.question, store)
    if not found:
        raise ValueError("no entity of the question was found in the store by its label; name the topic entity")
    best = found[0]
    notes.append(f"no topic entity given: linked {best.entity!r} from the question in the store "
                 f"({best.method}, {best.score:.2f})")
    return [best.entity]


def _record(trace: Trace, store: Any, before: Any, fetched: KnowledgeGraph | None) -> None:
    used = store.costs.since(before)
    trace.graph_queries += used.queries
    trace.graph_seconds += round(used.seconds, 6)
    info = dict(store.describe())
    info.update({"name": store.name, "fingerprint": store.fingerprint, "cache_hits": used.cache_hits,
                 "cache_misses": used.cache_misses, "rows": used.rows})
    trace.extra[STORE_KEY] = info
    if fetched is not None:
        trace.extra[FETCHED_GRAPH_KEY] = [list(t.as_tuple) for t in fetched]


def fetched_graph(trace: Trace) -> KnowledgeGraph | None:
    """The subgraph a store run fetched (same ids as the trace cites), or None for an upload's run."""
    rows = trace.extra.get(FETCHED_GRAPH_KEY)
    if not rows:
        return None
    info = trace.extra.get(STORE_KEY) or {}
    graph = KnowledgeGraph.from_triplets([tuple(r) for r in rows], name=trace.graph_name or "fetched subgraph")
    graph.source = str(info.get("endpoint", ""))
    return graph
