"""The query-centric subgraph G_q (DoG §2.3, Eq. 1).

G_q starts as every triplet that touches a topic entity (as head or tail);
after a triplet is generated, every triplet touching its head or tail joins.
Equivalently, G_q is the set of triplets touching a visited entity, which is
how it is kept here: a set of visited entities plus the triplet ids touching
them.  Each beam owns its own copy, because different chains visit different
entities.
"""

from __future__ import annotations

from typing import Any, Iterable


class QueryCentricSubgraph:
    """Visited entities and the triplets of `graph` that touch them."""

    def __init__(self, graph: Any, topic_entities: Iterable[str]) -> None:
        self.graph = graph
        self.topics: list[str] = [e for e in dict.fromkeys(topic_entities) if graph.has_entity(e)]
        self.visited: set[str] = set()
        self._ids: set[int] = set()
        for ent in self.topics:
            self._visit(ent)

    def _visit(self, entity: str) -> bool:
        if entity in self.visited:
            return False
        self.visited.add(entity)
        self._ids.update(t.id for t in self.graph.neighbours(entity))
        return True

    @property
    def triplet_ids(self) -> list[int]:
        return sorted(self._ids)

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, triplet_id: object) -> bool:
        return triplet_id in self._ids

    def triplets(self) -> list[Any]:
        return self.graph.triplets_by_ids(self.triplet_ids)

    def expand(self, triplet: Any) -> list[str]:
        """Add the neighbours of `triplet`'s head and tail; return the newly visited entities."""
        return [e for e in dict.fromkeys((triplet.head, triplet.tail)) if self._visit(e)]

    def copy(self) -> "QueryCentricSubgraph":
        other = QueryCentricSubgraph.__new__(QueryCentricSubgraph)
        other.graph = self.graph
        other.topics = list(self.topics)
        other.visited = set(self.visited)
        other._ids = set(self._ids)
        return other
