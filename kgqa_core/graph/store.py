"""The graph-store interface: what methods, the eval runner and the UI may ask of a graph.

A method never needs the whole graph, only the neighbourhoods it visits, so
the interface is made of bounded, batched questions: the neighbours of some
entities (direction, relation filter, a limit and a flag when the limit cut
the answer), the relations around some entities, entity labels, entity search
by name, and a bounded k-hop subgraph around seed entities.  `GraphStore`
is that interface and the part of it every store shares; two stores subclass
it: the in-memory `KnowledgeGraph` (an upload) and `SparqlGraphStore` (a
SPARQL 1.1 endpoint).

Entities are *names* at this interface, as they are in an uploaded graph: the
model and the UI see names, and a store keeps its own ids (IRIs) inside.
Triplets of a `Neighbourhood` are in canonical order (sorted by head,
relation, tail) with ids 0..n-1 in that order, so the same data gives the
same prompt and the same answer whether it was uploaded or fetched.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Iterable, Literal, Sequence

from ..counts import QueryCounts
from .triplet import Triplet

Direction = Literal["out", "in", "both"]
DIRECTIONS: tuple[str, ...] = ("out", "in", "both")
DEFAULT_HOPS = 3  # the depth of a neighbourhood fetched for a question when nobody says


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


def canonical_key(t: Triplet) -> tuple[str, str, str]:
    """The canonical order of triplets: by head, relation, tail names."""
    return (t.head, t.relation, t.tail)


class GraphStore(ABC):
    """What anything outside `kgqa_core.graph` may ask of a graph (see module doc), and what every store shares.

    A store writes only what differs between stores: whether it knows an entity,
    its names (labels, search), the triplets around some entities as it finds them
    (`_triplets_around`), and the graph a neighbourhood comes back as
    (`_neighbourhood_graph`).  The batching, direction check, relation filter,
    canonical order, per-entity cut, the k-hop expansion and the lookups by id
    are written here once, so every store answers the same data the same way.
    """

    name: str
    is_local: bool  # True when the whole graph is in memory (an upload); False for a remote store
    hops: int = DEFAULT_HOPS  # k of `subgraph_around` when the caller gives none
    limit_per_entity: int | None = None  # the store's per-entity cut (None: none) for `relations_of` and k-hop
    max_triplets: int | None = None  # the store's cap on a k-hop neighbourhood (None: none)
    _triplets: dict[int, Triplet]  # every triplet the store has named, by id

    # ------------------------------------------------- what each store writes
    @property
    @abstractmethod
    def fingerprint(self) -> str: ...

    @abstractmethod
    def has_entity(self, entity: str) -> bool: ...

    @abstractmethod
    def labels(self, entities: Sequence[str]) -> dict[str, str]:
        """The display name of each entity (an upload's entity *is* its name)."""

    @abstractmethod
    def search_entities(self, query: str, limit: int = 10) -> list[tuple[str, float]]: ...

    @abstractmethod
    def _triplets_around(self, entities: list[str], direction: Direction, limit: int | None) -> NeighbourBatch:
        """Each entity's triplets in `direction`, in any order; `truncated`: the ones the store itself cut at `limit`.

        `entities` are distinct; an unknown entity may be left out.  Filtering by
        relation, ordering and the cut at `limit` are done by `neighbours_batch`.
        """

    @abstractmethod
    def _neighbourhood_graph(self, triplets: list[tuple[str, str, str]], name: str) -> Any:
        """The in-memory graph a k-hop neighbourhood is returned as (a `KnowledgeGraph`, which this module
        cannot import: that module implements this interface)."""

    # ------------------------------------------------- what every store shares
    def neighbours_batch(
        self,
        entities: Sequence[str],
        direction: Direction = "both",
        relations: Iterable[str] | None = None,
        limit: int | None = None,
    ) -> NeighbourBatch:
        """The triplets around each entity (canonical order), cut at `limit`; `truncated` names the cut ones."""
        if direction not in DIRECTIONS:
            raise ValueError(f"direction must be out, in or both, got {direction!r}")
        wanted = set(relations) if relations is not None else None
        names = list(dict.fromkeys(entities))
        found = self._triplets_around(names, direction, limit)
        out: dict[str, list[Triplet]] = {}
        cut: set[str] = set()
        for name in names:
            kept = {t.as_tuple: t for t in found.triplets.get(name, ()) if wanted is None or t.relation in wanted}
            ordered = sorted(kept.values(), key=canonical_key)
            if limit is not None and len(ordered) > limit:
                ordered = ordered[:limit]
                cut.add(name)
            if name in found.truncated:
                cut.add(name)
            out[name] = ordered
        return NeighbourBatch(out, cut)

    def relations_of(self, entities: Sequence[str], direction: Direction = "both") -> dict[str, list[str]]:
        """The distinct relations on each entity's triplets (within the store's per-entity limit), sorted."""
        batch = self.neighbours_batch(entities, direction, None, self.limit_per_entity)
        return {e: sorted({t.relation for t in trips}) for e, trips in batch.triplets.items()}

    def subgraph_around(
        self,
        seeds: Sequence[str],
        hops: int | None = None,
        limit_per_entity: int | None = None,
        max_triplets: int | None = None,
    ) -> Neighbourhood:
        """The bounded k-hop neighbourhood of `seeds`, in canonical order; None takes the store's own setting.

        Breadth-first, one batched neighbours call per hop, so the in-memory graph
        and a SPARQL endpoint expand the same way and give the same subgraph for
        the same data when no limit cuts.  A cut hub keeps `limit_per_entity`
        triplets: the first in canonical order in memory, the first the store
        returns (its index order, stable for a given store) on an endpoint; the
        note names the hubs.
        """
        hops = self.hops if hops is None else hops
        limit = self.limit_per_entity if limit_per_entity is None else limit_per_entity
        cap = self.max_triplets if max_triplets is None else max_triplets
        present = [s for s in dict.fromkeys(seeds) if self.has_entity(s)]
        kept: dict[tuple[str, str, str], Triplet] = {}
        notes: list[str] = []
        cut_entities: list[str] = []
        capped = False
        visited: set[str] = set(present)
        frontier = list(present)
        for _ in range(max(hops, 0)):
            if not frontier or capped:
                break
            batch = self.neighbours_batch(frontier, "both", None, limit)
            cut_entities.extend(e for e in frontier if e in batch.truncated)
            nxt: list[str] = []
            for ent in frontier:
                for t in batch.triplets.get(ent, ()):
                    if t.as_tuple in kept:
                        continue
                    if cap is not None and len(kept) >= cap:
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
                f"{limit} triplets; kept {limit} of each: {shown}"
            )
        if capped:
            notes.append(f"the {hops}-hop neighbourhood was cut at {cap} triplets (max_triplets)")
        graph = self._neighbourhood_graph(sorted(kept), f"{self.name} ({hops}-hop neighbourhood)")
        return Neighbourhood(graph, present, hops, truncated=bool(cut_entities) or capped, notes=notes)

    # ------------------------------------------------- triplets by id
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


def is_local_graph(graph: object) -> bool:
    """True for a graph whose triplets are all in memory (methods may run on it directly)."""
    return bool(getattr(graph, "is_local", True))
