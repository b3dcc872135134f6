"""Option pools for the search (Eq. 6) and answer (Eq. 8) subtasks.

A search option is a pair (semantic node, relation) whose expansion exists in
the real graph: following ``relation`` from the node's entities, forwards or
backwards (``relation (reverse)``), reaches at least one triplet not yet in
G_k.  Only options the graph can execute are offered, so the model can never
retrieve a fact the graph lacks.  Large pools are cut to ``max_pool`` by
similarity between the question and the relation name (sentence embedder when
available, otherwise fuzzy word overlap); the cut is reported to the trace.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..graph.knowledge_graph import KnowledgeGraph
from .abstract_structure import AbstractStructure, Link

NONE_OPTION = "None"


@dataclass
class SearchOption:
    """Expand ``node_id`` along ``relation`` (backwards when ``inverse``)."""

    node_id: str
    relation: str
    inverse: bool
    links: list[Link] = field(default_factory=list)
    truncated_from: int = 0  # number of links before the per-node cap, 0 when not cut

    @property
    def relation_label(self) -> str:
        return f"{self.relation} (reverse)" if self.inverse else self.relation

    @property
    def text(self) -> str:
        return f"{self.node_id} + {self.relation_label}"

    @property
    def entities(self) -> list[str]:
        return list(dict.fromkeys(link.entity for link in self.links))


@dataclass
class AnswerOption:
    """Answer with every entity at ``node_id``."""

    node_id: str
    text: str


@dataclass
class RankedPool:
    options: list[SearchOption]
    total: int
    method: str = ""  # "embedding" / "lexical" when the pool was cut

    @property
    def cut(self) -> bool:
        return self.total > len(self.options)


def search_options(
    graph: KnowledgeGraph,
    structure: AbstractStructure,
    max_depth: int = 3,
    max_node_triplets: int = 1000,
) -> list[SearchOption]:
    """Every expansion of S_k the graph supports, in node order then relation name.

    Literal nodes (``num``/``date``) are not expanded: following a year back
    to every film of that year is never a reasoning step, only a flood.
    """
    used = set(structure.triplet_ids())
    root = structure.root_id
    out: list[SearchOption] = []
    for node in list(structure.nodes.values()):
        if node.depth >= max_depth or node.type in ("num", "date"):
            continue
        groups: dict[tuple[str, bool], list[Link]] = defaultdict(list)
        for entity in node.entities:
            for t in graph.neighbours(entity):
                if t.id in used or t.head == t.tail:
                    continue
                if t.head == entity:
                    key, other = (t.relation, False), t.tail
                else:
                    key, other = (t.relation, True), t.head
                if other == root:
                    continue  # G_k is a tree rooted at the start entity
                groups[key].append(Link(entity, other, t.id))
        for (relation, inverse) in sorted(groups, key=lambda k: (k[0], k[1])):
            if structure.has_expansion(node.id, relation, inverse):
                continue
            links = groups[(relation, inverse)]
            truncated = 0
            if len(links) > max_node_triplets:
                truncated = len(links)
                links = sorted(links, key=lambda link: link.triplet_id)[:max_node_triplets]
            out.append(SearchOption(node.id, relation, inverse, links, truncated))
    return out


def relation_words(relation: str) -> str:
    """``tv.tv_program.regular_cast`` -> ``tv program regular cast``."""
    words = re.sub(r"[._/:#\-]+", " ", relation)
    words = re.sub(r"([a-z])([A-Z])", r"\1 \2", words)
    return " ".join(words.split()).lower()


def rank_pool(
    question: str,
    options: list[SearchOption],
    max_pool: int,
    embed: Callable[[list[str]], Sequence[Sequence[float]]] | None = None,
) -> RankedPool:
    """Keep the ``max_pool`` options whose relation reads most like the question.

    The survivors keep their original order (the scorer debiases position
    anyway, and a stable order makes traces easy to compare).
    """
    if len(options) <= max_pool:
        return RankedPool(list(options), len(options))
    texts = [f"{relation_words(o.relation)}{' of' if o.inverse else ''}" for o in options]
    scores: list[float]
    method = "lexical"
    if embed is not None:
        try:
            vectors = embed([question, *texts])
            q = vectors[0]
            scores = [float(sum(a * b for a, b in zip(q, v))) for v in vectors[1:]]
            method = "embedding"
        except Exception:  # no or broken embedder: rank lexically instead
            embed = None
    if embed is None:
        from rapidfuzz import fuzz

        scores = [fuzz.token_set_ratio(question.lower(), t) / 100.0 for t in texts]
    order = sorted(range(len(options)), key=lambda i: (-scores[i], i))[:max_pool]
    kept = [options[i] for i in sorted(order)]
    return RankedPool(kept, len(options), method)


def answer_options(structure: AbstractStructure, used_positions: set[str]) -> list[AnswerOption]:
    """Nodes that may hold the answer: not the root, not a constraint position, not empty.

    ``topic`` nodes (ids without meaning, Freebase CVTs) only join facts and
    are no answer a user can read, so they are offered only when S_k has no
    other candidate.
    """
    out = []
    for node in structure.nodes.values():
        if node.parent is None or node.id in used_positions or not node.links:
            continue
        out.append((node.type, AnswerOption(node.id, f"{node.parent} + {node.relation_label} -> {node.id}")))
    readable = [o for t, o in out if t != "topic"]
    return readable or [o for _, o in out]
