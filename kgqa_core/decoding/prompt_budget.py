"""How many graph triplets DoG's prompt shows, from how sure the question's reading is.

Why: after the cached instructions and examples, reading the prompt's graph
context is the largest part of a DoG question's prompt (issue 32: a median
559 tokens beyond the cached prefix on held-out graphs, 40 triplets).  When
the question's reading (`kgqa_core.reading`) is sure, it already says which
relations lead from the topic entity to the answer; the triplets along its
best plan, then the context's other triplets of its planned relations, are
what the chain will write, and the rest of the context is mostly
distraction.  So a sure reading gets a smaller context with those triplets
first (``sure_context_triplets``, 40 -> 8 by default); an unsure reading, or the
paper preset, keeps the pruned context as it was.  The chain's constraint
(G_q) does not depend on what the prompt shows when G_q grows over the whole
graph (``gq_scope="graph"``, the default), so a smaller prompt never takes a
triplet away from the chain -- but it takes it out of the model's sight: on
the multi-domain dev benchmark (issue 32) a sure (0.58) but wrong reading
hid the triplet the model answered from.  So DoG's default asks more of the
reading for this than for its guidance: 8 triplets at 0.9 sure
(``sure_context_at``), where the dev benchmark lost no answer and no F1.

`sure_context` chooses the triplets and says why, in a `PromptBudget` the
method records in the trace (a note and ``trace.extra["prompt_budget"]``).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

PLAN_WALK_CAP = 200  # entities followed per hop of the plan walk (a hub's triplets are not all shown anyway)


@dataclass(frozen=True)
class PromptBudget:
    """The context the prompt shows for one question, and why."""

    applied: bool  # False: the pruned context as it was (unsure reading, switched off, or already small)
    shown: int  # triplets in the prompt
    of: int  # triplets of the pruned context (max_prompt_triplets)
    planned: int = 0  # of the shown, how many lie on the reading's planned relations (shown first)
    budget: int = 0  # sure_context_triplets
    confidence: float = 0.0
    sure_at: float = 0.0
    plan: str = ""  # the reading's best plan, as the workbench writes it
    why: str = ""
    added: list[int] = field(default_factory=list)  # plan triplets shown that the pruned context did not hold
    # "sure": the reading is very sure (sure_context_triplets, its best plan first); "guided": it guides the steps
    # but is less sure (guided_context_triplets, the walks of its likeliest plans first)
    tier: str = "sure"
    plans: int = 1  # the reading's plans whose walks are shown first

    def note(self) -> str:
        """One line for the trace, in words a domain expert reads."""
        if not self.applied:
            return f"prompt budget: {self.shown} triplets shown ({self.why})"
        if self.tier == "guided":
            return (f"prompt budget: {self.shown} of {self.of} triplets shown, the {self.planned} along the question "
                    f"reading's {self.plans} likeliest plan(s) ({self.plan}) first, because the reading is fairly "
                    f"sure ({self.confidence:.2f} >= {self.sure_at:.2f}) but not very sure; budget "
                    f"guided_context_triplets={self.budget}")
        return (f"prompt budget: {self.shown} of {self.of} triplets shown, the {self.planned} on the question's "
                f"planned relations ({self.plan}) first, because the question's reading is sure "
                f"({self.confidence:.2f} >= {self.sure_at:.2f}); budget sure_context_triplets={self.budget}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def plan_triplets(graph: Any, topic: str, hops: Sequence[Any], cap: int) -> list[int]:
    """The triplets of `graph` along one relation plan from `topic`, hop by hop, at most `cap`.

    `hops` are `kgqa_core.reading.reading.PlanHop`s (``relation``, ``forward``):
    forward walks head -> tail, backward tail -> head.  Order: nearest hop first,
    then the graph's own order, so the cut at `cap` keeps the first hops.
    """
    out: list[int] = []
    seen: set[int] = set()
    frontier = [topic]
    for hop in hops:
        nxt: list[str] = []
        for entity in frontier[:PLAN_WALK_CAP]:
            for t in graph.neighbours(entity):
                if t.relation != hop.relation or t.id in seen:
                    continue
                if hop.forward and t.head == entity:
                    nxt.append(t.tail)
                elif not hop.forward and t.tail == entity:
                    nxt.append(t.head)
                else:
                    continue
                seen.add(t.id)
                out.append(t.id)
                if len(out) >= cap:
                    return out
        frontier = list(dict.fromkeys(nxt))
    return out


MEETING_CAP = 16  # triplets where a reading's walks meet, shown first at most (of the prompt's 40 or 8)


def _walk_layers(graph: Any, topic: str, hops: Sequence[Any]) -> list[list[tuple[int, str, str]]]:
    """Each hop's triplets along one plan from `topic`: (triplet id, from entity, to entity), as `plan_triplets`
    walks (the same cap per hop)."""
    layers: list[list[tuple[int, str, str]]] = []
    frontier = [topic]
    for hop in hops:
        layer: list[tuple[int, str, str]] = []
        for entity in frontier[:PLAN_WALK_CAP]:
            for t in graph.neighbours(entity):
                if t.relation != hop.relation:
                    continue
                if hop.forward and t.head == entity:
                    layer.append((t.id, entity, t.tail))
                elif not hop.forward and t.tail == entity:
                    layer.append((t.id, entity, t.head))
        layers.append(layer)
        frontier = list(dict.fromkeys(to for _, _, to in layer))
    return layers


def meeting_triplets(graph: Any, reading: Any, cap: int = MEETING_CAP) -> tuple[list[int], list[str]]:
    """The triplets along a two-entity reading's walks to where they meet, and the entities they meet at.

    Why: a question naming two graph entities asks for what they share ("which of Karl Berg's doctoral students
    is from Norway"); its reading holds one walk from each (`reading.readers.joint_choice`), and the entities
    both walks reach are its candidates.  The facts that join them (Leo Rud's advisor, Leo Rud's nationality)
    are what the chain should write, but a context ranked by similarity to the question need not hold them.
    Each walk's triplets that lie on a way to a meeting entity, the walks taken in turn, at most `cap`; ([], [])
    when the reading has fewer than two entities' walks or they do not meet.

    Examples
    --------
    >>> from kgqa_core.graph.knowledge_graph import KnowledgeGraph
    >>> from kgqa_core.reading.reading import PlanHop, QuestionReading, RelationPlan
    >>> g = KnowledgeGraph.from_triplets([("Leo", "advisor", "Karl"), ("Leo", "nationality", "Norway"),
    ...                                   ("Nils", "advisor", "Karl"), ("Nils", "nationality", "Denmark")])
    >>> r = QuestionReading(reader="paths", plans=[RelationPlan("Karl", (PlanHop("advisor", False),)),
    ...                                            RelationPlan("Norway", (PlanHop("nationality", False),))])
    >>> ids, met = meeting_triplets(g, r)
    >>> met, [(g.triplet(i).head, g.triplet(i).relation) for i in ids]
    (['Leo'], [('Leo', 'advisor'), ('Leo', 'nationality')])
    """
    first: dict[str, Any] = {}
    for p in reading.plans:
        if p.hops and graph.has_entity(p.topic):
            first.setdefault(p.topic, p)
    if len(first) < 2:
        return [], []
    walks = {t: _walk_layers(graph, t, p.hops) for t, p in first.items()}
    reached = [{to for _, _, to in layers[-1]} if layers and layers[-1] else set() for layers in walks.values()]
    met = set.intersection(*reached) - set(first)
    if not met:
        return [], []
    per_walk: list[list[int]] = []
    for layers in walks.values():
        keep_to, kept = set(met), []
        for layer in reversed(layers):  # back from the meeting entities, hop by hop
            on_way = [(i, frm) for i, frm, to in layer if to in keep_to]
            kept.append([i for i, _ in on_way])
            keep_to = {frm for _, frm in on_way}
        per_walk.append([i for hop in reversed(kept) for i in hop])
    out: list[int] = []
    for k in range(max(len(w) for w in per_walk)):  # the walks in turn, so a cap keeps some of each
        for w in per_walk:
            if k < len(w) and w[k] not in out:
                out.append(w[k])
    order = {e: i for i, e in enumerate(dict.fromkeys(to for layers in walks.values() for _, _, to in layers[-1]))}
    return out[:cap], sorted(met, key=lambda e: order.get(e, 0))


def sure_context(context_ids: Sequence[int], graph: Any, reading: Any, sure_at: float, budget: int,
                 first: Sequence[int] = ()) -> tuple[list[int], PromptBudget]:
    """The triplet ids the prompt shows (in prompt order) and the `PromptBudget` saying why.

    With a sure reading (`QuestionReading.guides`) and ``budget`` > 0: the
    triplets along the reading's best plan (walked in `graph` from its topic
    entity), then the context's other triplets of the planned relations, then
    the rest of the context in its pruned order, cut to ``budget``; `first` (the
    triplets where a two-entity reading's walks meet, `meeting_triplets`) before
    all of them.  Else the context unchanged.
    """
    ids = list(context_ids)
    if budget <= 0:
        return ids, PromptBudget(False, len(ids), len(ids), why="no budget for sure readings (sure_context_triplets=0)")
    if not reading.guides(sure_at):
        why = ("the question was not read" if not reading.read else
               f"the question's reading is not sure ({reading.confidence:.2f} < {sure_at:.2f})")
        return ids, PromptBudget(False, len(ids), len(ids), confidence=reading.confidence, sure_at=sure_at,
                                 why=why + "; all of the pruned context is shown")
    if len(ids) <= budget:
        return ids, PromptBudget(False, len(ids), len(ids), budget=budget, confidence=reading.confidence,
                                 sure_at=sure_at, why=f"the pruned context is within the budget of {budget}")
    relations = set(reading.relations)
    best = reading.plans[0] if reading.plans else None
    walked = plan_triplets(graph, best.topic, best.hops, budget) if best is not None and graph.has_entity(
        best.topic) else []
    shown, on_plan, added = _planned_first(ids, graph, walked, relations, budget, first)
    return shown, PromptBudget(
        True, len(shown), len(ids), planned=on_plan, budget=budget, confidence=reading.confidence,
        sure_at=sure_at, plan=best.text if best is not None else ", ".join(sorted(relations)),
        why="sure reading", added=added)


def _planned_first(ids: Sequence[int], graph: Any, walked: Sequence[int], relations: set[str], budget: int,
                   first: Sequence[int]) -> tuple[list[int], int, list[int]]:
    """`first`, the walked triplets, the context's others of `relations`, then the rest, cut to `budget`; with how
    many came before the rest and which of those the context did not hold."""
    on_plan = list(dict.fromkeys([*first, *walked] + [t for t in ids if graph.triplet(t).relation in relations])
                   )[:budget]
    chosen, in_context = set(on_plan), set(ids)
    shown = on_plan + [t for t in ids if t not in chosen][:budget - len(on_plan)]
    return shown, len(on_plan), [t for t in on_plan if t not in in_context]


GUIDED_MASS = 0.9  # a guiding reading's likeliest plans, together this much of its probability, are walked first
GUIDED_PLANS = 3  # ... at most this many


def guided_context(context_ids: Sequence[int], graph: Any, reading: Any, guide_at: float, sure_at: float,
                   budget: int, first: Sequence[int] = ()) -> tuple[list[int], PromptBudget] | None:
    """The prompt's triplets for a reading that guides the steps but is not very sure, or None when none apply.

    Why: between the guidance's bar (``guide_at``) and the very sure one
    (``sure_at``) the reading's best plan is often, not always, the question's
    path; a context of its best plan alone hid the answer's triplet once on
    the dev benchmark (0.58 sure).  Here the walks of its likeliest plans,
    those holding `GUIDED_MASS` of its probability (at most `GUIDED_PLANS`),
    come first, taken in turn, then the context's other triplets of their
    relations, then the rest of the pruned context, cut to ``budget``.
    None when ``budget`` is 0, the reading does not guide or is very sure
    (`sure_context`'s), or the context is within the budget already.
    """
    ids = list(context_ids)
    if budget <= 0 or not reading.guides(guide_at) or reading.guides(sure_at) or len(ids) <= budget:
        return None
    plans, held = [], 0.0
    for p in reading.plans:
        if len(plans) >= GUIDED_PLANS or (plans and held >= GUIDED_MASS - 1e-9):
            break
        if p.text in {q.text for q in plans}:
            continue
        plans.append(p)
        held += p.confidence
    per_plan = [plan_triplets(graph, p.topic, p.hops, budget) if graph.has_entity(p.topic) else [] for p in plans]
    walked: list[int] = []
    for k in range(max((len(w) for w in per_plan), default=0)):  # the plans in turn, so the cut keeps some of each
        walked += [w[k] for w in per_plan if k < len(w)]
    relations = {h.relation for p in plans for h in p.hops}
    shown, on_plan, added = _planned_first(ids, graph, list(dict.fromkeys(walked)), relations, budget, first)
    return shown, PromptBudget(
        True, len(shown), len(ids), planned=on_plan, budget=budget, confidence=reading.confidence,
        sure_at=guide_at, plan="; ".join(p.text for p in plans), why="guiding reading", added=added,
        tier="guided", plans=len(plans))
