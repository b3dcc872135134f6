"""``Search``: the triplets of the graph that can answer one sub-question.

The paper retrieves Wikipedia passages; on a knowledge graph the natural
unit is a *hop group*: the triplets that take the sub-question's subject
entity over one relation in one direction (``Heat -> directed_by -> ?`` or
``? -> directed_by -> Michael Mann``).  A sub-question asks for exactly one
such group, so Search links the subject, lists its groups and ranks them by
how well each group's relation matches the sub-question:

* the subject is the entity a placeholder was filled with (``{Ans_1}`` ->
  a film found earlier), else a topic entity the sub-question mentions,
  else the best `link_entities` candidate;
* relevance compares the sub-question with the group's own template question
  (``What is X directed by?``), the subject masked in both, by sentence
  embedding when `load_embedder` has a model, else by word overlap.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

from rapidfuzz import fuzz

from ..graph.knowledge_graph import KnowledgeGraph, Triplet
from ..graph.words import STOP_WORDS
from .patterns import Hop
from .verbalise import hop_question, relation_words

_WORD = re.compile(r"[a-z0-9]+")
_STOP = STOP_WORDS | {"x", "entities", "entity", "things", "thing", "same", "also", "both"}


@dataclass
class HopGroup:
    """The triplets taking ``subject`` over one relation in one direction."""

    subject: str
    hop: Hop
    triplets: list[Triplet]
    relevance: float = 0.0

    @property
    def key(self) -> tuple[str, bool]:
        return (self.hop.relation, self.hop.inverse)

    def target(self, t: Triplet) -> str:
        return t.head if self.hop.inverse else t.tail

    @property
    def answers(self) -> list[str]:
        return list(dict.fromkeys(self.target(t) for t in self.triplets))

    def label(self) -> str:
        arrow = f"<-{self.hop.relation}-" if self.hop.inverse else f"-{self.hop.relation}->"
        return f"{self.subject} {arrow} ?"


@dataclass
class Retrieval:
    """What Search found for one (instantiated) sub-question."""

    query: str
    subjects: list[str]
    link_method: str
    groups: list[HopGroup] = field(default_factory=list)  # best first
    triplet_ids: list[int] = field(default_factory=list)  # retrieved (capped), best group first
    bindings: dict[str, str] = field(default_factory=dict)
    found: int = 0  # triplets the subjects' matching groups hold before the max_triplets cap

    @property
    def cut_note(self) -> str:
        """Why fewer triplets were retrieved than found (a hub subject), or ''."""
        if self.found <= len(self.triplet_ids):
            return ""
        return (f"{', '.join(self.subjects)}: kept {len(self.triplet_ids)} of {self.found} triplets "
                f"(max_search_triplets), the most relevant relations first")

    def group(self, key: tuple[str, bool]) -> list[HopGroup]:
        return [g for g in self.groups if g.key == key]


def _fold(text: str) -> str:
    return text.casefold()


def _stem(word: str) -> str:
    """A crude stemmer: "starred" / "stars" -> "star", "directed" / "director" -> "direct"."""
    for suffix in ("ings", "ing", "ers", "ors", "ed", "es", "er", "or", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            word = word[: -len(suffix)]
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
                word = word[:-1]  # starr -> star
            break
    return word


def _content(text: str) -> set[str]:
    return {_stem(w) for w in _WORD.findall(text.casefold()) if w not in _STOP}


def lexical_relevance(query: str, candidate: str) -> float:
    """Word overlap (stemmed, stop words removed) plus a little fuzzy similarity, 0..1."""
    q, c = _content(query), _content(candidate)
    overlap = len(q & c) / len(c) if c else 0.0
    return 0.8 * overlap + 0.2 * fuzz.token_set_ratio(query.casefold(), candidate.casefold()) / 100.0


def mask(text: str, names: Sequence[str], token: str = "X") -> str:
    """Replace each of ``names`` in ``text`` (case-insensitive) with ``token``."""
    for name in sorted(names, key=len, reverse=True):
        if name:
            text = re.sub(re.escape(name), token, text, flags=re.I)
    return text.replace("[X]", "X")


def hop_phrasings(hop: Hop) -> list[str]:
    """Ways of asking for ``hop`` from a subject X (the subject masked as "X")."""
    words = relation_words(hop.relation)
    if hop.inverse:
        return [hop_question("X", hop), f"X is the {words} of what?", f"which ones have {words} X"]
    return [hop_question("X", hop), f"the {words} of X", f"what is X {words}"]


class Retriever:
    """Search over one graph, for one question's plan."""

    def __init__(
        self,
        graph: KnowledgeGraph,
        topic_entities: Sequence[str] = (),
        relevance: str = "auto",
        max_triplets: int = 60,
    ) -> None:
        self.graph = graph
        self.topic_entities = [e for e in topic_entities if graph.has_entity(e)]
        self.max_triplets = max_triplets
        self.embedder = None
        self.relevance_method = "lexical"
        if relevance in ("auto", "embedding"):
            from ..graph.embeddings import load_embedder

            self.embedder = load_embedder()
            if self.embedder is not None:
                self.relevance_method = "embedding"
            elif relevance == "embedding":
                self.relevance_method = "lexical (embedding model unavailable)"

    # ------------------------------------------------------------ linking
    def link(self, query: str, bound: Sequence[str] = ()) -> tuple[list[str], str]:
        """The sub-question's subject entities and how they were found."""
        bound = [e for e in bound if self.graph.has_entity(e)]
        if bound:
            return list(dict.fromkeys(bound)), "placeholder"
        folded = _fold(query)
        mentioned = [e for e in self.topic_entities if _fold(e) in folded]
        if mentioned:
            # "Heat" inside "Heat Wave": keep the longest mentions only.
            keep = [e for e in mentioned if not any(e != o and _fold(e) in _fold(o) for o in mentioned)]
            return keep, "topic entity"
        from ..graph.linking import link_entities

        cands = link_entities(query, self.graph)
        if cands:
            best = cands[0]
            same = [c.entity for c in cands if c.mention == best.mention and c.score >= best.score - 1e-9]
            return same[:3], f"linked ({best.method}, {best.score:.2f})"
        if self.topic_entities:
            return list(self.topic_entities), "topic entity (not named in the sub-question)"
        return [], "no entity found"

    # ------------------------------------------------------------ search
    def search(self, query: str, bindings: dict[str, str] | None = None) -> Retrieval:
        bindings = dict(bindings or {})
        subjects, how = self.link(query, list(bindings.values()))
        groups: dict[tuple[str, str, bool], HopGroup] = {}
        for s in subjects:
            for t in self.graph.neighbours(s):
                if t.head == s:
                    key = (s, t.relation, False)
                    groups.setdefault(key, HopGroup(s, Hop(t.relation, False), [])).triplets.append(t)
                if t.tail == s and t.head != s:
                    key = (s, t.relation, True)
                    groups.setdefault(key, HopGroup(s, Hop(t.relation, True), [])).triplets.append(t)
        ordered = list(groups.values())
        self.score(query, ordered)
        ordered.sort(key=lambda g: (-g.relevance, g.hop.relation, g.hop.inverse, g.subject))
        ids: list[int] = []
        for g in ordered:
            room = self.max_triplets - len(ids)
            if room <= 0:
                break
            ids.extend(t.id for t in g.triplets[:room])
        found = sum(len(g.triplets) for g in ordered)
        return Retrieval(query=query, subjects=subjects, link_method=how, groups=ordered, triplet_ids=ids,
                         bindings=bindings, found=found)

    def score(self, query: str, groups: list[HopGroup]) -> None:
        """Set each group's relevance to ``query`` (subject names masked on both sides)."""
        if not groups:
            return
        subjects = sorted({g.subject for g in groups})
        q = mask(query, subjects)
        phrasings = [hop_phrasings(g.hop) for g in groups]
        lex = [max(lexical_relevance(q, t) for t in ts) for ts in phrasings]
        if self.embedder is not None:
            unique = list(dict.fromkeys(t for ts in phrasings for t in ts))
            vecs = self.embedder.encode([q] + unique)
            sims = {u: float(vecs[0] @ vecs[i + 1]) for i, u in enumerate(unique)}
            for g, ts, lx in zip(groups, phrasings, lex):
                g.relevance = round(0.7 * max(sims[t] for t in ts) + 0.3 * lx, 4)
        else:
            for g, lx in zip(groups, lex):
                g.relevance = round(lx, 4)
