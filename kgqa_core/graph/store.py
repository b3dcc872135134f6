"""The graph-store interface: what methods, the eval runner and the UI may ask of a graph.

A method never needs the whole graph, only the neighbourhoods it visits, so
the interface is made of bounded, batched questions: the neighbours of some
entities (direction, relation filter, a limit and a flag when the limit cut
the answer), the relations around some entities, entity labels, entity search
by name, and a bounded k-hop subgraph around seed entities.  Two
implementations: the in-memory `KnowledgeGraph` (an upload) and
`SparqlGraphStore` (a SPARQL 1.1 endpoint).

Entities are *names* at this interface, as they are in an uploaded graph: the
model and the UI see names, and a store keeps its own ids (IRIs) inside.
Triplets of a `Neighbourhood` are in canonical order (sorted by head,
relation, tail) with ids 0..n-1 in that order, so the same data gives the
same prompt and the same answer whether it was uploaded or fetched.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Literal, Protocol, Sequence, runtime_checkable

from ..counts import QueryCounts
from .triplet import Triplet

Direction = Literal["out", "in", "both"]
DIRECTIONS: tuple[str, ...] = ("out", "in", "both")


@dataclass
class NeighbourBatch:
    """The triplets around some entities, and which entities a limit cut short.

    ``triplets`` maps each asked entity to its triplets (canonical order);
    ``truncated`` names the entities that have more triplets than the limit
    allowed (their list holds the first `limit` in canonical order).
    """

    triplets: dict[str, list[Triplet]]
    truncated: set[str] = field(default_factory=set)

    def all(self) -> list[Triplet]:
        """Every triplet of the batch once, in canonical order."""
        seen: dict[tuple[str, str, str], Triplet] = {}
        for trips in self.triplets.values():
            for t in trips:
                seen.setdefault(t.as_tuple, t)
        return sorted(seen.values(), key=canonical_key)


@dataclass
class Neighbourhood:
    """A bounded k-hop subgraph around seed entities, as an in-memory graph.

    ``graph`` holds the triplets in canonical order (ids 0..n-1);
    ``truncated`` is True when a per-entity limit or the total cap left
    triplets out, and ``notes`` say which, for the trace.
    """

    graph: Any  # a KnowledgeGraph (not imported: that module implements this interface)
    seeds: list[str]
    hops: int
    truncated: bool = False
    notes: list[str] = field(default_factory=list)


@dataclass
class StoreCosts(QueryCounts):
    """Queries sent to a store, their wall time and rows, and its cache's hits (the in-memory graph sends none)."""

    cache_hits: int = 0
    cache_misses: int = 0


class TripletsById:
    """Triplets looked up by id in ``_triplets``, which the graph or store fills (every id it knows)."""

    _triplets: dict[int, Triplet]

    def _triplets_source(self) -> str:
        """Where the triplets came from, for the message of an unknown id."""
        return f"graph {getattr(self, 'name', '')!r}"

    def triplet(self, triplet_id: int) -> Triplet:
        try:
            return self._triplets[triplet_id]
        except KeyError:
            raise KeyError(f"no triplet with id {triplet_id} in {self._triplets_source()}") from None

    def triplets_by_ids(self, ids: Iterable[int]) -> list[Triplet]:
        """The known triplets among `ids`, in their order (unknown ids are passed over)."""
        return [self._triplets[i] for i in ids if i in self._triplets]

    def has_triplet_id(self, triplet_id: int) -> bool:
        return triplet_id in self._triplets


def canonical_key(t: Triplet) -> tuple[str, str, str]:
    """The canonical order of triplets: by head, relation, tail names."""
    return (t.head, t.relation, t.tail)


@runtime_checkable
class GraphStore(Protocol):
    """What anything outside `kgqa_core.graph` may ask of a graph (see module doc)."""

    name: str

    @property
    def fingerprint(self) -> str: ...

    @property
    def is_local(self) -> bool:
        """True when the whole graph is in memory (an upload); False for a remote store."""
        ...

    def has_entity(self, entity: str) -> bool: ...

    def neighbours_batch(
        self,
        entities: Sequence[str],
        direction: Direction = "both",
        relations: Iterable[str] | None = None,
        limit: int | None = None,
    ) -> NeighbourBatch: ...

    def relations_of(self, entities: Sequence[str], direction: Direction = "both") -> dict[str, list[str]]: ...

    def labels(self, entities: Sequence[str]) -> dict[str, str]:
        """The display name of each entity (an upload's entity *is* its name)."""
        ...

    def search_entities(self, query: str, limit: int = 10) -> list[tuple[str, float]]: ...

    def subgraph_around(
        self,
        seeds: Sequence[str],
        hops: int,
        limit_per_entity: int | None = None,
        max_triplets: int | None = None,
    ) -> Neighbourhood: ...


def is_local_graph(graph: object) -> bool:
    """True for a graph whose triplets are all in memory (methods may run on it directly)."""
    return bool(getattr(graph, "is_local", True))


def bfs_neighbourhood(
    store: GraphStore,
    seeds: Sequence[str],
    hops: int,
    limit_per_entity: int | None,
    max_triplets: int | None,
    name: str,
    build: Callable[..., Any],
) -> Neighbourhood:
    """Breadth-first k-hop expansion with one batched neighbours call per hop.

    Shared by every store so that the in-memory graph and a SPARQL endpoint
    expand the same way and give the same subgraph for the same data when no
    limit cuts.  A cut hub keeps `limit_per_entity` triplets: the first in
    canonical order in memory, the first the store returns (its index order,
    stable for a given store) on an endpoint; the note names the hubs.
    """
    present = [s for s in dict.fromkeys(seeds) if store.has_entity(s)]
    kept: dict[tuple[str, str, str], Triplet] = {}
    notes: list[str] = []
    cut_entities: list[str] = []
    capped = False
    visited: set[str] = set(present)
    frontier = list(present)
    for hop in range(max(hops, 0)):
        if not frontier or capped:
            break
        batch = store.neighbours_batch(frontier, "both", None, limit_per_entity)
        cut_entities.extend(e for e in frontier if e in batch.truncated)
        nxt: list[str] = []
        for ent in frontier:
            for t in batch.triplets.get(ent, ()):
                if t.as_tuple in kept:
                    continue
                if max_triplets is not None and len(kept) >= max_triplets:
                    capped = True
                    break
                kept[t.as_tuple] = t
                for other in (t.head, t.tail):
                    if other not in visited:
                        visited.add(other)
                        nxt.append(other)
            if capped:
                break
        frontier = nxt
    if cut_entities:
        shown = ", ".join(repr(e) for e in cut_entities[:5]) + (" ..." if len(cut_entities) > 5 else "")
        notes.append(
            f"{len(cut_entities)} entit{'y has' if len(cut_entities) == 1 else 'ies have'} more than "
            f"{limit_per_entity} triplets; kept {limit_per_entity} of each: {shown}"
        )
    if capped:
        notes.append(f"the {hops}-hop neighbourhood was cut at {max_triplets} triplets (max_triplets)")
    graph = build(sorted(kept), name=name)  # KnowledgeGraph.from_triplets: this module never imports it
    return Neighbourhood(graph, present, hops, truncated=bool(cut_entities) or capped, notes=notes)
