"""Ways of writing a graph triplet inside ``< ... >``: as stored, or read backwards.

Why DoG offers the backward reading.  The trie makes the model write a
triplet head first, so a step from an entity that is the *tail* of the
triplet it needs ("films with the same actor as Forever Young": after
``< Forever Young -> starred_actors -> Mel Gibson >`` the next fact is
``Ransom -> starred_actors -> Mel Gibson``) has to start with an entity the
chain has not reached yet, before the model has seen the relation.  Models
write from the entity they stand on, so they stay on the first hop instead.
The paper's Freebase graphs store most facts in both directions (its Tab. 6
examples hold ``contains`` / ``containedby`` and ``team_mascot`` /
``mascot.team``), so a forward reading from the visited entity nearly always
existed there; MetaQA and most uploaded TSVs store one direction only.  A
backward reading, ``< Mel Gibson -> starred_actors (reverse) -> Ransom >``,
restores that: it is the same graph triplet, grounded and well-formed (its
head or tail is visited), written from the other end.  The suffix is the one
READS uses for a backward expansion.

A reading's id in the trie is the triplet id when stored, ``-(id + 1)`` when
reversed, so both fit the trie's integer ids and map back without a table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

REVERSE_SUFFIX = " (reverse)"


@dataclass(frozen=True)
class TripletReading:
    """One surface form of graph triplet `triplet_id` (the trie reads id/head/relation/tail)."""

    id: int
    triplet_id: int
    head: str
    relation: str
    tail: str
    reversed: bool = False

    @property
    def label(self) -> str:
        return f"{self.head} -> {self.relation} -> {self.tail}"


def reading_id(triplet_id: int, reversed_: bool) -> int:
    return -(triplet_id + 1) if reversed_ else triplet_id


def triplet_of(reading: int) -> int:
    """The graph triplet id a reading id stands for."""
    return -reading - 1 if reading < 0 else reading


def is_reversed(reading: int) -> bool:
    return reading < 0


def forward(triplet: Any) -> TripletReading:
    return TripletReading(triplet.id, triplet.id, triplet.head, triplet.relation, triplet.tail)


def backward(triplet: Any) -> TripletReading:
    return TripletReading(
        reading_id(triplet.id, True), triplet.id, triplet.tail, triplet.relation + REVERSE_SUFFIX, triplet.head, True
    )


def readings(triplets: Iterable[Any], reverse: bool = True) -> list[TripletReading]:
    """Every stored reading, then (with `reverse`) every backward one.

    A self-loop (head == tail) has no distinct backward reading and gets none.
    """
    items = list(triplets)
    out = [forward(t) for t in items]
    if reverse:
        out.extend(backward(t) for t in items if t.head != t.tail)
    return out


def reading_of(graph: Any, reading: int) -> TripletReading:
    """The reading `reading` of a triplet of `graph`."""
    t = graph.triplet(triplet_of(reading))
    return backward(t) if is_reversed(reading) else forward(t)


def find_written(graph: Any, head: str, relation: str, tail: str) -> tuple[Any, bool]:
    """The graph triplet a written ``head -> relation -> tail`` names, and whether it was read backwards.

    For checks of text (CoT's triplets, the highlighted model text): a
    backward reading names the same fact as the stored triplet.
    """
    found = graph.find(head, relation, tail)
    if found is not None or not relation.endswith(REVERSE_SUFFIX):
        return found, False
    back = graph.find(tail, relation[: -len(REVERSE_SUFFIX)], head)
    return back, back is not None
