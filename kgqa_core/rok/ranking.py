"""PageRank buckets: which main paths RoK keeps (§4.2.1, steps a-c).

PageRank runs over the path subgraph (undirected: the paper's transition
matrix moves from a node to every node connected to it; parallel relations
count as separate links).  Paths are put in buckets by how many key
entities they contain; the top-k by mean PageRank are taken from the
fullest bucket first, then the next, until k paths are chosen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import networkx as nx

from .. import progress
from ..graph.knowledge_graph import KnowledgeGraph
from .paths import KGPath


@dataclass
class RankedPath:
    index: int  # position in the enumeration order
    path: KGPath
    key_count: int
    mean_pagerank: float
    selected: bool = False
    asked: bool = False  # a question entity's path about the relation the question asks for (`must_cover`)


@dataclass
class PathRanking:
    pagerank: dict[str, float] = field(default_factory=dict)
    ranked: list[RankedPath] = field(default_factory=list)  # bucket desc, mean PR desc
    buckets: dict[int, list[int]] = field(default_factory=dict)  # key count -> path indices

    @property
    def selected(self) -> list[RankedPath]:
        """The chosen paths, the question entity's asked-about paths first (the answer reads them first)."""
        chosen = [r for r in self.ranked if r.selected]
        return [r for r in chosen if r.asked] + [r for r in chosen if not r.asked]


@progress.in_phase(progress.CONTEXT_RANKING)
def subgraph_pagerank(graph: KnowledgeGraph, triplet_ids: Sequence[int], damping: float = 0.85) -> dict[str, float]:
    """PageRank of every entity of the subgraph made of ``triplet_ids``."""
    g = nx.MultiGraph()
    for t in graph.triplets_by_ids(triplet_ids):
        g.add_edge(t.head, t.tail, key=t.id)
    if g.number_of_nodes() == 0:
        return {}
    try:
        return dict(nx.pagerank(g, alpha=damping))
    except nx.PowerIterationFailedConvergence:
        # Never seen in practice with alpha < 1; degree centrality keeps the ranking usable.
        return dict(nx.degree_centrality(g))


@progress.in_phase(progress.CONTEXT_RANKING)
def rank_paths(
    paths: Sequence[KGPath],
    key_entities: Sequence[str],
    pagerank: dict[str, float],
    top_k: int,
    must_cover: Sequence[str] = (),
    relation_relevance: Mapping[str, float] | None = None,
    graph: KnowledgeGraph | None = None,
    cover_paths: int = 2,
) -> PathRanking:
    """Bucket paths by key entities contained, choose top_k from fullest bucket down.

    Ties in mean PageRank go to the shorter path, then to the one found first.
    Each entity of ``must_cover`` (the question's own entities) gets paths
    of its own added beyond k: when the chain of thought names wrong
    entities, their paths fill the upper buckets and would otherwise push
    the question's entity out entirely.  With `relation_relevance` (each
    relation's relevance to the question) and `graph`, always the
    `cover_paths` whose relation at the entity the question asks for most
    ("who directed X" -> ``directed_by``), shorter first, even when a chosen
    path already passes through the entity (over a whole KB that path runs
    through a genre or year hub, not the fact asked about); without, its
    best-ranked path, only when no chosen path contains it.
    """
    keys = set(key_entities)
    ranking = PathRanking(pagerank=dict(pagerank))
    rows: list[RankedPath] = []
    for i, p in enumerate(paths):
        ents = p.entities
        mean = sum(pagerank.get(e, 0.0) for e in ents) / len(ents) if ents else 0.0
        rows.append(RankedPath(i, p, len(keys.intersection(ents)), mean))
    rows.sort(key=lambda r: (-r.key_count, -r.mean_pagerank, r.path.hops, r.index))
    for r in rows:
        ranking.buckets.setdefault(r.key_count, []).append(r.index)
    for r in rows[: max(top_k, 0)]:
        r.selected = True
    for entity in must_cover:
        asks = relation_relevance is not None and graph is not None
        if not asks and any(r.selected and entity in r.path.entities for r in rows):
            continue
        own = [r for r in rows if entity in r.path.entities]
        if asks:
            def asked(r: RankedPath) -> tuple[float, int]:
                at = r.path.entities.index(entity)
                near = [s for k, s in enumerate(r.path.steps) if k in (at - 1, at)]  # the triplets at the entity
                best = max((relation_relevance.get(graph.triplet(s.triplet_id).relation, 0.0) for s in near),
                           default=0.0)
                return (-best, r.path.hops)
            own = sorted(own, key=asked)[: max(cover_paths, 1)]
            for r in own:
                r.asked = True
        else:
            own = own[:1]
        for r in own:
            r.selected = True
    ranking.ranked = rows
    return ranking
