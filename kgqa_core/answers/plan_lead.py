"""The question's likeliest plan leads the answers where the chain walked it and the model answered elsewhere.

Why: an unsure reading leaves the chain's relations to the model, which often
walks several of the reading's plans ("who is the sibling of Isis":
``père``, ``mère`` and ``fratrie`` from Isis) and then answers at the end of
one the reading thought much less likely (Geb, the father, at 27%, where
``fratrie`` was 46%).  The reading is the same model's judgement of the
whole question, made over the graph's own paths before the chain was
written; the answer line is its judgement of the last few tokens.  When the
chain itself walked the likeliest plan to its end, and the model's first
answer is the end of a plan that reading judged less likely by at least a
margin, the likeliest plan's ends are put first; the model's answers are
kept after them.  Nothing is added that the chain did not walk, and where
the model answered on the likeliest plan's way (it stopped a hop short, or
the plan goes on past it) nothing moves.

Examples
--------
>>> from kgqa_core.graph.triplet import Triplet
>>> chain = [Triplet(0, "HMS Isis", "namesake", "Isis"), Triplet(1, "Isis", "pere", "Geb"),
...          Triplet(2, "Isis", "fratrie", "Seth")]
>>> walked_ends(chain, "HMS Isis", [("namesake", True), ("fratrie", True)])
['Seth']
>>> walked_ends(chain, "Geb", [("pere", False)])
['Isis']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ..trace.schema import Answer

NOTE_HEAD = "plan_leads_answers:"  # how the trace's note about a reordering starts (the CLI prints it)
PLAN_MARGIN = 0.15  # how much likelier (probability) the walked plan must be than the one the model answered on


@dataclass
class PlanLead:
    """Why the answers were reordered: the plan that now leads and the one the model's first answer ended."""

    plan: str
    confidence: float
    answered_plan: str
    answered_confidence: float
    moved: list[str]

    def sentence(self) -> str:
        names = ", ".join(self.moved[:5]) + (" ..." if len(self.moved) > 5 else "")
        verb = "comes" if len(self.moved) == 1 else "come"
        return (f"{NOTE_HEAD} the chain walked the question reading's likeliest plan ({self.plan}, "
                f"{self.confidence:.0%}) to {names}, but the model's first answer was the end of a plan the reading "
                f"judged less likely ({self.answered_plan}, {self.answered_confidence:.0%}), so {names} "
                f"{verb} first; the model's own answers follow")


def walked_ends(chain: Sequence[Any], topic: str, hops: Sequence[tuple[str, bool]]) -> list[str]:
    """The entities the chain's triplets reach from `topic` along `hops` ((relation, forward) pairs), in the
    chain's order; [] when the chain did not walk the whole path."""
    front, order = {topic}, []
    for relation, forward in hops:
        order = [(t.tail if forward else t.head) for t in chain if t.relation == relation
                 and (t.head if forward else t.tail) in front]
        if not order:
            return []
        front = set(order)
    return list(dict.fromkeys(order))


def _hops(plan: Any) -> list[tuple[str, bool]]:
    return [(h.relation, bool(h.forward)) for h in plan.hops]


def lead_by_plan(answers: Sequence[Answer], chain: Sequence[Any], plans: Sequence[Any],
                 margin: float = PLAN_MARGIN) -> tuple[list[Answer], PlanLead | None]:
    """`answers` with the likeliest walked plan's ends first, when the rule of the module docstring applies.

    Parameters
    ----------
    answers : the resolved answers, the model's first.
    chain : the chain's triplets (graph triplets with head, relation, tail).
    plans : the question reading's plans (`reading.RelationPlan`: topic, hops, confidence), best first.
    margin : how much likelier the walked plan must be than the likeliest plan ending at the first answer.

    Returns
    -------
    (answers, None) unchanged, or (the reordered answers, why).
    """
    if not answers or not chain or not plans:
        return list(answers), None
    walked = [(p, hops, ends) for p in plans for hops in [_hops(p)]
              for ends in [walked_ends(chain, p.topic, hops)] if ends]
    if not walked:
        return list(answers), None
    best, best_hops, best_ends = max(walked, key=lambda w: w[0].confidence)
    first = answers[0].entity or answers[0].text
    if first in best_ends:
        return list(answers), None
    mine = [(p, hops) for p, hops, ends in walked if first in ends]
    if not mine:
        return list(answers), None
    if any(best_hops[: len(hops)] == hops or hops[: len(best_hops)] == best_hops for _, hops in mine):
        return list(answers), None  # answered on the likeliest plan's way, or past its end: nothing to prefer
    answered = max((p for p, _ in mine), key=lambda p: p.confidence)
    if best.confidence - answered.confidence < margin:
        return list(answers), None
    known = {(a.entity or a.text): a for a in answers}
    lead = [known.get(e) or Answer(text=e, entity=e, in_graph=True, completed_from_graph=True, match="exact")
            for e in best_ends]
    leading = set(best_ends)
    rest = [a for a in answers if (a.entity or a.text) not in leading]
    return lead + rest, PlanLead(best.text, best.confidence, answered.text, answered.confidence, list(best_ends))
