"""The in-memory knowledge graph every method reasons over.

Code outside `kgqa_core.graph` reaches a graph through the `GraphStore`
interface (`store.py`: batched neighbours with limits, relations, labels,
search, a bounded k-hop subgraph); `GraphView` is the per-triplet view a
method uses on the graph it runs on.  A remote store (`sparql.SparqlGraphStore`)
hands methods its fetched neighbourhood as a `KnowledgeGraph`, so methods run
unchanged.  `KnowledgeGraph` is the in-memory implementation over
a `networkx.MultiDiGraph`: parallel relations between the same pair of
entities survive as separate edges, and direction is kept.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from typing import Iterable, Iterator, Protocol, Sequence, runtime_checkable

import networkx as nx

from .name_search import search_entity_names
from .store import GraphStore, NeighbourBatch
from .triplet import Triplet

__all__ = ["GraphView", "KnowledgeGraph", "Triplet"]


@runtime_checkable
class GraphView(Protocol):
    """The small interface methods use to reach a graph."""

    name: str

    def __len__(self) -> int: ...

    def triplet(self, triplet_id: int) -> Triplet: ...

    def triplets_by_ids(self, ids: Iterable[int]) -> list[Triplet]: ...

    def neighbours(self, entity: str) -> list[Triplet]: ...

    def has_entity(self, entity: str) -> bool: ...

    def find(self, head: str, relation: str, tail: str) -> Triplet | None: ...

    def search_entities(self, query: str, limit: int = 10) -> list[tuple[str, float]]: ...

    @property
    def fingerprint(self) -> str: ...


class KnowledgeGraph(GraphStore):
    """An indexed set of triplets, deduplicated, with stable integer ids.

    Ids are assigned in insertion order and never reused, so a trace that
    cites triplet 17 still means the same fact after another triplet is
    removed (edits in the Explore page keep earlier traces meaningful).
    """

    def __init__(self, name: str = "graph") -> None:
        self.name = name
        self.nx: nx.MultiDiGraph = nx.MultiDiGraph()
        self._triplets: dict[int, Triplet] = {}
        self._by_key: dict[tuple[str, str, str], int] = {}
        self._adjacent: dict[str, list[int]] = defaultdict(list)
        self._next_id = 0
        self._fingerprint: str | None = None
        self.duplicates_dropped = 0
        self.source: str = ""
        self.notes: list[str] = []

    # ------------------------------------------------------------ building
    @classmethod
    def from_triplets(
        cls, triplets: Iterable[Sequence[str]], name: str = "graph"
    ) -> "KnowledgeGraph":
        graph = cls(name=name)
        for h, r, t in triplets:
            graph.add(h, r, t)
        return graph

    def add(self, head: str, relation: str, tail: str) -> Triplet:
        """Add a triplet; an exact duplicate returns the existing one (and is counted)."""
        key = (head, relation, tail)
        existing = self._by_key.get(key)
        if existing is not None:
            self.duplicates_dropped += 1
            return self._triplets[existing]
        tid = self._next_id
        self._next_id += 1
        trip = Triplet(tid, head, relation, tail)
        self._triplets[tid] = trip
        self._by_key[key] = tid
        self._adjacent[head].append(tid)
        if tail != head:
            self._adjacent[tail].append(tid)
        self.nx.add_edge(head, tail, key=tid, relation=relation)
        self._fingerprint = None
        return trip

    def remove(self, triplet_id: int) -> Triplet:
        trip = self._triplets.pop(triplet_id)
        del self._by_key[trip.as_tuple]
        for ent in {trip.head, trip.tail}:
            adj = self._adjacent[ent]
            adj.remove(triplet_id)
            if not adj:
                del self._adjacent[ent]
        self.nx.remove_edge(trip.head, trip.tail, key=triplet_id)
        for ent in {trip.head, trip.tail}:
            if self.nx.has_node(ent) and self.nx.degree(ent) == 0:
                self.nx.remove_node(ent)
        self._fingerprint = None
        return trip

    def copy(self, name: str | None = None) -> "KnowledgeGraph":
        """A deep copy that keeps triplet ids (for counterfactual edits)."""
        other = KnowledgeGraph(name=name or self.name)
        for tid in sorted(self._triplets):
            t = self._triplets[tid]
            other._next_id = tid
            other.add(t.head, t.relation, t.tail)
        other._next_id = self._next_id
        other.source = self.source
        other.notes = list(self.notes)
        return other

    # ------------------------------------------------------------- reading
    def __len__(self) -> int:
        return len(self._triplets)

    def __iter__(self) -> Iterator[Triplet]:
        return iter(self._triplets.values())

    def __contains__(self, item: object) -> bool:
        if isinstance(item, Triplet):
            return item.as_tuple in self._by_key
        if isinstance(item, tuple) and len(item) == 3:
            return item in self._by_key
        return False

    @property
    def triplets(self) -> list[Triplet]:
        return list(self._triplets.values())

    @property
    def entities(self) -> list[str]:
        return list(self._adjacent.keys())

    @property
    def relations(self) -> list[str]:
        return sorted({t.relation for t in self._triplets.values()})

    def neighbours(self, entity: str) -> list[Triplet]:
        """Every triplet with `entity` as head or tail (both directions, Eq. 1)."""
        return [self._triplets[i] for i in self._adjacent.get(entity, ())]

    def out_triplets(self, entity: str) -> list[Triplet]:
        return [t for t in self.neighbours(entity) if t.head == entity]

    def in_triplets(self, entity: str) -> list[Triplet]:
        return [t for t in self.neighbours(entity) if t.tail == entity]

    def degree(self, entity: str) -> int:
        return len(self._adjacent.get(entity, ()))

    def has_entity(self, entity: str) -> bool:
        return entity in self._adjacent

    def find(self, head: str, relation: str, tail: str) -> Triplet | None:
        tid = self._by_key.get((head, relation, tail))
        return self._triplets[tid] if tid is not None else None

    def search_entities(self, query: str, limit: int = 10) -> list[tuple[str, float]]:
        """Entities whose names match `query` (exact, case-insensitive, fuzzy), best first."""
        return search_entity_names(query, self.entities, limit=limit)

    # ------------------------------------------------- GraphStore interface
    is_local = True  # every triplet is in memory; methods may run on it directly

    def _triplets_around(self, entities: list[str], direction: str, limit: int | None) -> NeighbourBatch:
        """Every triplet on each entity in `direction` (nothing is cut here: `neighbours_batch` applies `limit`)."""
        return NeighbourBatch({
            ent: [t for t in self.neighbours(ent)
                  if direction == "both" or (t.head if direction == "out" else t.tail) == ent]
            for ent in entities
        })

    def labels(self, entities: Sequence[str]) -> dict[str, str]:
        """An uploaded graph names its entities directly: each entity is its own label."""
        return {e: e for e in entities}

    def _neighbourhood_graph(self, triplets: list[tuple[str, str, str]], name: str) -> "KnowledgeGraph":
        return KnowledgeGraph.from_triplets(triplets, name=name)

    def subgraph(self, ids: Iterable[int], name: str | None = None) -> "KnowledgeGraph":
        """A graph holding only the given triplets, with their original ids."""
        sub = KnowledgeGraph(name=name or f"{self.name} (subgraph)")
        for tid in sorted(set(ids)):
            if tid in self._triplets:
                t = self._triplets[tid]
                sub._next_id = tid
                sub.add(t.head, t.relation, t.tail)
        sub._next_id = self._next_id
        return sub

    def entities_of(self, ids: Iterable[int]) -> set[str]:
        out: set[str] = set()
        for t in self.triplets_by_ids(ids):
            out.add(t.head)
            out.add(t.tail)
        return out

    @property
    def fingerprint(self) -> str:
        """A content hash: the same set of triplets gives the same fingerprint."""
        if self._fingerprint is None:
            h = hashlib.sha256()
            for key in sorted(self._by_key):
                h.update("\x1f".join(key).encode("utf-8"))
                h.update(b"\x1e")
            self._fingerprint = h.hexdigest()[:16]
        return self._fingerprint

    def __repr__(self) -> str:
        return (
            f"KnowledgeGraph(name={self.name!r}, triplets={len(self)}, "
            f"entities={len(self._adjacent)})"
        )
