"""How many hops a question needs, read from its wording against the graph's relations.

A constant budget (DoG's 4 triplets, RoK's 2-hop paths) either cuts 3-hop
questions short or lets 1-hop chains ramble.  The question names each hop:
"who directed the films written by the writer of X" mentions *directed*,
*written* and *writer*, three words that are the words of relations the
graph holds around X (``directed_by``, ``written_by``).  `estimate_hops`
counts such relation-word mentions in the question (each position once),
using the relations of the triplets the method already has in hand (the
prompt context), so it follows the graph's own vocabulary rather than a
list of phrasings.  A question that names no relation word counts as one
hop.  The estimate is clamped to `MAX_HOPS`.

`dog_step_budget` turns it into DoG's ``max_steps``: two triplets per hop
(one to take the hop, one to spare for listing or a wrong turn), at least
the old constant 4, so only questions estimated at three hops get more.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any, Iterable

from ..graph.hub_caps import relation_words

MAX_HOPS = 3
MIN_DOG_STEPS = 4
_WORD = re.compile(r"[^\W_]+")
# relation-name words that say nothing about which relation is meant
_GENERIC = frozenset("has have had is of in on by to for the a an with as at type id name value inverse".split())


@dataclass(frozen=True)
class HopEstimate:
    hops: int
    mentions: list[str]  # the question words that matched a relation, in question order

    def note(self, budget_name: str, budget: int) -> str:
        said = ", ".join(repr(m) for m in self.mentions) if self.mentions else "no relation word"
        return f"{budget_name} {budget} from the question: {said} -> about {self.hops} hop(s)"


def _same_word(a: str, b: str) -> bool:
    """Two forms of one word: equal, or sharing their first four letters or more ('writer', 'written')."""
    if a == b:
        return True
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n >= 4 and n >= min(len(a), len(b)) - 3


def estimate_hops(question: str, relations: Iterable[str]) -> HopEstimate:
    """Hops = question words naming a relation of `relations`, in [1, MAX_HOPS].

    Adjacent words naming the same relation count once ("release years"
    is one mention of ``release_year``).
    """
    words: dict[str, str] = {}  # relation word -> relation
    for r in dict.fromkeys(relations):
        for w in relation_words(r).casefold().split():
            if w not in _GENERIC and len(w) > 2:
                words.setdefault(w, r)
    mentions: list[str] = []
    last_relation, last_pos = None, -2
    for pos, w in enumerate(_WORD.findall(question.casefold())):
        if w in _GENERIC:
            continue
        hit = next((r for rw, r in words.items() if _same_word(w, rw)), None)
        if hit is None:
            continue
        if not (hit == last_relation and pos == last_pos + 1):
            mentions.append(w)
        last_relation, last_pos = hit, pos
    return HopEstimate(max(1, min(MAX_HOPS, len(mentions))), mentions)


def dog_step_budget(estimate: HopEstimate, floor: int = MIN_DOG_STEPS) -> int:
    """DoG's triplet budget: two per hop, never below `floor` (the chosen ``max_steps``)."""
    return max(floor, 2 * estimate.hops)


def relations_near(graph: object, entities: Iterable[str], cap: int = 200, fan: int = 20) -> list[str]:
    """Relation names within two hops of `entities`, reading at most `cap` triplets of any one entity.

    The second hop is read from at most `fan` neighbours of each entity, so a
    hub costs a bounded number of lookups on any graph store.
    """
    from ..graph.hub_caps import capped_neighbours

    found: dict[str, None] = {}
    for ent in dict.fromkeys(entities):
        around, _ = capped_neighbours(graph, ent, cap, {})
        others: dict[str, None] = {}
        for t in around:
            found.setdefault(t.relation, None)
            others.setdefault(t.other(ent), None)
        for other in list(others)[:fan]:
            for t in capped_neighbours(graph, other, cap, {})[0]:
                found.setdefault(t.relation, None)
    return list(found)


def rok_path_hops(estimate: HopEstimate) -> int:
    """RoK's path length for the question: the paper's 2, or 3 when the question names three hops."""
    return max(2, estimate.hops)


def auto_step_budget(params: Any, request: Any, notes: list[str]) -> Any:
    """DoG's params with ``max_steps`` raised to `dog_step_budget` for this question (a note when raised)."""
    graph = request.graph
    topics = [e for e in request.topic_entities if e and graph.has_entity(e)]
    estimate = estimate_hops(request.question, relations_near(graph, topics))
    budget = dog_step_budget(estimate, params.max_steps)
    if budget == params.max_steps:
        return params
    notes.append(estimate.note("max_steps", budget))
    return dataclasses.replace(params, max_steps=budget)


def auto_path_hops(params: Any, question: str, graph: Any, topics: Iterable[str], trace: Any) -> Any:
    """RoK's params with ``hops`` raised to the hops the question names (a note and the trace's parameters)."""
    estimate = estimate_hops(question, relations_near(graph, [t for t in topics if t]))
    hops = max(params.hops, rok_path_hops(estimate)) if estimate.hops > 2 else params.hops
    if hops == params.hops:
        return params
    trace.notes.append(estimate.note("hops", hops))
    if isinstance(trace.parameters, dict):
        trace.parameters["hops"] = hops
    return dataclasses.replace(params, hops=hops)
