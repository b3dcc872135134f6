"""Cut a graph down to a prompt budget of K triplets, keeping it connected.

The DoG paper (Appendix B) ranks every triplet ``(head, relation, tail)`` by
cosine similarity with the question and adds them best first; with each one
it also adds the triplets on the path from the query entity to its head or
tail, so the kept graph stays connected to a topic entity and a reasoning
chain can actually reach every fact the model sees.  This stops at K.

Without an embedding model the ranking falls back to lexical overlap (token
Jaccard) and the `PruneResult.note` says so, for the trace.

At whole-graph scale two things are added (`kgqa_core.graph.hub_caps`): the
candidate pool is gathered breadth-first with at most `max_per_entity`
triplets from any one entity (ranked by relation relevance), so a hub's
thousands of edges cannot fill the pool before the topic's other
neighbours are reached, and inside a hub the relations the question asks
for ("which words describe" is ``has_tags``) are kept first.  A triplet's
score can also mix in its relation's relevance (`relation_weight`); the
default 0 keeps the paper's ranking: with MiniLM, relation names alone score
within a few hundredths of each other (0.44-0.49 for four of the five
relations of the solar-system sample), so mixing them in mostly adds every
triplet of a common relation, and no dev measurement supports a weight yet.
Cuts are noted.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import networkx as nx
import numpy as np

from .. import progress

from .embeddings import Embedder, load_embedder
from .hub_caps import HubCut, LazyRelevance, capped_neighbours, content_stems, relation_relevance
from .knowledge_graph import Triplet
from .words import STOP_WORDS

_WORD = re.compile(r"[^\W_]+")
NEAR_SHARE = 0.25  # of an embedding pool: the candidates nearest the topic entities, whatever their words
_STOP = STOP_WORDS | {"why"}


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


def _reachable(
    graph: object, topics: Sequence[str], limit: int, per_entity: int | None = None,
    relevance: dict[str, float] | None = None, question: str = "", cuts: list[HubCut] | None = None,
) -> tuple[list[Triplet], bool]:
    """Triplets reachable from the topic entities, nearest first (BFS), at most `limit`.

    With `per_entity`, an entity contributes at most that many triplets
    (`capped_neighbours`, ranked by `relevance`); each cut goes to `cuts`.
    Uses only `GraphView.neighbours`, so any backend can be pruned.
    """
    seen_e = set(topics)
    seen_t: set[int] = set()
    out: list[Triplet] = []
    queue = deque(topics)
    stems = content_stems(question) if question else None
    while queue:
        ent = queue.popleft()
        if per_entity is None:
            around = graph.neighbours(ent)  # type: ignore[attr-defined]
        else:
            around, cut = capped_neighbours(graph, ent, per_entity, relevance or {}, stems)
            if cut is not None and cuts is not None:
                cuts.append(cut)
        for t in around:
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


@progress.in_phase(progress.CONTEXT_RANKING)
def prune_to_budget(
    graph: object,
    question: str,
    topic_entities: Sequence[str],
    max_triplets: int = 120,
    embedder: Embedder | str | None = "auto",
    max_candidates: int = 2000,
    max_per_entity: int | None = 200,
    relation_weight: float = 0.0,
    embed_pool: int | None = None,
) -> PruneResult:
    """Keep at most `max_triplets` triplets most relevant to `question`, all connected.

    `embedder`: ``"auto"`` loads the packaged MiniLM model (lexical fallback if
    absent), an `Embedder` is used as given, None forces lexical ranking.
    Only triplets reachable from a topic entity are candidates; on very large
    graphs the `max_candidates` nearest ones (breadth-first, at most
    `max_per_entity` from one entity; None: no cap) are ranked.  A triplet's
    score is ``(1 - relation_weight) * similarity + relation_weight *
    relation relevance`` (`relation_weight` 0: the paper's triplet-only ranking).
    `embed_pool`: embed only that many candidates (`embedding_pool`: the nearest quarter and the best by
    relation relevance and word overlap), the rest ranked below them (None: embed every candidate).
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

    if embedder == "auto":
        emb: Embedder | None = load_embedder()
    elif isinstance(embedder, str):
        emb = load_embedder(embedder)
    else:
        emb = embedder
    relevance: dict[str, float] = {}
    if topics:
        if max_per_entity is not None or relation_weight:
            rels = {t.relation for e in topics for t in graph.neighbours(e)}  # type: ignore[attr-defined]
            relevance = relation_relevance(question, sorted(rels), emb)
        cuts: list[HubCut] = []
        lazy = LazyRelevance(relevance, question, emb)
        candidates, capped = _reachable(graph, topics, max_candidates, max_per_entity, lazy, question, cuts)
        relevance = dict(lazy)
        if cuts:
            shown = "; ".join(c.note for c in cuts[:5]) + (f"; and {len(cuts) - 5} more" if len(cuts) > 5 else "")
            notes.append(f"hub entities cut to {max_per_entity} triplets each, most relevant relations first: {shown}")
        if capped:
            notes.append(f"ranked only the {max_candidates} triplets nearest the topic entities")
    else:
        candidates = list(graph)[:max_candidates]  # type: ignore[call-overload]
        notes.append("no topic entity in the graph: kept the top-ranked triplets without connectivity")
    if emb is not None:
        pooled = embed_pool is not None and len(candidates) > embed_pool
        pool = (embedding_pool(question, candidates, embed_pool, relevance, emb) if pooled
                else list(range(len(candidates))))
        vecs = emb.encode([triplet_text(candidates[i]) for i in pool])
        qvec = emb.encode([question])[0]
        scores = np.full(len(candidates), -2.0, dtype=np.float32)  # below every cosine: kept only as a path
        scores[pool] = vecs @ qvec
        method = "embedding"
        notes.insert(0, f"ranked {len(pool)} of {len(candidates)} candidate triplets by cosine similarity with "
                        f"the question ({emb.name}): the nearest, and those whose relation and words are closest"
                     if pooled else
                     f"ranked {len(candidates)} triplets by cosine similarity with the question ({emb.name})")
    else:
        scores = lexical_scores(question, candidates)
        method = "lexical"
        notes.insert(
            0,
            f"no embedding model available: ranked {len(candidates)} triplets by word overlap with the question",
        )
    if relation_weight and candidates:
        missing = sorted({t.relation for t in candidates} - set(relevance))
        if missing:
            relevance.update(relation_relevance(question, missing, emb))
        rel = np.array([relevance.get(t.relation, 0.0) for t in candidates], dtype=np.float32)
        scores = (1.0 - relation_weight) * np.asarray(scores, dtype=np.float32) + relation_weight * rel
        notes.insert(1, f"relation names weigh {relation_weight:g} of each score")
    score_of = {t.id: float(s) for t, s in zip(candidates, scores)}
    order = sorted(range(len(candidates)), key=lambda i: (-float(scores[i]), candidates[i].id))

    if not topics:
        kept = [candidates[i].id for i in order[:max_triplets]]
    else:
        kept = _grow_connected(candidates, order, score_of, topics, max_triplets)
    notes.append(f"kept {len(kept)} of {total} triplets (budget {max_triplets})")
    return PruneResult(kept, method, "; ".join(notes), {tid: score_of[tid] for tid in kept})


def embedding_pool(question: str, candidates: Sequence[Triplet], size: int, relevance: dict[str, float],
                   embedder: Embedder | None) -> list[int]:
    """Indices of the candidates worth embedding: the nearest quarter of `size`, then the best by a cheap score.

    Embedding every candidate of a whole KB's neighbourhood (2,000 triplets:
    10-35 s of MiniLM on this CPU) to show the prompt 40 of them is most of a
    question's time outside the model.  The cheap score is the relation's
    relevance (one embedding per distinct relation) plus the word overlap of
    the triplet with the question (an entity the question names); both are
    read from the graph and the question, no word list.
    """
    near = list(range(min(len(candidates), int(size * NEAR_SHARE))))
    rel = LazyRelevance(relevance, question, embedder)
    rel.score(sorted({t.relation for t in candidates}))
    lex = lexical_scores(question, candidates)
    cheap = [float(rel.get(t.relation, 0.0)) + float(lex[i]) for i, t in enumerate(candidates)]
    chosen = set(near)
    for i in sorted(range(len(candidates)), key=lambda i: (-cheap[i], i)):
        if len(chosen) >= size:
            break
        chosen.add(i)
    return sorted(chosen)


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

