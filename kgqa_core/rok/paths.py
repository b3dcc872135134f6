"""Bounded enumeration of n-hop paths between key entities (RoK §4.2.1).

Paths are searched on an undirected view of the graph, since a reasoning path
may walk a relation against its direction (``film -> directed_by -> X`` read
from X), but every step keeps the triplet id it uses and whether it was
walked forwards, so the evidence shown and cited is the real triplet.

Enumeration is depth-first with a distance bound: a node is only entered
when the target is still reachable within the remaining hops (distances come
from one breadth-first search from the target).  Every branch explored then
ends in at least one path, so the work is proportional to the number of
paths produced and the ``max_paths`` cap bounds it, even around hubs.
Shorter paths are produced first, so a capped search keeps the shortest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator, Sequence

import networkx as nx

from .. import progress
from ..graph.knowledge_graph import KnowledgeGraph


@dataclass(frozen=True)
class PathStep:
    """One triplet of a path, walked forwards (head to tail) or backwards."""

    triplet_id: int
    forward: bool


@dataclass(frozen=True)
class KGPath:
    """A simple path: its entities in walk order and the triplets between them."""

    entities: tuple[str, ...]
    steps: tuple[PathStep, ...]

    @property
    def triplet_ids(self) -> list[int]:
        return [s.triplet_id for s in self.steps]

    @property
    def hops(self) -> int:
        return len(self.steps)

    def text(self, graph: KnowledgeGraph) -> str:
        """``A -> r -> B <- r2 <- C``: arrows show each triplet's real direction."""
        if not self.steps:
            return self.entities[0] if self.entities else ""
        out = [self.entities[0]]
        for step, nxt in zip(self.steps, self.entities[1:]):
            rel = graph.triplet(step.triplet_id).relation
            out.append(f"-> {rel} -> {nxt}" if step.forward else f"<- {rel} <- {nxt}")
        return " ".join(out)


@dataclass
class PairSearch:
    """What one (source, target) search found."""

    source: str
    target: str
    n_paths: int
    capped: bool


@dataclass
class PathSearchResult:
    paths: list[KGPath] = field(default_factory=list)
    pairs: list[PairSearch] = field(default_factory=list)
    mode: str = "pairwise"  # "pairwise" | "neighbourhood"
    notes: list[str] = field(default_factory=list)

    @property
    def capped(self) -> bool:
        return any(p.capped for p in self.pairs)

    @property
    def triplet_ids(self) -> list[int]:
        """The deduplicated subgraph of all paths, in first-seen order."""
        seen: dict[int, None] = {}
        for p in self.paths:
            for tid in p.triplet_ids:
                seen.setdefault(tid, None)
        return list(seen)


def undirected_view(graph: KnowledgeGraph) -> nx.MultiGraph:
    """The graph's MultiDiGraph seen without direction; edge keys stay triplet ids."""
    return graph.nx.to_undirected(as_view=True)


def adjacent(graph: KnowledgeGraph, u: str) -> list[tuple[str, list[int]]]:
    """`u`'s neighbours without direction, each with the ids of the triplets between them, in the graph's order.

    Why not the undirected view's ``adj[u]``: networkx lists a node's neighbours there as a set union of its
    successors and predecessors, whose order follows Python's string hashing, which changes from process to
    process; with a cap on the paths kept, another order keeps other paths, and RoK answered one question three
    ways in three runs of the same code.  Here successors come first, then predecessors, each in the order the
    graph holds them.
    """
    out: dict[str, list[int]] = {}
    for side in (graph.nx.succ[u], graph.nx.pred[u]):
        for v, keys in side.items():
            have = out.setdefault(v, [])
            have.extend(k for k in keys if k not in have)
    return list(out.items())


def _step(graph: KnowledgeGraph, u: str, key: int) -> PathStep:
    return PathStep(int(key), graph.triplet(int(key)).head == u)


def paths_between(
    graph: KnowledgeGraph,
    source: str,
    target: str,
    max_hops: int,
    max_paths: int,
    view: nx.MultiGraph | None = None,
) -> tuple[list[KGPath], bool]:
    """All simple paths of 1..max_hops triplets from source to target, shortest first.

    Returns (paths, capped); ``capped`` is True when more than ``max_paths``
    paths exist and only the first ``max_paths`` were kept.
    """
    if source == target or not graph.has_entity(source) or not graph.has_entity(target):
        return [], False
    if max_hops < 1:
        return [], False
    view = view if view is not None else undirected_view(graph)
    # Intermediate nodes are useful only within max_hops - 1 of the target.
    dist = nx.single_source_shortest_path_length(view, target, cutoff=max_hops - 1)
    out: list[KGPath] = []
    for length in range(1, max_hops + 1):
        for path in _dfs(graph, source, target, length, dist):
            if len(out) >= max_paths:
                return out, True
            out.append(path)
    return out, False


def _dfs(
    graph: KnowledgeGraph,
    source: str,
    target: str,
    length: int,
    dist: dict[str, int],
) -> Iterator[KGPath]:
    """Simple paths of exactly ``length`` triplets, pruned by distance to target."""
    entities = [source]
    steps: list[PathStep] = []
    on_path = {source}

    def extend(u: str) -> Iterator[KGPath]:
        remaining = length - len(steps)
        for v, keys in adjacent(graph, u):
            if v == target:
                if remaining == 1:
                    for key in keys:
                        yield KGPath(tuple(entities) + (v,), tuple(steps) + (_step(graph, u, key),))
                continue
            if v in on_path or remaining <= 1:
                continue
            d = dist.get(v)
            if d is None or d > remaining - 1:
                continue
            for key in keys:
                entities.append(v)
                steps.append(_step(graph, u, key))
                on_path.add(v)
                yield from extend(v)
                on_path.discard(v)
                steps.pop()
                entities.pop()

    yield from extend(source)


@progress.in_phase(progress.CONTEXT_RANKING)
def pairwise_paths(
    graph: KnowledgeGraph,
    key_entities: Sequence[str],
    max_hops: int,
    max_paths: int,
) -> PathSearchResult:
    """Paths between key entities taken pairwise in order (Algorithm 1, main paths).

    e1 is paired with e2..en, then removed; e2 with e3..en; and so on.  Paths
    that repeat one already found (same triplets) are dropped.
    """
    view = undirected_view(graph)
    result = PathSearchResult(mode="pairwise")
    seen: set[tuple[int, ...]] = set()
    ents = [e for e in key_entities if graph.has_entity(e)]
    for i, a in enumerate(ents):
        for b in ents[i + 1 :]:
            found, capped = paths_between(graph, a, b, max_hops, max_paths, view)
            kept = 0
            for p in found:
                key = tuple(sorted(p.triplet_ids))
                if key in seen:
                    continue
                seen.add(key)
                result.paths.append(p)
                kept += 1
            result.pairs.append(PairSearch(a, b, kept, capped))
            if capped:
                result.notes.append(
                    f"path cap hit: more than {max_paths} paths of at most {max_hops} hops between "
                    f"{a!r} and {b!r}; kept the {max_paths} shortest found first"
                )
    return result


@progress.in_phase(progress.CONTEXT_RANKING)
def neighbourhood_paths(
    graph: KnowledgeGraph,
    entities: Iterable[str],
    max_hops: int,
    max_paths: int,
) -> PathSearchResult:
    """Paths of 1..max_hops triplets starting at each entity (the single-entity case).

    With one key entity there is no pair to connect, so (as the paper
    discusses for this case) the candidate paths are the walks out of that
    entity; every prefix is its own path so a 1-hop fact can win on its own.
    Shorter paths come first, so the cap keeps the nearest facts.
    """
    result = PathSearchResult(mode="neighbourhood")
    for source in entities:
        if not graph.has_entity(source):
            continue
        found: list[KGPath] = []
        capped = False
        frontier = [KGPath((source,), ())]
        for _ in range(max_hops):
            nxt: list[KGPath] = []
            for path in frontier:
                u = path.entities[-1]
                for v, keys in adjacent(graph, u):
                    if v in path.entities:
                        continue
                    for key in keys:
                        if len(found) >= max_paths:
                            capped = True
                            break
                        p = KGPath(path.entities + (v,), path.steps + (_step(graph, u, key),))
                        found.append(p)
                        nxt.append(p)
                    if capped:
                        break
                if capped:
                    break
            frontier = nxt
            if capped:
                break
        result.paths.extend(found)
        result.pairs.append(PairSearch(source, "", len(found), capped))
        if capped:
            result.notes.append(
                f"path cap hit: more than {max_paths} paths of at most {max_hops} hops out of "
                f"{source!r}; kept the {max_paths} shortest found first"
            )
    return result
