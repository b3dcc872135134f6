"""Bounded neighbourhoods around hub entities, ranked by what the question asks for.

At whole-graph scale a genre, a year or a prolific actor touches thousands of
triplets (MetaQA's "Drama" is the tail of 4,176).  Every method that walks the
graph (the prompt's candidate pool, DoG's walkable region, READS' expansions,
RoK's paths, LPKG's Search) must read a bounded part of such an entity, and
which part matters: the question names a relation ("which words describe"
-> ``has_tags``, "co-wrote" -> ``written_by``) at least as much as an entity.

`relation_relevance` scores each relation name against the question (word
overlap after light stemming, plus sentence-embedding similarity when the
packaged MiniLM model is present); `capped_neighbours` keeps at most `cap`
triplets of an entity: every relation first gets a fair share (so a rare
relation the question needs is never crowded out by a hub's thousands of
``has_genre`` edges), in relation-relevance order, then the rest of the cap
goes to the most relevant relations; inside a relation, triplets whose other
entity shares words with the question come first, then graph order.  Only
`GraphView.neighbours` is used.  The caller records every cut (`HubCut`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from .words import STOP_WORDS

_WORD = re.compile(r"[^\W_]+")
_STOP = STOP_WORDS | {"why", "same", "also"}


def _stem(word: str) -> str:
    for suffix in ("ings", "ing", "ers", "er", "ed", "es", "s", "ion", "or"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def content_stems(text: str) -> set[str]:
    """Lower-cased content words of `text`, lightly stemmed ('written' and 'writer' -> 'writ')."""
    return {_stem(w) for w in _WORD.findall(text.casefold()) if w not in _STOP}


# where a camelCase name starts its next word: "deathPlace", "lienSubdivision", "ISBNNumber" (an RDF graph's
# usual spelling; a sentence-embedding model reads "deathplace" as one unknown word, "death place" as two)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def relation_words(relation: str) -> str:
    """A relation id as words: ``film.film.directed_by`` -> ``directed by``, ``has_tags`` -> ``has tags``,
    ``deathPlace`` -> ``death place`` (a capitalised word in lower case, an acronym as it is: ``ISBN number``).

    An IRI or a prefixed name gives its local name (after the last "/", "#" or ":"), as the dotted Freebase id
    gives its last part.

    >>> [relation_words(r) for r in ("film.film.directed_by", "lienSubdivision", "ISBNNumber", "P26")]
    ['directed by', 'lien subdivision', 'ISBN number', 'P26']
    >>> [relation_words(r) for r in ("http://www.w3.org/1999/02/22-rdf-syntax-ns#type", "dbo:birthPlace")]
    ['type', 'birth place']
    """
    last = re.split(r"[/#]", relation.rsplit(".", 1)[-1])[-1]
    if ":" in last.rstrip(":"):
        last = last.rstrip(":").rsplit(":", 1)[-1]
    words = _WORD.findall(_CAMEL.sub(" ", last).replace("_", " "))
    return " ".join(w.lower() if w[:1].isupper() and w[1:].islower() else w for w in words)


def relation_relevance(question: str, relations: Sequence[str], embedder: Any = None) -> dict[str, float]:
    """Each relation's relevance to `question` in [0, 1]: word overlap, and embedding similarity if given.

    With an embedder, the cosine similarity of the question with the
    relation's words (on the same scale as the triplet similarities it is
    mixed with); without, the share of the relation's content stems found
    in the question.
    """
    q = content_stems(question)
    rels = list(dict.fromkeys(relations))
    out: dict[str, float] = {}
    for r in rels:
        stems = content_stems(relation_words(r))
        out[r] = len(stems & q) / len(stems) if stems else 0.0
    if embedder is not None and rels:
        vecs = embedder.encode([relation_words(r) or r for r in rels])
        qvec = embedder.encode([question])[0]
        for r, s in zip(rels, vecs @ qvec):
            out[r] = float(s)
    return out


class LazyRelevance(dict):
    """Relation relevance that scores a relation the first time a hub shows it.

    `score(relations)` scores the unknown ones of a hub in one embedding batch; `get` scores one on demand.
    """

    def __init__(self, known: Mapping[str, float], question: str, embedder: Any) -> None:
        super().__init__(known)
        self.question, self.embedder = question, embedder

    def score(self, relations: Sequence[str]) -> None:
        unknown = sorted(set(relations) - set(self))
        if unknown:
            self.update(relation_relevance(self.question, unknown, self.embedder))

    def get(self, relation: str, default: float = 0.0) -> float:  # type: ignore[override]
        if relation not in self:
            self.score([relation])
        return super().get(relation, default)


@dataclass(frozen=True)
class HubCut:
    """One entity whose neighbourhood was cut to the cap, for the trace."""

    entity: str
    kept: int
    total: int

    @property
    def note(self) -> str:
        return f"{self.entity!r}: kept {self.kept} of its {self.total} triplets"


def capped_neighbours(
    graph: Any, entity: str, cap: int, relevance: Mapping[str, float], question_stems: set[str] | None = None
) -> tuple[list[Any], HubCut | None]:
    """At most `cap` triplets touching `entity`, ranked for the question; the cut, if any.

    `relevance` maps relation names to scores (`relation_relevance`);
    unknown relations score 0.  Returns the kept triplets (relation-relevance
    order, then entity-word overlap, then graph order) and a `HubCut` when
    the entity had more than `cap`.
    """
    triplets = graph.neighbours(entity)
    if len(triplets) <= cap:
        return list(triplets), None
    q = question_stems or set()
    by_rel: dict[str, list[Any]] = {}
    for t in triplets:
        by_rel.setdefault(t.relation, []).append(t)
    order = sorted(by_rel, key=lambda r: (-relevance.get(r, 0.0), r))
    for r in order:
        if q:
            group = by_rel[r]
            by_rel[r] = sorted(group, key=lambda t: -len(content_stems(t.other(entity)) & q))
    share = max(1, cap // len(order))
    kept: list[Any] = []
    taken: dict[str, int] = {}
    for r in order:  # a fair share for every relation, most relevant first
        part = by_rel[r][: min(share, cap - len(kept))]
        kept.extend(part)
        taken[r] = len(part)
        if len(kept) >= cap:
            break
    for r in order:  # the rest of the cap to the most relevant relations
        if len(kept) >= cap:
            break
        more = by_rel[r][taken.get(r, 0): taken.get(r, 0) + cap - len(kept)]
        kept.extend(more)
    return kept, HubCut(entity, len(kept), len(triplets))
