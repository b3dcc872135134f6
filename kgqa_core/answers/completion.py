"""Complete a list answer from the graph: every entity the chain's last relation holds.

A deviation from DoG and CoT as published (documented in docs/benchmarks.md
with its ablation).  A chain that ends ``< Disclosure -> starred_actors ->
Demi Moore >`` for "who acted in Disclosure" names one actor; the question
asks for all of them, and the graph holds them all.  The papers score the
entities the model wrote, so a correct chain with a short list loses F1
(DoG's answer F1 trails its Hits@1 on list questions for this reason alone).

The rule, applied after the model's answers are parsed and linked:

* the chain's last triplet ``(h, r, t)`` must be grounded in the graph;
* one of the model's answers (not a topic entity of the question) must be
  an entity on one side of it: a tail of ``(h, r, ?)`` (the chain read the
  triplet forwards and answered with its tail) or a head of ``(?, r, t)``
  (a backward reading, answered with its head);
* then every other entity on that side joins the answers, after the
  model's own (whose order is kept, so Hits@1 is unchanged), each marked
  ``Answer.completed_from_graph``.

Topic entities are never added (the question is about them).  At most
`MAX_COMPLETED_ANSWERS` are added; a relation that holds more (a genre's
thousands of films, read backwards) is cut and the cut is noted.  Only
`GraphView.neighbours` of the one anchor entity is read, so the completion
costs one neighbourhood lookup on any graph store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from ..trace.schema import Answer

MAX_COMPLETED_ANSWERS = 100


@dataclass(frozen=True)
class Completion:
    """The answers after completion and what was added, for the trace."""

    answers: list[Answer]
    anchor: str  # the entity the relation is read from
    relation: str
    direction: str  # "tails": every t of (anchor, r, t); "heads": every h of (h, r, anchor)
    added: list[str] = field(default_factory=list)
    held: int = 0  # how many entities the graph holds on that side
    cut: int = 0  # left out by MAX_COMPLETED_ANSWERS

    @property
    def note(self) -> str:
        side = (f"every tail of ({self.anchor}, {self.relation}, ?)" if self.direction == "tails"
                else f"every head of (?, {self.relation}, {self.anchor})")
        text = (f"answers completed from the graph: the chain's last triplet names {side}; "
                f"{len(self.added)} answer(s) added after the model's own")
        if self.cut:
            text += f" (cut at {len(self.added)} of {self.held}; {self.cut} left out)"
        return text


def _side(graph: Any, anchor: str, relation: str, anchor_is_head: bool) -> list[str]:
    """Entities at the other end of `relation` from `anchor`, in graph order, without repeats."""
    out: dict[str, None] = {}
    for t in graph.neighbours(anchor):
        if t.relation != relation:
            continue
        if anchor_is_head and t.head == anchor:
            out[t.tail] = None
        elif not anchor_is_head and t.tail == anchor:
            out[t.head] = None
    return list(out)


def complete_from_last_triplet(
    answers: Sequence[Answer],
    last: Any,
    graph: Any,
    topics: Sequence[str] = (),
    max_added: int = MAX_COMPLETED_ANSWERS,
) -> Completion | None:
    """`answers` completed from the relation of `last` (a graph `Triplet`), or None when the rule does not apply.

    None when no answer (other than a topic entity) is an entity on either
    side of `last`, or when the graph holds nothing beyond what the model
    already answered.
    """
    topic_set = set(topics)
    named = [a.entity for a in answers if a.entity and a.entity not in topic_set]
    if not named or last is None:
        return None
    named_set = set(named)
    for anchor, anchor_is_head in ((last.head, True), (last.tail, False)):
        others = _side(graph, anchor, last.relation, anchor_is_head)
        if anchor in named_set or not named_set & set(others):
            continue
        given = {a.entity for a in answers if a.entity} | {a.text for a in answers}
        extra = [e for e in others if e not in given and e not in topic_set and e != anchor]
        if not extra:
            return None
        kept = extra[:max_added]
        added = [Answer(text=e, entity=e, in_graph=True, score=None, completed_from_graph=True) for e in kept]
        return Completion(
            answers=list(answers) + added,
            anchor=anchor,
            relation=last.relation,
            direction="tails" if anchor_is_head else "heads",
            added=kept,
            held=len(others),
            cut=len(extra) - len(kept),
        )
    return None
