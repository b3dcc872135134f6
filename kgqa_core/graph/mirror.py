"""A local, growing copy of the parts of a remote store someone has looked at (the Explore page).

The explorer's views (search, a neighbourhood drawn around picked entities,
relation and degree charts, an edited copy) were built for an in-memory
graph.  `StoreMirror` is one: an empty `KnowledgeGraph` that fetches an
entity's neighbourhood from the store the first time it is asked for (cut at
the store's per-entity limit, with the cut remembered), searches names in the
store, and otherwise answers from what it has fetched -- so its size and
charts describe the explored part, never the whole store.
"""

from __future__ import annotations

from typing import Any

from .knowledge_graph import KnowledgeGraph, Triplet


class StoreMirror(KnowledgeGraph):
    """The fetched part of `store`, growing as entities are expanded."""

    def __init__(self, store: Any, limit_per_entity: int | None = None) -> None:
        super().__init__(name=f"{store.name} (explored part)")
        self.store = store
        self.limit = limit_per_entity or getattr(store, "limit_per_entity", 200)
        self.source = getattr(store, "endpoint", "")
        self.fetched: set[str] = set()
        self.cut: set[str] = set()

    def fetch(self, entities: list[str]) -> None:
        """Fetch the neighbourhoods of entities not fetched yet (one batched store call)."""
        todo = [e for e in dict.fromkeys(entities) if e not in self.fetched]
        if not todo:
            return
        batch = self.store.neighbours_batch(todo, "both", None, self.limit)
        for ent in todo:
            for t in batch.triplets.get(ent, ()):
                self.add(t.head, t.relation, t.tail)
        self.fetched.update(todo)
        self.cut.update(batch.truncated)

    def neighbours(self, entity: str) -> list[Triplet]:
        self.fetch([entity])
        return super().neighbours(entity)

    def degree(self, entity: str) -> int:
        self.fetch([entity])
        return super().degree(entity)

    def has_entity(self, entity: str) -> bool:
        return super().has_entity(entity) or self.store.has_entity(entity)

    def search_entities(self, query: str, limit: int = 10) -> list[tuple[str, float]]:
        hits = self.store.search_entities(query, limit=limit)
        self.fetch([h for h, _ in hits])  # one batch, so showing each hit's degree costs no more queries
        return hits

    def copy(self, name: str | None = None) -> KnowledgeGraph:
        """An ordinary in-memory copy of the explored part (edits never reach the store)."""
        other = KnowledgeGraph(name=name or self.name)
        for t in sorted(self, key=lambda t: t.id):
            other._next_id = t.id
            other.add(t.head, t.relation, t.tail)
        other._next_id = self._next_id
        other.source = self.source
        return other
