"""Ground the LPKG query patterns (paper §3.2, Fig. 3) in a knowledge graph.

A pattern instance is a small logical query over the graph: projections
(``p``) follow a relation from a set of entities, intersections (``i``) and
unions (``u``) combine the answer sets of branches, and ``compare`` asks which
of two entities has the larger (or later) value of one numeric / date
relation.  Every instance carries *all* of its answers, computed from the
graph, so generated questions can be used as a benchmark.

Relations are followed in either direction (``Hop.inverse``): in many graphs
(MetaQA: film -> directed_by -> person) a two-hop question is only possible
by walking one relation backwards ("films directed by X", then "their
language").

Grounding samples with a seeded ``random.Random`` and rejects trivial
instances: empty or huge answer sets, answer sets that contain an anchor,
intersections equal to a branch, unions where one branch covers the other.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from datetime import date
from typing import Iterable, Sequence

from ..graph.knowledge_graph import KnowledgeGraph, Triplet

PATTERNS: tuple[str, ...] = ("1p", "2p", "3p", "2i", "3i", "2u", "ip", "pi", "compare")

PATTERN_NAMES: dict[str, str] = {
    "1p": "One Projection",
    "2p": "Two Projection",
    "3p": "Three Projection",
    "2i": "Two Intersection",
    "3i": "Three Intersection",
    "2u": "Two Union",
    "ip": "Intersection Projection",
    "pi": "Projection Intersection",
    "compare": "Comparison",
}


class PatternError(ValueError):
    """An unknown pattern name, or a graph in which a pattern cannot be grounded."""


def parse_pattern_list(text: str | Sequence[str] | None) -> list[str]:
    """``"2p,2i"`` (or a list) -> validated pattern names; ``None``/``"all"`` -> every pattern."""
    if text is None:
        return list(PATTERNS)
    items = [p.strip() for p in (text.split(",") if isinstance(text, str) else text)]
    items = [p for p in items if p]
    if not items or items == ["all"]:
        return list(PATTERNS)
    unknown = [p for p in items if p not in PATTERNS]
    if unknown:
        raise PatternError(f"unknown pattern(s) {', '.join(unknown)}; choose from {', '.join(PATTERNS)}")
    return list(dict.fromkeys(items))


# ---------------------------------------------------------------- structure
@dataclass(frozen=True)
class Hop:
    """Follow ``relation`` head -> tail, or tail -> head when ``inverse``."""

    relation: str
    inverse: bool = False

    def label(self) -> str:
        return f"{self.relation}⁻¹" if self.inverse else self.relation

    def reversed(self) -> "Hop":
        return Hop(self.relation, not self.inverse)


@dataclass(frozen=True)
class Branch:
    """A relation path starting at an anchor entity."""

    anchor: str
    hops: tuple[Hop, ...]


@dataclass(frozen=True)
class CompareSpec:
    """Two entities with values of the same relation; the answer is the larger (or smaller)."""

    relation: str
    entities: tuple[str, str]
    values: tuple[str, str]
    mode: str  # "larger" | "smaller"
    kind: str  # "number" | "date"


@dataclass(frozen=True)
class SubQuery:
    """One sub-question of an instance, in plan order.

    ``subject`` is an entity name, or a plan placeholder (``Ans_1``,
    ``Inter_1``) when the sub-question depends on an earlier answer.
    """

    subject: str
    hop: Hop
    placeholder: bool = False


@dataclass
class PatternInstance:
    """A grounded pattern with every answer the graph gives it."""

    pattern: str
    branches: tuple[Branch, ...]
    then: Hop | None = None  # ip: projection applied to the intersection
    compare: CompareSpec | None = None
    answers: tuple[str, ...] = ()
    sub_answers: tuple[tuple[str, ...], ...] = ()
    support: tuple[tuple[str, str, str], ...] = ()

    def comparison(self) -> CompareSpec:
        """The compared entities and values of a ``compare`` instance (any other pattern has none)."""
        if self.compare is None:
            raise ValueError(f"a {self.pattern} instance compares nothing")
        return self.compare

    @property
    def anchors(self) -> list[str]:
        if self.compare is not None:
            return list(self.compare.entities)
        return list(dict.fromkeys(b.anchor for b in self.branches))

    @property
    def depth(self) -> int:
        """The longest relation path from an anchor (how far answers can be)."""
        if self.compare is not None:
            return 1
        longest = max(len(b.hops) for b in self.branches)
        return longest + (1 if self.then is not None else 0)

    def signature(self) -> tuple:
        return (self.pattern, self.branches, self.then, self.compare)

    def sub_queries(self) -> list[SubQuery]:
        """The sub-questions of the plan, in the order the plan asks them."""
        p = self.pattern
        if p == "compare":
            assert self.compare is not None
            hop = Hop(self.compare.relation)
            return [SubQuery(e, hop) for e in self.compare.entities]
        if p in ("1p", "2p", "3p"):
            b = self.branches[0]
            out = [SubQuery(b.anchor, b.hops[0])]
            for k, hop in enumerate(b.hops[1:], start=1):
                out.append(SubQuery(f"Ans_{k}", hop, placeholder=True))
            return out
        if p in ("2i", "3i", "2u"):
            return [SubQuery(b.anchor, b.hops[0]) for b in self.branches]
        if p == "ip":
            assert self.then is not None
            return [SubQuery(b.anchor, b.hops[0]) for b in self.branches] + [
                SubQuery("Inter_1", self.then, placeholder=True)
            ]
        if p == "pi":
            b1, b2 = self.branches
            return [
                SubQuery(b1.anchor, b1.hops[0]),
                SubQuery("Ans_1", b1.hops[1], placeholder=True),
                SubQuery(b2.anchor, b2.hops[0]),
            ]
        raise PatternError(f"unknown pattern {p!r}")

    def to_dict(self) -> dict:
        out: dict = {
            "pattern": self.pattern,
            "branches": [
                {"anchor": b.anchor, "hops": [[h.relation, h.inverse] for h in b.hops]} for b in self.branches
            ],
            "answers": list(self.answers),
        }
        if self.then is not None:
            out["then"] = [self.then.relation, self.then.inverse]
        if self.compare is not None:
            c = self.compare
            out["compare"] = {
                "relation": c.relation, "entities": list(c.entities), "values": list(c.values),
                "mode": c.mode, "kind": c.kind,
            }
        return out


@dataclass
class GroundingLimits:
    """What makes an instance worth asking: small, non-empty answer sets."""

    max_answers: int = 10
    max_intermediate: int = 30
    attempts_per_instance: int = 400


# ---------------------------------------------------------------- graph walking
def step(graph: KnowledgeGraph, entity: str, hop: Hop) -> list[Triplet]:
    """The triplets that take ``entity`` one ``hop`` further."""
    if hop.inverse:
        return [t for t in graph.in_triplets(entity) if t.relation == hop.relation]
    return [t for t in graph.out_triplets(entity) if t.relation == hop.relation]


def target(triplet: Triplet, hop: Hop) -> str:
    return triplet.head if hop.inverse else triplet.tail


def project(graph: KnowledgeGraph, entities: Iterable[str], hop: Hop) -> set[str]:
    """Every entity reached from ``entities`` by ``hop``."""
    return {target(t, hop) for e in entities for t in step(graph, e, hop)}


def follow(graph: KnowledgeGraph, branch: Branch) -> list[set[str]]:
    """The entity set after each hop of ``branch``."""
    sets: list[set[str]] = []
    current = {branch.anchor}
    for hop in branch.hops:
        current = project(graph, current, hop)
        sets.append(current)
    return sets


def evaluate(graph: KnowledgeGraph, inst: PatternInstance) -> tuple[set[str], list[set[str]]]:
    """(answers, answer set of each sub-query in plan order) of an instance on ``graph``."""
    p = inst.pattern
    if p == "compare":
        c = inst.compare
        assert c is not None
        v = [parse_value(x) for x in c.values]
        if v[0] is None or v[1] is None or v[0][1] == v[1][1]:
            return set(), [{c.values[0]}, {c.values[1]}]
        bigger = 0 if v[0][1] > v[1][1] else 1
        pick = bigger if c.mode == "larger" else 1 - bigger
        return {c.entities[pick]}, [{c.values[0]}, {c.values[1]}]
    if p in ("1p", "2p", "3p"):
        sets = follow(graph, inst.branches[0])
        return set(sets[-1]), sets
    branch_sets = [follow(graph, b) for b in inst.branches]
    if p in ("2i", "3i"):
        ans = set.intersection(*(s[-1] for s in branch_sets))
        return ans, [s[0] for s in branch_sets]
    if p == "2u":
        return set.union(*(s[-1] for s in branch_sets)), [s[0] for s in branch_sets]
    if p == "ip":
        assert inst.then is not None
        inter = branch_sets[0][-1] & branch_sets[1][-1]
        ans = project(graph, inter, inst.then)
        return ans, [branch_sets[0][0], branch_sets[1][0], ans]
    if p == "pi":
        ans = branch_sets[0][-1] & branch_sets[1][-1]
        return ans, [branch_sets[0][0], branch_sets[0][1], branch_sets[1][0]]
    raise PatternError(f"unknown pattern {p!r}")


def branch_support(graph: KnowledgeGraph, branch: Branch, targets: set[str]) -> list[Triplet]:
    """The triplets on paths of ``branch`` that end in ``targets`` (walked backwards)."""
    sets = [{branch.anchor}] + follow(graph, branch)
    keep: list[Triplet] = []
    wanted = set(targets)
    for i in range(len(branch.hops) - 1, -1, -1):
        hop = branch.hops[i]
        sources = sets[i]
        layer = [t for e in sources for t in step(graph, e, hop) if target(t, hop) in wanted]
        keep.extend(layer)
        wanted = {t.tail if hop.inverse else t.head for t in layer}
    return keep


def instance_support(graph: KnowledgeGraph, inst: PatternInstance, cap: int = 60) -> list[Triplet]:
    """Triplets that justify the instance's answers (its gold chain), at most ``cap``."""
    out: list[Triplet] = []
    answers = set(inst.answers)
    if inst.compare is not None:
        c = inst.compare
        for e, v in zip(c.entities, c.values):
            t = graph.find(e, c.relation, v)
            if t is not None:
                out.append(t)
        return out
    if inst.pattern == "ip":
        assert inst.then is not None
        sets = [follow(graph, b)[-1] for b in inst.branches]
        inter = sets[0] & sets[1]
        last = [t for e in inter for t in step(graph, e, inst.then) if target(t, inst.then) in answers]
        mids = {t.tail if inst.then.inverse else t.head for t in last}
        for b in inst.branches:
            out.extend(branch_support(graph, b, mids))
        out.extend(last)
    else:
        for b in inst.branches:
            out.extend(branch_support(graph, b, answers))
    seen: set[int] = set()
    unique = []
    for t in out:
        if t.id not in seen:
            seen.add(t.id)
            unique.append(t)
    return unique[:cap]


# ---------------------------------------------------------------- values (compare)
_NUMBER = re.compile(r"[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?|[-+]?\d+(?:\.\d+)?")
_DATE = re.compile(r"(\d{4})-(\d{2})(?:-(\d{2}))?(?:[T ].*)?")


def parse_value(text: str) -> tuple[str, float] | None:
    """``("number", x)`` or ``("date", ordinal)`` for a literal, else None."""
    s = text.strip().strip('"')
    m = _DATE.fullmatch(s)
    if m:
        try:
            d = date(int(m.group(1)), int(m.group(2)), int(m.group(3) or 1))
        except ValueError:
            return None
        return ("date", float(d.toordinal()))
    if _NUMBER.fullmatch(s):
        return ("number", float(s.replace(",", "")))
    return None


# ---------------------------------------------------------------- grounding
class _GraphIndex:
    """Per-graph lists the samplers draw from (built once per grounding run)."""

    def __init__(self, graph: KnowledgeGraph) -> None:
        self.entities = sorted(graph.entities)
        self.triplets = sorted(graph.triplets, key=lambda t: t.id)
        self.by_relation: dict[str, list[Triplet]] = {}
        for t in self.triplets:
            self.by_relation.setdefault(t.relation, []).append(t)
        self.value_relations: dict[str, str] = {}
        for rel, ts in sorted(self.by_relation.items()):
            kinds = [parse_value(t.tail) for t in ts]
            parsed = [k for k in kinds if k is not None]
            if len(ts) >= 2 and len(parsed) >= 0.8 * len(ts):
                majority = max(("number", "date"), key=lambda k: sum(1 for p in parsed if p[0] == k))
                self.value_relations[rel] = majority


def _hop_into(t: Triplet, entity: str) -> tuple[str, Hop]:
    """(anchor, hop) such that following hop from anchor over ``t`` reaches ``entity``."""
    if t.tail == entity:
        return t.head, Hop(t.relation, False)
    return t.tail, Hop(t.relation, True)


def _hop_from(t: Triplet, entity: str) -> tuple[Hop, str]:
    """(hop, reached entity) for walking ``t`` away from ``entity``."""
    if t.head == entity:
        return Hop(t.relation, False), t.tail
    return Hop(t.relation, True), t.head


class Grounder:
    """Samples non-trivial instances of each pattern from one graph."""

    def __init__(self, graph: KnowledgeGraph, seed: int = 0, limits: GroundingLimits | None = None) -> None:
        self.graph = graph
        self.rng = random.Random(seed)
        self.limits = limits or GroundingLimits()
        self.index = _GraphIndex(graph)

    # -- public
    def ground(self, pattern: str) -> PatternInstance | None:
        """One instance of ``pattern``, or None if the attempt budget ran out."""
        sampler = getattr(self, f"_sample_{pattern}", None)
        if sampler is None:
            raise PatternError(f"unknown pattern {pattern!r}; choose from {', '.join(PATTERNS)}")
        if not self.index.triplets:
            return None
        for _ in range(self.limits.attempts_per_instance):
            inst = sampler()
            if inst is not None and self._finish(inst):
                return inst
        return None

    # -- helpers
    def _entity(self) -> str:
        return self.rng.choice(self.index.entities)

    def _edge(self, entity: str, exclude: Triplet | None = None) -> Triplet | None:
        options = [t for t in self.graph.neighbours(entity) if exclude is None or t.id != exclude.id]
        return self.rng.choice(options) if options else None

    def _small(self, s: set[str]) -> bool:
        return 0 < len(s) <= self.limits.max_intermediate

    def _finish(self, inst: PatternInstance) -> bool:
        """Compute answers; reject trivial instances."""
        answers, subs = evaluate(self.graph, inst)
        if not answers or len(answers) > self.limits.max_answers:
            return False
        if inst.compare is None and answers & set(inst.anchors):
            return False  # "what is X's ... of ... of X" answered by X itself
        if any(not s for s in subs):
            return False
        if any(len(s) > self.limits.max_intermediate for s in subs):
            return False
        inst.answers = tuple(sorted(answers))
        inst.sub_answers = tuple(tuple(sorted(s)) for s in subs)
        inst.support = tuple(t.as_tuple for t in instance_support(self.graph, inst))
        return True

    def _path(self, length: int) -> PatternInstance | None:
        anchor = self._entity()
        current, hops, prev_hop = anchor, [], None
        for _ in range(length):
            t = self._edge(current)
            if t is None:
                return None
            hop, nxt = _hop_from(t, current)
            if prev_hop is not None and hop == prev_hop.reversed():
                return None  # walking straight back (A -> x -> A-like answers)
            hops.append(hop)
            prev_hop, current = hop, nxt
        branch = Branch(anchor, tuple(hops))
        sets = follow(self.graph, branch)
        if not all(self._small(s) for s in sets[:-1]):
            return None
        return PatternInstance(f"{length}p", (branch,))

    def _sample_1p(self) -> PatternInstance | None:
        return self._path(1)

    def _sample_2p(self) -> PatternInstance | None:
        return self._path(2)

    def _sample_3p(self) -> PatternInstance | None:
        return self._path(3)

    def _meeting_branches(self, answer: str, k: int) -> list[Branch] | None:
        """``k`` one-hop branches from distinct anchors that all reach ``answer``."""
        edges = self.graph.neighbours(answer)
        if len(edges) < k:
            return None
        chosen = self.rng.sample(edges, k)
        branches = []
        for t in chosen:
            anchor, hop = _hop_into(t, answer)
            branches.append(Branch(anchor, (hop,)))
        if len({b.anchor for b in branches}) < k or answer in {b.anchor for b in branches}:
            return None
        return branches

    def _intersection(self, k: int, name: str) -> PatternInstance | None:
        branches = self._meeting_branches(self._entity(), k)
        if branches is None:
            return None
        sets = [follow(self.graph, b)[-1] for b in branches]
        inter = set.intersection(*sets)
        if any(inter == s for s in sets):
            return None  # one branch alone already gives the answer
        return PatternInstance(name, tuple(branches))

    def _sample_2i(self) -> PatternInstance | None:
        return self._intersection(2, "2i")

    def _sample_3i(self) -> PatternInstance | None:
        return self._intersection(3, "3i")

    def _sample_2u(self) -> PatternInstance | None:
        t1 = self.rng.choice(self.index.triplets)
        forward = self.rng.random() < 0.5
        hop = Hop(t1.relation, not forward)
        a1 = t1.head if forward else t1.tail
        same = self.index.by_relation[t1.relation]
        t2 = self.rng.choice(same)
        a2 = t2.head if forward else t2.tail
        if a1 == a2:
            return None
        b1, b2 = Branch(a1, (hop,)), Branch(a2, (hop,))
        s1, s2 = follow(self.graph, b1)[-1], follow(self.graph, b2)[-1]
        if s1 <= s2 or s2 <= s1:
            return None
        return PatternInstance("2u", (b1, b2))

    def _sample_ip(self) -> PatternInstance | None:
        mid = self._entity()
        branches = self._meeting_branches(mid, 2)
        if branches is None:
            return None
        t = self._edge(mid)
        if t is None:
            return None
        then, _ = _hop_from(t, mid)
        if any(then == b.hops[0].reversed() for b in branches):
            return None
        inter = follow(self.graph, branches[0])[-1] & follow(self.graph, branches[1])[-1]
        if not self._small(inter):
            return None
        return PatternInstance("ip", tuple(branches), then=then)

    def _sample_pi(self) -> PatternInstance | None:
        answer = self._entity()
        t2 = self._edge(answer)
        if t2 is None:
            return None
        a2, hop3 = _hop_into(t2, answer)
        t1 = self._edge(answer, exclude=t2)
        if t1 is None:
            return None
        mid, hop2 = _hop_into(t1, answer)
        t0 = self._edge(mid, exclude=t1)
        if t0 is None:
            return None
        a1, hop1 = _hop_into(t0, mid)
        if len({a1, a2, answer}) < 3 or a1 == mid:
            return None
        b1, b2 = Branch(a1, (hop1, hop2)), Branch(a2, (hop3,))
        s1 = follow(self.graph, b1)
        if not self._small(s1[0]):
            return None
        s2 = follow(self.graph, b2)[-1]
        inter = s1[-1] & s2
        if inter == s1[-1] or inter == s2:
            return None
        return PatternInstance("pi", (b1, b2))

    def _sample_compare(self) -> PatternInstance | None:
        if not self.index.value_relations:
            return None
        rel = self.rng.choice(sorted(self.index.value_relations))
        kind = self.index.value_relations[rel]
        pool = self.index.by_relation[rel]
        t1, t2 = self.rng.choice(pool), self.rng.choice(pool)
        if t1.head == t2.head:
            return None
        for t in (t1, t2):  # one value per entity, or "which is larger" is ill-posed
            if len(step(self.graph, t.head, Hop(rel))) != 1:
                return None
        v1, v2 = parse_value(t1.tail), parse_value(t2.tail)
        if v1 is None or v2 is None or v1[0] != kind or v2[0] != kind or v1[1] == v2[1]:
            return None
        mode = self.rng.choice(("larger", "smaller"))
        spec = CompareSpec(rel, (t1.head, t2.head), (t1.tail, t2.tail), mode, kind)
        return PatternInstance("compare", (), compare=spec)


def ground_patterns(
    graph: KnowledgeGraph,
    patterns: Sequence[str],
    n: int,
    seed: int = 0,
    limits: GroundingLimits | None = None,
) -> list[PatternInstance]:
    """``n`` distinct instances, spread round-robin over ``patterns``.

    Patterns the graph cannot support (no numeric relation for ``compare``,
    no intersections) are skipped once their attempt budget fails; the caller
    sees fewer instances and `missing_patterns` says which.
    """
    patterns = parse_pattern_list(list(patterns))
    grounder = Grounder(graph, seed=seed, limits=limits)
    out: list[PatternInstance] = []
    seen: set[tuple] = set()
    active = list(patterns)
    i = 0
    failures: dict[str, int] = {p: 0 for p in patterns}
    while len(out) < n and active:
        pattern = active[i % len(active)]
        inst = grounder.ground(pattern)
        if inst is None or inst.signature() in seen:
            failures[pattern] += 1
            if inst is None or failures[pattern] >= 5:
                active.remove(pattern)
                continue
        else:
            seen.add(inst.signature())
            out.append(inst)
        i += 1
    return out


def missing_patterns(patterns: Sequence[str], instances: Sequence[PatternInstance]) -> list[str]:
    have = {i.pattern for i in instances}
    return [p for p in patterns if p not in have]
