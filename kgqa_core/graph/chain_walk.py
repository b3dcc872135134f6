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
  Niro"); the walk then stands on every entity it listed, so the chain may
  go on from any of them ("Jack Nicholson -> written_by (reverse) -> The
  Trip", "... -> Head", then "The Trip -> directed_by -> Roger Corman");
* a **restart** when it is none of these but starts again from a topic
  entity: the model surveyed the question's entity ("Quality Street ->
  release_year -> 1937", "Quality Street -> has_genre -> Romance") before
  it took the hop it needed ("Quality Street -> starred_actors -> Katharine
  Hepburn"); the walk begins a new path there (`path_segments`);
* **off** the path otherwise; the walk stands nowhere until a restart.

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
    kind: str  # "hop", "sibling", "restart" or "off"
    source: str  # the entity the triplet is read from ("" when off the path)
    relation: str
    forward: bool  # read head -> tail
    target: str  # the entity the walk stands on afterwards


def walk_chain(chain: Sequence[Any], topics: Sequence[str]) -> list[ChainStep]:
    """Each triplet of `chain` read as a hop, a sibling, a restart or off the path (empty when the chain does not start at a topic).

    Parameters
    ----------
    chain : the chain's graph triplets, in the order written (anything with head, relation and tail).
    topics : the question's entities; the first triplet must touch one.

    Returns
    -------
    One `ChainStep` per triplet.
    """
    if not chain:
        return []
    topic_set = set(topics)
    first = _from_topic(chain[0], topic_set, "hop")
    if first is None:
        return []
    steps = [first]
    hop: ChainStep | None = first
    ends = {first.target}  # where the walk stands: the last hop's entity and the siblings listed with it
    for t in chain[1:]:
        if t.head in ends or t.tail in ends:
            fwd = t.head in ends
            hop = ChainStep(t, "hop", t.head if fwd else t.tail, t.relation, fwd, t.tail if fwd else t.head)
            steps.append(hop)
            ends = {hop.target}
        elif hop is not None and t.relation == hop.relation and (t.head if hop.forward else t.tail) == hop.source:
            target = t.tail if hop.forward else t.head
            steps.append(ChainStep(t, "sibling", hop.source, t.relation, hop.forward, target))
            ends.add(target)
        elif (again := _from_topic(t, topic_set, "restart")) is not None:
            hop = again
            steps.append(again)
            ends = {again.target}
        else:
            hop, ends = None, set()
            steps.append(ChainStep(t, "off", "", t.relation, True, ""))
    return steps


def path_segments(steps: Sequence[ChainStep]) -> list[tuple[str, list[tuple[str, bool]]]]:
    """The relation paths the walk took from a topic entity, one per start (the first hop or a restart), latest first.

    Each is the topic entity and its hops as (relation, read forwards); a
    segment ends at a restart or a step off the path (listed siblings leave
    it as it is).

    Examples
    --------
    >>> from kgqa_core.graph.triplet import Triplet
    >>> chain = [Triplet(0, "Heat", "release_year", "1995"), Triplet(1, "Heat", "starred_actors", "Al Pacino"),
    ...          Triplet(2, "Serpico", "starred_actors", "Al Pacino")]
    >>> path_segments(walk_chain(chain, ["Heat"]))
    [('Heat', [('starred_actors', True), ('starred_actors', False)]), ('Heat', [('release_year', True)])]
    """
    segments: list[tuple[str, list[tuple[str, bool]]]] = []
    open_ = False
    for s in steps:
        if s.kind == "restart" or not segments:
            segments.append((s.source, [(s.relation, s.forward)]))
            open_ = True
        elif s.kind == "hop" and open_:
            segments[-1][1].append((s.relation, s.forward))
        elif s.kind == "off":
            open_ = False
    return segments[::-1]


def _from_topic(t: Any, topics: set[str], kind: str) -> ChainStep | None:
    """`t` read away from a topic entity it touches, or None."""
    if t.head in topics:
        return ChainStep(t, kind, t.head, t.relation, True, t.tail)
    if t.tail in topics:
        return ChainStep(t, kind, t.tail, t.relation, False, t.head)
    return None
