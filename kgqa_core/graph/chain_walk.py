"""How a reasoning chain walks the graph from the question's entity: hops, listed siblings, and steps off the path.

Answer completion follows the chain's relation path from the topic entity
(`kgqa_core.answers.completion`); the reading is kept apart from it so that
anything else that asks "which hop is this triplet" (a view, an analysis of
traces) reads chains the same way.

A chain's first triplet must touch a topic entity; that entity is the
source and the triplet is read away from it.  Each later triplet is

* a **hop** when it touches the entity the walk stands on (it reads on from
  there, forwards when that entity is its head);
* a **sibling** when it has the last hop's source, relation and direction
  but another entity at the far end: the model is listing that relation's
  entities ("Heat -> starred_actors -> Al Pacino", then "... -> Robert De
  Niro"); the walk then stands on the sibling, so the chain may go on from
  any entity it listed;
* **off** the path otherwise; the walk ends there.

Examples
--------
>>> from kgqa_core.graph.triplet import Triplet
>>> chain = [Triplet(0, "Heat", "starred_actors", "Al Pacino"), Triplet(1, "Heat", "starred_actors", "Val Kilmer")]
>>> [s.kind for s in walk_chain(chain, ["Heat"])]
['hop', 'sibling']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence


@dataclass(frozen=True)
class ChainStep:
    """One triplet of a chain as the walk reads it."""

    triplet: Any
    kind: str  # "hop", "sibling" or "off"
    source: str  # the entity the triplet is read from ("" when off the path)
    relation: str
    forward: bool  # read head -> tail
    target: str  # the entity the walk stands on afterwards


def walk_chain(chain: Sequence[Any], topics: Sequence[str]) -> list[ChainStep]:
    """Each triplet of `chain` read as a hop, a sibling or off the path (empty when the chain does not start at a topic).

    Parameters
    ----------
    chain : the chain's graph triplets, in the order written (anything with head, relation and tail).
    topics : the question's entities; the first triplet must touch one.

    Returns
    -------
    One `ChainStep` per triplet up to and including the first step off the path.
    """
    if not chain:
        return []
    first = chain[0]
    topic_set = set(topics)
    if first.head in topic_set:
        forward = True
    elif first.tail in topic_set:
        forward = False
    else:
        return []
    hop = ChainStep(first, "hop", first.head if forward else first.tail, first.relation, forward,
                    first.tail if forward else first.head)
    steps = [hop]
    end = hop.target
    for t in chain[1:]:
        if t.head == end or t.tail == end:
            fwd = t.head == end
            hop = ChainStep(t, "hop", end, t.relation, fwd, t.tail if fwd else t.head)
            steps.append(hop)
            end = hop.target
        elif t.relation == hop.relation and (t.head if hop.forward else t.tail) == hop.source:
            end = t.tail if hop.forward else t.head
            steps.append(ChainStep(t, "sibling", hop.source, t.relation, hop.forward, end))
        else:
            steps.append(ChainStep(t, "off", "", t.relation, True, ""))
            break
    return steps
