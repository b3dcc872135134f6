"""One hop past the reader's horizon, when a word of the question names it and the graph has it.

Why: a reader plans walks of at most ``max_hops`` (3) hops, so a question
that asks four ("the capital of the country whose citizen founded the
developer of X") is read as its first three, and the chain answers the
country.  Offering every 4-hop walk to the reader read such questions right
but lost shorter ones (the model took a longer walk where a shorter one was
asked; docs/history/benchmarks-2026.md, "A longer horizon").  Here the
horizon moves only where the question itself says so: a word that no hop of
the best walk took (`alignment.plan_words`) names a relation the graph has
from where that walk ends, as closely as the walk's own hops were named, and
with that hop added the word is matched to it and every other hop keeps its
word.  Otherwise the reading stays as it was (open-ended at the horizon, as
before).

A hop the alignment gave a word it hardly names (no closer than unrelated
words are, under `alignment.COVER_AT`) was named by nothing: every hop takes
the word closest to it, and a hop the question leaves unsaid ("the country
where Pepe Reina's *sport* originates" walks through his position first)
takes whatever word is left, "capital" at 0.16.  Such a word is free for the
new hop, and such a hop need not keep it.

Examples
--------
>>> from kgqa_core.graph.knowledge_graph import KnowledgeGraph
>>> g = KnowledgeGraph.from_triplets([("Ann", "spouse", "Bob"), ("Bob", "born in", "Oslo")])
>>> sorted(h.label for h in next_hops(g, RelationPlan("Ann", (PlanHop("spouse"),))))
['born in']
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Sequence

from .alignment import COVER_AT, PHRASE_GAIN, _similarities, plan_words
from .paths import Walks, plan_ends, step_out
from .reading import PlanHop, RelationPlan
from .vocabulary import RelationVocabulary

# The new hop's word must be at least this close to its relation (cosine, the question's words against the relation's
# text) and at least as close as the weakest hop of the walk was to its own word: a hop the question names as plainly
# as the others.
HORIZON_AT = 0.6


@dataclass(frozen=True)
class HorizonHop:
    """A plan one hop longer, and the question word that named the hop (for the trace)."""

    plan: RelationPlan
    word: str
    closeness: float


def next_hops(graph: Any, plan: RelationPlan, cap: int = 200, fan: int = 20) -> dict[PlanHop, Walks]:
    """Each (relation, direction) the graph has from where `plan` ends, with the entities it reaches and a walk
    to each (topic first)."""
    return step_out(graph, plan_ends(graph, plan, cap, fan), cap, fan)


def horizon_hop(question: str, topics: Sequence[str], graph: Any, plan: RelationPlan,
                vocabulary: RelationVocabulary | None = None, embedder: Any = None,
                phrase_gain: float = PHRASE_GAIN, at: float = HORIZON_AT,
                spread: float | None = None) -> HorizonHop | None:
    """`plan` with one more hop when a word of the question no hop took names a relation from where it ends.

    Parameters
    ----------
    question, topics : the question and its topic entities.
    graph : the graph store the plan walks.
    plan : the reader's best walk, as long as the reader plans.
    vocabulary, embedder, phrase_gain, spread : as for `alignment.plan_words`.
    at : the least closeness of the new hop's word (`HORIZON_AT`).

    Returns
    -------
    The longer plan and the word that named its new hop, or None (no such word, or the graph has no such hop).
    """
    if embedder is None:
        return None
    offered = next_hops(graph, plan)
    own = {h.relation for h in plan.hops}
    among = sorted({h.relation for h in offered} - own)
    if not among:
        return None
    matches, left = plan_words(question, topics, plan, vocabulary, embedder, among=among, phrase_gain=phrase_gain,
                               spread=spread)
    named = [x for _, w, x in matches if w]
    floor = max(at, min(named)) if named else at
    weak = [w for _, w, x in matches if w and x < COVER_AT]  # a hop took it, but the word hardly names that hop
    plain = [w if x >= COVER_AT else None for _, w, x in matches]  # the hops the question plainly names: kept
    for word, relation, closeness in sorted(left + _closest(question, topics, weak, among, vocabulary, embedder,
                                                            phrase_gain, spread), key=lambda x: -x[2]):
        if relation not in among or closeness < floor:
            continue
        for hop, walks in offered.items():
            if hop.relation != relation:
                continue
            first = next(iter(walks))
            longer = replace(plan, hops=plan.hops + (hop,), walk=walks[first], example=first, reaches=len(walks),
                             twin_of="")
            again, _ = plan_words(question, topics, longer, vocabulary, embedder, among=among,
                                  phrase_gain=phrase_gain, spread=spread)
            if again[-1][1] == word and all(k is None or a[1] == k for a, k in zip(again[:-1], plain)):
                return HorizonHop(longer, word, closeness)
    return None


def _closest(question: str, topics: Sequence[str], words: Sequence[str], among: Sequence[str],
             vocabulary: RelationVocabulary | None, embedder: Any, phrase_gain: float,
             spread: float | None) -> list[tuple[str, str, float]]:
    """Each of `words` with the relation of `among` closest to it and their closeness (as `plan_words` leaves them)."""
    if not words or not among:
        return []
    found, m = _similarities(question, topics, among, vocabulary, embedder, phrase_gain, spread)
    if m is None:
        return []
    out = []
    for word in words:
        if word in found:
            j = found.index(word)
            best = int(m[:, j].argmax())
            out.append((word, among[best], float(m[best, j])))
    return out
