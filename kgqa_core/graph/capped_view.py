"""The graph as DoG's query-centric subgraph walks it: every entity's neighbourhood cut to a cap.

DoG's G_q grows by all triplets touching the entities a chain reaches
(§2.3).  On a small graph that is the whole neighbourhood; on a whole KB a
genre or a year touches thousands of triplets, and a trie over all of them
costs seconds per step (docs/benchmarks.md, "Whole KB: hubs, G_q and the
trie").  `HubCappedView` reads the same graph with each entity's triplets cut
to `cap` by `capped_neighbours` (relations the question names first), so the
walkable region is bounded at any graph size while staying independent of the
prompt's triplet budget: a chain may write a triplet the prompt did not show.

Triplet ids are the underlying graph's, so chains, faithfulness checks and
the UI resolve them against the graph the user loaded.
"""

from __future__ import annotations

from typing import Any, Iterable

from .. import progress
from .hub_caps import HubCut, LazyRelevance, capped_neighbours, content_stems


class HubCappedView:
    """`graph` with each entity's neighbours cut to `cap`, ranked for `question`; the cuts it made."""

    def __init__(self, graph: Any, question: str, cap: int, embedder: Any = None) -> None:
        self.graph = graph
        self.name = getattr(graph, "name", "graph")
        self.cap = cap
        self.cuts: list[HubCut] = []
        self._relevance = LazyRelevance({}, question, embedder)
        self._stems = content_stems(question)
        self._neighbours: dict[str, list[Any]] = {}

    def neighbours(self, entity: str) -> list[Any]:
        found = self._neighbours.get(entity)
        if found is None:
            found = self._cut(entity)
            self._neighbours[entity] = found
        return found

    def _cut(self, entity: str) -> list[Any]:
        triplets = self.graph.neighbours(entity)
        if len(triplets) <= self.cap:
            return list(triplets)
        with progress.phase(progress.CONTEXT_RANKING):  # a hub's neighbourhood ranked for the question
            self._relevance.score([t.relation for t in triplets])
            kept, cut = capped_neighbours(self.graph, entity, self.cap, self._relevance, self._stems)
        if cut is not None:
            self.cuts.append(cut)
        return kept

    def has_entity(self, entity: str) -> bool:
        return self.graph.has_entity(entity)

    def triplet(self, triplet_id: int) -> Any:
        return self.graph.triplet(triplet_id)

    def triplets_by_ids(self, ids: Iterable[int]) -> list[Any]:
        return self.graph.triplets_by_ids(ids)

    def __len__(self) -> int:
        return len(self.graph)

    def cut_note(self, limit: int = 5) -> str:
        """One line for the trace naming the entities whose neighbourhood was cut ("" when none)."""
        if not self.cuts:
            return ""
        shown = "; ".join(c.note for c in self.cuts[:limit])
        more = f"; and {len(self.cuts) - limit} more" if len(self.cuts) > limit else ""
        return f"query-centric subgraph: hub entities cut to {self.cap} triplets each, most relevant relations first: {shown}{more}"
