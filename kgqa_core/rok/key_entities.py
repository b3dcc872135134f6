"""Key entities (§4.1): the question's entities plus those a chain of thought mentions.

The chain of thought may be wrong about the answer and still name entities
that sit near it in the graph (the paper's point), so every candidate
mention of the CoT text is linked:

* mentions: capitalised spans, quoted or emphasised strings, years, and word
  n-grams that are graph names (found with the graph package's name index);
* linking: exact / case-insensitive / fuzzy (rapidfuzz) via
  ``kgqa_core.graph.resolve_entity``, then embedding similarity with
  all-MiniLM-L6-v2 against a bounded pool of lexically close names (all
  names for small graphs).  Without the embedder linking is lexical and the
  trace says so.

Every mention is kept in the result, linked or not, so the trace can show
what did not link.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
from rapidfuzz import fuzz, process

from .. import progress
from ..graph.knowledge_graph import KnowledgeGraph
from ..graph.linking import (
    STOPWORDS,
    UnknownEntityError,
    entity_index,
    link_entities,
    normalize_name,
    resolve_entity,
    validate_topic_entity,
)

# Words that open CoT sentences and are capitalised without being names.
_BOILERPLATE = frozenset(
    """step steps first second third fourth finally then so therefore thus next answer answers
    question questions however also based since because yes no sure here let lets identify find
    look looking note given according this that these those the a an in on to it its final
    conclusion overall in summary""".split()
)
# "and" is no connector: "Tom Hanks and Meg Ryan" are two names (graph names
# with "and" in them are still found by the n-gram linker).
_CONNECTORS = r"(?:of|the|de|da|di|du|del|la|le|von|van|der|in|on|for|a|an|to)"
_CAPITALISED = re.compile(
    rf"\b[A-Z0-9][\w'’.\-]*(?:[ \t]+(?:{_CONNECTORS}[ \t]+)*[A-Z0-9][\w'’.\-]*)*"
)
_QUOTED = re.compile(r"\"([^\"\n]{2,80})\"|“([^”\n]{2,80})”|\*\*([^*\n]{2,80})\*\*|(?<![\w*])\*([^*\n]{2,80})\*(?![\w*])|'([^'\n]{3,80})'(?!\w)")
_SENTENCE_END = re.compile(r"(?<=\w\w)\.\s+")
_YEAR = re.compile(r"\b(1[89]\d\d|20\d\d)\b")

EMBED_FULL_POOL = 2000  # graphs with at most this many entities are embedded whole
EMBED_POOL = 25  # otherwise: this many lexically closest names per mention


@dataclass
class Mention:
    text: str
    source: str  # "topic" | "question" | "cot"
    kind: str  # "topic", "bracket", "ngram", "capitalised", "quoted", "year", ...
    position: int = 0


@dataclass
class MentionLink:
    """A mention and what it linked to (entity None = did not link)."""

    mention: str
    source: str
    kind: str
    entity: str | None
    score: float
    method: str  # exact | case-insensitive | fuzzy | embedding | override | bracket | none
    position: int = 0

    def as_dict(self) -> dict:
        return {
            "mention": self.mention, "source": self.source, "kind": self.kind,
            "entity": self.entity, "score": round(float(self.score), 4), "method": self.method,
        }


@dataclass
class KeyEntityResult:
    links: list[MentionLink] = field(default_factory=list)
    key_entities: list[str] = field(default_factory=list)
    embedder: str = ""  # name of the embedder used, "" when lexical only
    notes: list[str] = field(default_factory=list)

    @property
    def question_entities(self) -> list[str]:
        """Key entities the question itself names (given topic entities or linked in it)."""
        named = {l.entity for l in self.links if l.entity and l.source in ("topic", "question")}
        return [e for e in self.key_entities if e in named]

    @property
    def unlinked(self) -> list[MentionLink]:
        return [l for l in self.links if l.entity is None]


# ---------------------------------------------------------------- mentions
def extract_mentions(text: str, source: str = "cot") -> list[Mention]:
    """Candidate entity mentions of free text (capitalised spans, quotes, years).

    N-gram matches against graph names are found separately (they need the
    graph).  Duplicates (case-insensitive) keep their first position.
    """
    found: dict[str, Mention] = {}

    def add(raw: str, kind: str, pos: int) -> None:
        m = raw.strip(" \t\n.,;:!?()[]{}\"'`*“”’")
        if len(m) < 2:
            return
        words = normalize_name(m).split()
        if not words or all(w in STOPWORDS or w in _BOILERPLATE or (w.isdigit() and len(w) < 3) for w in words):
            return
        key = m.casefold()
        if key not in found:
            found[key] = Mention(m, source, kind, pos)

    for match in _QUOTED.finditer(text):
        group = next(g for g in match.groups() if g)
        add(group, "quoted", match.start())
    for match in _CAPITALISED.finditer(text):
        offset = match.start()
        # a span must not run over a sentence end ("USA. The Fugitive")
        for span in _SENTENCE_END.split(match.group()):
            if span.isdigit():
                continue
            add(span, "capitalised", offset)
            offset += len(span) + 1
    for match in _YEAR.finditer(text):
        add(match.group(), "year", match.start())
    return sorted(found.values(), key=lambda m: m.position)


# ---------------------------------------------------------------- linking
class MentionLinker:
    """Links mentions to graph entities: lexical first, then embeddings."""

    def __init__(
        self,
        graph: KnowledgeGraph,
        embedder: object | None = None,
        fuzzy_threshold: float = 0.88,
        embed_threshold: float = 0.8,
    ) -> None:
        self.graph = graph
        self.embedder = embedder
        self.fuzzy_threshold = fuzzy_threshold
        self.embed_threshold = embed_threshold
        self._index = entity_index(graph)

    def link(self, mention: Mention) -> MentionLink:
        link = self._link(mention)
        parts = mention.text.split()
        if link.entity is None and len(parts) > 1 and normalize_name(parts[0]) in _BOILERPLATE | STOPWORDS:
            # "The Godfather" may be a graph name without its article, and a
            # sentence-initial word may be glued to a name ("Director Joel Zwick").
            inner = self._link(Mention(" ".join(parts[1:]), mention.source, mention.kind, mention.position))
            if inner.entity is not None:
                return inner
        return link

    def _link(self, mention: Mention) -> MentionLink:
        entity, score = resolve_entity(mention.text, self.graph, threshold=self.fuzzy_threshold)
        if entity is not None:
            if score >= 1.0:
                method = "exact"
            elif normalize_name(entity) == normalize_name(mention.text):
                method = "case-insensitive"
            else:
                method = "fuzzy"
            return MentionLink(mention.text, mention.source, mention.kind, entity, score, method, mention.position)
        if self.embedder is not None:
            hit = self._embedding_match(mention.text)
            if hit is not None:
                return MentionLink(mention.text, mention.source, mention.kind, hit[0], hit[1], "embedding", mention.position)
        return MentionLink(mention.text, mention.source, mention.kind, None, 0.0, "none", mention.position)

    def _pool(self, text: str) -> list[str]:
        ents = self.graph.entities
        if len(ents) <= EMBED_FULL_POOL:
            return ents
        key = normalize_name(text)
        hits = process.extract(key, self._index.keys, scorer=fuzz.WRatio, limit=EMBED_POOL, score_cutoff=50.0)
        return [self._index.by_key[k][0] for k, _, _ in hits]

    def _embedding_match(self, text: str) -> tuple[str, float] | None:
        pool = self._pool(text)
        if not pool:
            return None
        vecs = self.embedder.encode([text] + pool)  # type: ignore[union-attr]
        sims = np.asarray(vecs[1:]) @ np.asarray(vecs[0])
        best = int(np.argmax(sims))
        score = float(sims[best])
        if score < self.embed_threshold:
            return None
        return pool[best], score


def ngram_links(text: str, graph: KnowledgeGraph, source: str = "cot") -> list[MentionLink]:
    """Word n-grams of ``text`` that are graph names (the graph package's linker).

    For free model text only exact / case-insensitive matches of mentions
    written with a capital or a digit count: lower-case phrases ("answer
    this") and fuzzy spans across line breaks ("California.\nStep") are
    ordinary English far more often than names.  Fuzzy matching of CoT
    mentions is done on the extracted mentions instead.
    """
    flat = text.replace("[", " ").replace("]", " ")  # brackets would switch it to bracket mode
    out = []
    for c in link_entities(flat, graph, limit=50):
        if source == "cot" and (c.method == "fuzzy" or not any(ch.isupper() or ch.isdigit() for ch in c.mention)):
            continue
        pos = flat.find(c.mention)
        out.append(MentionLink(c.mention, source, "ngram", c.entity, c.score, c.method, max(pos, 0)))
    return out


@progress.in_phase(progress.LINKING)
def find_key_entities(
    question: str,
    cot_text: str,
    graph: KnowledgeGraph,
    topic_entities: Sequence[str] = (),
    embedder: object | None = None,
    max_key_entities: int = 6,
    min_link_score: float = 0.65,
    embed_threshold: float = 0.8,
) -> KeyEntityResult:
    """The ordered key entities: given topic entities, question links, then CoT links.

    Order matters: paths are enumerated between key entities pairwise in
    this order, and the cap ``max_key_entities`` keeps the question's own
    entities first, then the most certain CoT links (a full name linked
    exactly before a bare year), earlier mentions first among equals.
    Links below ``min_link_score`` are shown but not used.
    """
    result = KeyEntityResult(embedder=getattr(embedder, "name", "") if embedder is not None else "")
    if embedder is None:
        result.notes.append("embedding linking unavailable (all-MiniLM-L6-v2 not loaded): mentions linked lexically only")
    linker = MentionLinker(graph, embedder, embed_threshold=embed_threshold)

    for given in topic_entities:
        try:
            ent, score = validate_topic_entity(given, graph)
            result.links.append(MentionLink(given, "topic", "topic", ent, score, "override"))
        except UnknownEntityError as exc:
            result.links.append(MentionLink(given, "topic", "topic", None, 0.0, "none"))
            result.notes.append(str(exc))
    q_links: dict[str, MentionLink] = {}
    for c in link_entities(question, graph, limit=10):
        q_links.setdefault(c.entity, MentionLink(c.mention, "question", c.method if c.method == "bracket" else "ngram",
                                                 c.entity, c.score, c.method, max(question.find(c.mention), 0)))
    # a bracketed topic makes link_entities return only it; the question's other names count too
    for link in ngram_links(question, graph, source="question"):
        if link.entity not in q_links:
            q_links[link.entity] = link
    result.links.extend(q_links.values())

    cot_links: dict[str, MentionLink] = {}
    for link in ngram_links(cot_text, graph):
        cot_links.setdefault(link.mention.casefold(), link)
    for m in extract_mentions(cot_text, "cot"):
        k = m.text.casefold()
        if k in cot_links and cot_links[k].entity is not None:
            continue
        cot_links[k] = linker.link(m)
    result.links.extend(sorted(cot_links.values(), key=lambda l: l.position))

    order = {"topic": 0, "question": 1, "cot": 2}
    # one mention names one thing: "Titanic" is the film, not also the tag "titanic"
    best_for_mention: dict[str, MentionLink] = {}
    for link in result.links:
        if link.entity is None:
            continue
        k = link.mention.casefold()
        old = best_for_mention.get(k)
        if old is None or (order[link.source], -link.score) < (order[old.source], -old.score):
            best_for_mention[k] = link
    chosen: list[str] = []
    for link in sorted(
        (l for l in result.links if l.entity is not None),
        key=lambda l: (order[l.source], -round(l.score, 2), l.position),
    ):
        if link.source != "topic" and link.score < min_link_score:
            continue
        if best_for_mention[link.mention.casefold()].entity != link.entity:
            continue
        if link.entity not in chosen:
            chosen.append(link.entity)
    if len(chosen) > max_key_entities:
        result.notes.append(
            f"{len(chosen)} key entities linked; kept the first {max_key_entities} "
            f"(question entities first): {', '.join(chosen[max_key_entities:])} left out"
        )
        chosen = chosen[:max_key_entities]
    result.key_entities = chosen
    return result
