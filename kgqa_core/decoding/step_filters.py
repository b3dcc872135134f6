"""What a DoG step may offer beyond the paper: small filters applied in order, like a `LogitsProcessorList`.

The paper's step offers every triplet of the chain's G_q (§2.3).  The
workbench's guidance narrows that offer from the question's reading
(`kgqa_core.reading`), one piece at a time, each a `StepFilter`:

* `WithinDepth` (``stay_at_depth``): a chain as deep as the question's
  reading says is offered nothing further out;
* `PlannedRelations` (``question_relations``, ``hop_order``): only the
  relations the reading plans, each at most as often as planned, each hop its
  own relation when the order is known;
* `WalkOut` (``walk_to_depth``, ``walk_out_first``): a chain short of the
  reading's depth is offered only triplets that lead on; it also decides
  when an answer line came too early (`ChainBeam` takes that line back).
* `NoRestatement` (``skip_restatements``, not from the reading): a fact the
  chain already holds is not offered again read the other way round
  ("oklahoma borders texas" after "texas borders oklahoma").

`StepFilters` applies a list of them; the paper preset is the empty list.
A filter that would leave a step nothing to write (a dead end) leaves the
offer as it was, and every narrowing is counted and said in plain words on
the step and in the trace's notes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol, Sequence

from .step_offers import chain_depth, frontier_triplets, of_named_relations, within_depth


@dataclass
class StepView:
    """Where a chain stands at a step: what a filter reads."""

    graph: Any
    chain: Sequence[int]
    topics: Sequence[str]
    guides: Any  # DogGuides: `restricted` narrows a guide

    @cached_property
    def depth(self) -> int:
        """Hops from the topic entities the chain reaches (read once per step, by every filter that asks)."""
        return chain_depth(self.graph, self.chain, self.topics)


class StepFilter(Protocol):
    """Narrows one step's guide; says what it did over the run (`summary`) and on the step (returned note)."""

    name: str

    def apply(self, view: StepView, guide: Any) -> tuple[Any, str]: ...

    def summary(self) -> str: ...


def _left_out(graph: Any, before: Sequence[int], after: Sequence[int], limit: int = 4) -> str:
    """The relations of the triplets a narrowing left out, for a note ("plays_position x3, ...")."""
    kept = set(after)
    counts: dict[str, int] = {}
    for t in graph.triplets_by_ids([i for i in before if i not in kept]):
        counts[t.relation] = counts.get(t.relation, 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    said = ", ".join(f"{r} x{n}" if n > 1 else r for r, n in ranked[:limit])
    return said + (f" and {len(ranked) - limit} more relation(s)" if len(ranked) > limit else "")


@dataclass
class WithinDepth:
    """A chain standing `max_depth` hops out is offered only triplets within that depth (none left: it concludes)."""

    max_depth: int
    name: str = "stay_at_depth"
    steps: int = 0

    def apply(self, view: StepView, guide: Any) -> tuple[Any, str]:
        if self.max_depth <= 0 or not guide.may_open or view.depth < self.max_depth:
            return guide, ""
        ids = within_depth(view.graph, view.chain, view.topics, guide.allowed_ids, self.max_depth)
        if len(ids) == len(guide.allowed_ids):
            return guide, ""
        self.steps += 1
        note = (f"the chain already stands {view.depth} hop(s) from the question's entity, as far as the question "
                f"reaches: {len(guide.allowed_ids) - len(ids)} triplet(s) further out were not offered "
                f"({_left_out(view.graph, guide.allowed_ids, ids)})")
        return view.guides.restricted(guide, ids), note

    def summary(self) -> str:
        if not self.steps:
            return ""
        return (f"{self.name}: {self.steps} step(s) offered only triplets within {self.max_depth} hop(s) of the "
                "question's entity (as far as the question's reading reaches)")


@dataclass
class PlannedRelations:
    """Only the relations the reading plans, each walked at most as often as planned, in the planned order if known.

    "What languages are the films that share directors with X" plans
    `directed_by` twice and `in_language` once; the 1.5B model, offered
    everything, wrote the film's genre and walked through comedies.  A step
    where nothing planned is left offers everything, unless the chain is as
    deep as the plan (then it concludes: nothing else is asked for).
    """

    relations: frozenset[str]
    uses: dict[str, int] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)
    min_depth: int = 0
    name: str = "question_relations"
    whose: str = "the relations the question's reading plans"  # in the notes: where the relations come from
    seen: int = 0
    narrowed: int = 0
    fell_back: int = 0

    def apply(self, view: StepView, guide: Any) -> tuple[Any, str]:
        if not self.relations or not guide.may_open:
            return guide, ""
        self.seen += 1
        ids = of_named_relations(view.graph, view.chain, view.topics, guide.allowed_ids, self.relations, self.uses,
                                 self.order)
        if not ids and self.min_depth > 0 and view.depth >= self.min_depth:
            self.narrowed += 1
            return view.guides.restricted(guide, []), (
                "the chain has walked every relation the question's reading plans: no further triplet was "
                "offered, so it concludes")
        if not ids:
            self.fell_back += 1
            return guide, (f"no triplet of {self.whose} leads on from here: every triplet was offered "
                           "(the plan was set aside for this step)")
        if len(ids) == len(guide.allowed_ids):
            return guide, ""
        self.narrowed += 1
        note = (f"offered only {self.whose} ({', '.join(sorted(self.relations))}): "
                f"{len(guide.allowed_ids) - len(ids)} of {len(guide.allowed_ids)} triplets left out "
                f"({_left_out(view.graph, guide.allowed_ids, ids)})")
        return view.guides.restricted(guide, ids), note

    def summary(self) -> str:
        if not self.narrowed and not self.fell_back:
            return ""
        said = ", ".join(f"{r} x{self.uses[r]}" if r in self.uses else r for r in sorted(self.relations))
        out = f"{self.name}: {self.narrowed} of {self.seen} step(s) offered only triplets of {self.whose} ({said})"
        if self.order and self.uses:
            out += f", each hop its own in the planned order ({' -> '.join(self.order)}; hop_order)"
        if self.fell_back:
            out += f"; {self.fell_back} step(s) found none of them and were offered everything"
        return out


def likely_relations(plans: Sequence[Any], mass: float) -> tuple[frozenset[str], int, float]:
    """The relations of the reading's most probable plans that together hold at least `mass` of its probability.

    An unsure reading spreads its probability over several plans; the
    relations of all of them (``unsure_relations``) narrow a step less the
    less sure it is, and not at all once the plans cover every relation the
    step offers.  Returns the relations, how many plans were taken and the
    probability they hold.

    >>> from kgqa_core.reading.reading import PlanHop, RelationPlan
    >>> plans = [RelationPlan("x", (PlanHop("borders"), PlanHop("capital")), 0.4),
    ...          RelationPlan("x", (PlanHop("borders"),) * 3, 0.35), RelationPlan("x", (PlanHop("area"),), 0.25)]
    >>> relations, taken, held = likely_relations(plans, 0.7)
    >>> sorted(relations), taken, held
    (['borders', 'capital'], 2, 0.75)
    """
    taken, held = likeliest_plans(plans, mass)
    return frozenset(h.relation for p in taken for h in p.hops), len(taken), held


def likeliest_plans(plans: Sequence[Any], mass: float) -> tuple[list[Any], float]:
    """The reading's most probable plans, in order, until they hold at least `mass` of its probability, and the
    probability they hold (rounded to 4 places): what `likely_relations` and `likely_depth` read."""
    taken, held = [], 0.0
    for p in plans:
        if held >= mass:
            break
        taken.append(p)
        held += p.confidence
    return taken, round(held, 4)


def likely_depth(plans: Sequence[Any], mass: float) -> tuple[int, int, float]:
    """How many hops every one of the reading's most probable plans walks, those holding at least `mass` of its
    probability: the fewest hops among them (0 when there is no plan).

    An unsure reading may be unsure which relations the question asks for and still sure how far it goes ("the
    films that have the same actor of X": starred_actors then directed_by back, 46%, or starred_actors there and
    back, 39%: two hops either way), so the depth can guide a chain its relations cannot (``unsure_depth``).
    Returns the depth, how many plans were taken and the probability they hold.

    >>> from kgqa_core.reading.reading import PlanHop, RelationPlan
    >>> plans = [RelationPlan("x", (PlanHop("a"), PlanHop("b")), 0.46), RelationPlan("x", (PlanHop("a"),) * 2, 0.4),
    ...          RelationPlan("x", (PlanHop("c"),), 0.14)]
    >>> likely_depth(plans, 0.8)
    (2, 2, 0.86)
    >>> likely_depth(plans, 0.9)[0]  # the one-hop plan is among those needed for 90%
    1
    """
    taken, held = likeliest_plans(plans, mass)
    return min((len(p.hops) for p in taken), default=0), len(taken), held


@dataclass
class NoRestatement:
    """A triplet linking two entities by a relation the chain already links them by is not offered.

    A graph that stores a symmetric relation both ways ("texas borders
    oklahoma", "oklahoma borders texas") offers each step the way back to
    where the chain came from; the 1.5B model took it ("the capital of the
    states that border texas": texas -> oklahoma -> texas -> ...) and spent
    its steps going back and forth.  The same two entities by *another*
    relation stay offered (a film its director also wrote).  Graph structure
    only: no reading, no word.
    """

    name: str = "skip_restatements"
    steps: int = 0
    left_out: int = 0

    def apply(self, view: StepView, guide: Any) -> tuple[Any, str]:
        if not view.chain or not guide.may_open or not guide.allowed_ids:
            return guide, ""
        held = {(t.relation, frozenset((t.head, t.tail))) for t in view.graph.triplets_by_ids(view.chain)}
        allowed = list(guide.allowed_ids)
        ids, gone = [], []
        for i, t in zip(allowed, view.graph.triplets_by_ids(allowed)):
            (gone if (t.relation, frozenset((t.head, t.tail))) in held else ids).append((i, t))
        if not gone or not ids:
            return guide, ""
        self.steps += 1
        self.left_out += len(gone)
        said = "; ".join(f"{t.head} -{t.relation}-> {t.tail}" for _, t in gone[:2])
        return view.guides.restricted(guide, [i for i, _ in ids]), (
            f"{len(gone)} triplet(s) that say again what the chain holds, read the other way, were "
            f"not offered ({said}{'; ...' if len(gone) > 2 else ''})")

    def summary(self) -> str:
        if not self.steps:
            return ""
        return (f"{self.name}: {self.steps} step(s) were not offered {self.left_out} triplet(s) restating, the "
                "other way round, a fact the chain already held")


@dataclass
class Narrowed:
    """A step offered only the triplets leading on from the chain's farthest entities, and why."""

    offered: int
    of: int
    depth: int  # hops from the topic entity the chain stood at
    min_depth: int
    steps_left: int  # triplets the chain may still write, this one included


@dataclass
class WalkOut:
    """Walk out to the reading's depth: narrow to the way out, and tell when an answer line came too early.

    A chain must go out when it stands fewer hops out than `min_depth` and
    either `first` is set (``walk_out_first``), it was taken back for
    answering early, or its triplets left are no more than the hops it
    still needs.  Unchanged when no triplet leads on.
    """

    min_depth: int
    first: bool = False
    max_steps: int = 0
    name: str = "walk_to_depth"

    def narrow(self, view: StepView, guide: Any, walked_on: int = 0,
               taken_back: bool = False) -> tuple[Any, Narrowed | None]:
        if self.min_depth <= 0 or not guide.may_open:
            return guide, None
        depth = view.depth
        need = self.min_depth - depth
        steps_left = self.max_steps - len(view.chain)
        if need <= 0 or not (self.first or taken_back or walked_on > 0 or steps_left <= need):
            return guide, None
        onward = frontier_triplets(view.graph, view.chain, view.topics, guide.allowed_ids)
        if not onward:
            return guide, None
        return view.guides.restricted(guide, onward), Narrowed(len(onward), len(guide.allowed_ids), depth,
                                                               self.min_depth, steps_left)

    def too_early(self, view: StepView, walked_on: int, stop: str, answered: bool) -> bool:
        """An answer line written fewer hops out than the reading says (and take-backs left)."""
        if self.min_depth <= 0 or walked_on >= self.min_depth or stop not in ("eos", "stop", "length", "repeat"):
            return False
        return answered and view.depth < self.min_depth


@dataclass
class ConcludeAtDepth:
    """A sure reading's walk is done: the chain writes its answer line where its path completes the plan.

    Why: once a chain's path from the topic entity has walked the plan's
    relations to its last hop, the graph holds the rest of the list
    (`complete_answers` adds every entity that path reaches), so the sibling
    triplets a small model lists next ("virginia -> has city -> richmond",
    "... -> alexandria", ...) cost tokens and add no answer.  Only for a sure
    reading of one entity (the caller decides); the answer line is written
    by the model after "Therefore, the answer is", as for any forced
    conclusion, its first item chosen among the entities the path reaches
    (`decoders.answer_among`).  The trace counts it (``extra.concluded_at_depth``).
    """

    relations: tuple[str, ...]  # the plan's relations, in walking order
    confidence: float = 1.0
    among_reached: bool = True  # the line's item chosen among the entities the path reaches (`decoders.answer_among`)

    def reached(self, graph: Any, chain: Sequence[int], topics: Sequence[str]) -> bool:
        """Whether the chain's latest path from a topic entity walks exactly the planned relations."""
        from ..answers.completion import chain_path

        if not chain or not self.relations:
            return False
        path = chain_path(graph.triplets_by_ids(list(chain)), topics)
        return path is not None and tuple(r for r, _ in path[1]) == self.relations

    def note(self) -> str:
        walk = " -> ".join(self.relations)
        return (f"conclude_at_depth: the chain's path walked the question's reading to its end ({walk}, "
                f"{self.confidence:.0%} sure), so the answer line was written there instead of more triplets of "
                "that hop, and ended after its first answer"
                + (", which the model chose among the entities the path reaches and those the chain wrote (their "
                   "names' trie)"
                   if self.among_reached else "")
                + "; the graph adds the other entities the path reaches (complete_answers)")


class StepFilters(list):
    """A list of `StepFilter`, applied in order (the paper preset: empty)."""

    def apply(self, view: StepView, guide: Any) -> tuple[Any, list[str]]:
        notes = []
        for f in self:
            guide, note = f.apply(view, guide)
            if note:
                notes.append(note)
        return guide, notes

    def summaries(self) -> list[str]:
        return [s for s in (f.summary() for f in self) if s]
