"""One fact of a graph: (head, relation, tail) with a stable id.

Its own module so that the graph-store interface and every store can name it
without importing the in-memory graph.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable


@dataclass(frozen=True, slots=True)
class Triplet:
    """A (head, relation, tail) fact with a stable id inside its graph."""

    id: int
    head: str
    relation: str
    tail: str

    @property
    def as_tuple(self) -> tuple[str, str, str]:
        return (self.head, self.relation, self.tail)

    def linearized(self) -> str:
        """The DoG surface form ``head -> relation -> tail``."""
        return f"{self.head} -> {self.relation} -> {self.tail}"

    def other(self, entity: str) -> str:
        """The entity at the other end of this triplet from `entity`."""
        return self.tail if entity == self.head else self.head

    def touches(self, entities: Iterable[str] | set[str]) -> bool:
        ents = entities if isinstance(entities, (set, frozenset)) else set(entities)
        return self.head in ents or self.tail in ents
