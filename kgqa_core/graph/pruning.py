"""Cut a graph down to a prompt budget of K triplets, keeping it connected.

The DoG paper (Appendix B) ranks every triplet ``(head, relation, tail)`` by
cosine similarity with the question and adds them best first; with each one
it also adds the triplets on the path from the query entity to its head or
tail, so the kept graph stays connected to a topic entity and a reasoning
chain can actually reach every fact the model sees.  This stops at K.

Without an embedding model the ranking falls back to lexical overlap (token
Jaccard) and the `PruneResult.note` says so, for the trace.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import networkx as nx
import numpy as np

from .embeddings import Embedder, load_embedder
from .knowledge_graph import Triplet

_WORD = re.compile(r"[^\W_]+")
_STOP = frozenset(
    "a an the of in on at to for from by with and or is are was were be what which who whom whose "
    "when where why how that this these those did do does has have had it its as".split()
)


@dataclass
class PruneResult:
    """The kept triplet ids (in the order they were added) and how they were chosen.

    ``method`` is ``"embedding"``, ``"lexical"`` or ``"none"`` (the graph fit);
    ``scores`` maps each kept triplet id to its similarity with the question.
    """

    triplet_ids: list[int]
    method: str
    note: str
    scores: dict[int, float] = field(default_factory=dict)


def triplet_text(t: Triplet) -> str:
    """The text embedded for a triplet, as in the paper: ``(head, relation, tail)``."""
    return f"({t.head}, {t.relation}, {t.tail})"


def _tokens(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.casefold()) if w not in _STOP}


def lexical_scores(question: str, triplets: Sequence[Triplet]) -> np.ndarray:
    """Token Jaccard between the question and each triplet (relations split on _ and .)."""
    q = _tokens(question)
    out = np.zeros(len(triplets), dtype=np.float32)
    if not q:
        return out
    for i, t in enumerate(triplets):
        toks = _tokens(f"{t.head} {t.relation} {t.tail}")
        if toks:
            out[i] = len(q & toks) / len(q | toks)
    return out


def _reachable(graph: object, topics: Sequence[str], limit: int) -> tuple[list[Triplet], bool]:
    """Triplets reachable from the topic entities, nearest first (BFS), at most `limit`.

    Uses only `GraphView.neighbours`, so any backend can be pruned.
    """
    seen_e = set(topics)
    seen_t: set[int] = set()
    out: list[Triplet] = []
    queue = deque(topics)
    while queue:
        ent = queue.popleft()
        for t in graph.neighbours(ent):  # type: ignore[attr-defined]
            if t.id in seen_t:
                continue
            seen_t.add(t.id)
            out.append(t)
            if len(out) >= limit:
                return out, True
            other = t.other(ent)
            if other not in seen_e:
                seen_e.add(other)
                queue.append(other)
    return out, False


def prune_to_budget(
    graph: object,
    question: str,
    topic_entities: Sequence[str],
    max_triplets: int = 120,
    embedder: Embedder | str | None = "auto",
    max_candidates: int = 2000,
) -> PruneResult:
    """Keep at most `max_triplets` triplets most relevant to `question`, all connected.

    `embedder`: ``"auto"`` loads the packaged MiniLM model (lexical fallback if
    absent), an `Embedder` is used as given, None forces lexical ranking.
    Only triplets reachable from a topic entity are candidates; on very large
    graphs the `max_candidates` nearest ones (breadth-first) are ranked.
    """
    total = len(graph)  # type: ignore[arg-type]
    if total <= max_triplets:
        all_ids = [t.id for t in graph]  # type: ignore[attr-defined]
        return PruneResult(all_ids, "none", f"the graph has {total} triplets, within the budget of {max_triplets}: kept all")

    notes: list[str] = []
    topics = [e for e in dict.fromkeys(topic_entities) if graph.has_entity(e)]  # type: ignore[attr-defined]
    missing = [e for e in topic_entities if not graph.has_entity(e)]  # type: ignore[attr-defined]
    if missing:
        notes.append(f"topic entities not in the graph were ignored: {', '.join(missing)}")

    if topics:
        candidates, capped = _reachable(graph, topics, max_candidates)
        if capped:
            notes.append(f"ranked only the {max_candidates} triplets nearest the topic entities")
    else:
        candidates = list(graph)[:max_candidates]  # type: ignore[call-overload]
        notes.append("no topic entity in the graph: kept the top-ranked triplets without connectivity")

    if embedder == "auto":
        emb: Embedder | None = load_embedder()
    elif isinstance(embedder, str):
        emb = load_embedder(embedder)
    else:
        emb = embedder
    if emb is not None:
        vecs = emb.encode([triplet_text(t) for t in candidates])
        qvec = emb.encode([question])[0]
        scores = vecs @ qvec
        method = "embedding"
        notes.insert(0, f"ranked {len(candidates)} triplets by cosine similarity with the question ({emb.name})")
    else:
        scores = lexical_scores(question, candidates)
        method = "lexical"
        notes.insert(
            0,
            f"no embedding model available: ranked {len(candidates)} triplets by word overlap with the question",
        )
    score_of = {t.id: float(s) for t, s in zip(candidates, scores)}
    order = sorted(range(len(candidates)), key=lambda i: (-float(scores[i]), candidates[i].id))

    if not topics:
        kept = [candidates[i].id for i in order[:max_triplets]]
    else:
        kept = _grow_connected(candidates, order, score_of, topics, max_triplets)
    notes.append(f"kept {len(kept)} of {total} triplets (budget {max_triplets})")
    return PruneResult(kept, method, "; ".join(notes), {tid: score_of[tid] for tid in kept})


def _grow_connected(
    candidates: list[Triplet],
    order: Iterable[int],
    score_of: dict[int, float],
    topics: Sequence[str],
    budget: int,
) -> list[int]:
    """Add triplets best first, each with its path to the nearest topic entity (Appendix B)."""
    # Undirected simple graph over the candidates; between two entities the
    # best-scored triplet stands for the pair, and a tiny weight penalty makes
    # shortest paths prefer relevant intermediate triplets among equal-length ones.
    und = nx.Graph()
    for t in candidates:
        if t.head == t.tail:
            continue
        s = score_of[t.id]
        data = und.get_edge_data(t.head, t.tail)
        if data is None or s > data["score"]:
            und.add_edge(t.head, t.tail, tid=t.id, score=s, weight=1.0 + 1e-3 * (1.0 - s))
    for ent in topics:
        und.add_node(ent)
    _, paths = nx.multi_source_dijkstra(und, set(topics), weight="weight")

    kept: dict[int, None] = {}
    for i in order:
        if len(kept) >= budget:
            break
        t = candidates[i]
        if t.id in kept:
            continue
        ends = [e for e in (t.head, t.tail) if e in paths]
        if not ends:
            continue  # not connected to any topic entity
        end = min(ends, key=lambda e: len(paths[e]))
        path = paths[end]
        needed = [und[u][v]["tid"] for u, v in zip(path, path[1:])]
        new = [tid for tid in dict.fromkeys(needed + [t.id]) if tid not in kept]
        if len(kept) + len(new) > budget:
            continue  # a cheaper (closer) triplet further down may still fit
        for tid in new:
            kept[tid] = None
    return list(kept)
