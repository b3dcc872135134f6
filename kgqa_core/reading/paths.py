"""The relation paths that exist in the graph from a question's topic entities.

A reader that plans in relation paths must only ever propose a path the
graph can walk: the model then chooses among facts the graph holds, never
among relations it imagined.  `relation_paths` walks out from each topic
entity hop by hop, grouping the triplets it meets by (relation, direction);
each group is one path, and the entities it reaches are where the next hop
starts.  Hubs are read through `capped_neighbours` and each path continues
from at most `fan` of its entities, so the walk costs a bounded number of
neighbour lookups on any graph store.

Examples
--------
>>> from kgqa_core.graph.knowledge_graph import KnowledgeGraph
>>> g = KnowledgeGraph.from_triplets([("Ann", "spouse", "Bob"), ("Bob", "ethnicity", "germans"),
...                                   ("Ann", "ethnicity", "dutch")])
>>> [p.text for p in relation_paths(g, ["Ann"], max_hops=2)]
['Ann -> ethnicity', 'Ann -> spouse', 'Ann -> spouse -> ethnicity']
>>> relation_paths(g, ["Ann"], max_hops=2)[-1].example_text
'Ann -spouse-> Bob -ethnicity-> germans'

"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import replace
from typing import Any, Sequence

from ..graph.hub_caps import capped_neighbours
from .reading import MAX_HOPS, PlanHop, RelationPlan


Walks = dict[str, tuple[str, ...]]  # each entity reached, with one walk there (its start first)


def step_out(graph: Any, ends: Walks, cap: int = 200, fan: int = 20) -> dict[PlanHop, Walks]:
    """One hop further from `ends` (at most `fan` of them), grouped by (relation, direction).

    Why one function: the reader's paths, the walk a plan follows and the hop past its horizon must walk the
    graph the same way (the same capped neighbours, the same fan, a walk never back to an entity it passed),
    or a plan the reader offered could reach other entities when it is followed.

    Returns
    -------
    For each (relation, direction) met, the entities it reaches, each with the first walk found there.
    """
    groups: dict[PlanHop, Walks] = {}
    for e in list(ends)[:fan]:
        for t in capped_neighbours(graph, e, cap, {})[0]:
            forward = t.head == e
            other = t.tail if forward else t.head
            if other not in ends[e]:  # a walk never comes back to an entity it passed
                groups.setdefault(PlanHop(t.relation, forward), {}).setdefault(other, ends[e] + (other,))
    return groups


def plan_ends(graph: Any, plan: RelationPlan, cap: int = 200, fan: int = 20) -> Walks:
    """The entities `plan` reaches from its topic, each with one walk there (as `relation_paths` walks)."""
    ends: Walks = {plan.topic: (plan.topic,)}
    for hop in plan.hops:
        ends = step_out(graph, ends, cap, fan).get(hop, {})
    return ends


# the paths walked lately, per graph content: a question's walks are wanted by the relation names' descriptions
# (`guidance._describe`) and then by its reader, and again when a method re-reads it (plans are frozen)
_WALKED: "OrderedDict[tuple, tuple[RelationPlan, ...]]" = OrderedDict()
_WALKED_LIMIT = 16
_WALKED_LOCK = threading.Lock()


def relation_paths(graph: Any, topics: Sequence[str], max_hops: int = MAX_HOPS, cap: int = 200, fan: int = 20,
                   max_paths: int = 3000) -> list[RelationPlan]:
    """Every relation path of 1..`max_hops` hops from each of `topics` that reaches an entity other than its start.

    Parameters
    ----------
    graph : a graph store (`neighbours`, `has_entity`).
    topics : the question's topic entities; those not in the graph are skipped.
    max_hops : the longest path.
    cap : triplets read around any one entity (`capped_neighbours`).
    fan : entities of a path the next hop starts from.
    max_paths : paths returned at most (shorter paths first).

    Returns
    -------
    One `RelationPlan` per path (confidence 0), by length, then topic, then relation labels.  A path over the
    same relations as an earlier one (of its topic) that reaches the same entities, as where a relation the
    graph holds both ways ("A borders B" and "B borders A") is walked the other way round, names that earlier
    path in ``twin_of``: the same walk, which a reader need not offer twice.  A graph in memory is walked once
    for the same topics and limits while its triplets stay the same (its content fingerprint).
    """
    fingerprint = getattr(graph, "fingerprint", "") if getattr(graph, "is_local", False) else ""
    key = (fingerprint, tuple(topics), max_hops, cap, fan, max_paths) if fingerprint else None
    if key is not None:
        with _WALKED_LOCK:
            if key in _WALKED:
                _WALKED.move_to_end(key)
                return list(_WALKED[key])
    out = _walk_paths(graph, topics, max_hops, cap, fan, max_paths)
    if key is not None:
        with _WALKED_LOCK:
            _WALKED[key] = tuple(out)
            while len(_WALKED) > _WALKED_LIMIT:
                _WALKED.popitem(last=False)
    return out


def _walk_paths(graph: Any, topics: Sequence[str], max_hops: int, cap: int, fan: int,
                max_paths: int) -> list[RelationPlan]:
    out: list[RelationPlan] = []
    seen: dict[tuple, str] = {}  # (topic, relations, what a path reaches) -> the first path that walks it
    for topic in dict.fromkeys(t for t in topics if t and graph.has_entity(t)):
        # each path: its hops, and the entities it reaches (each with one walk there from the topic)
        level: list[tuple[tuple[PlanHop, ...], Walks]] = [((), {topic: (topic,)})]
        for _ in range(max_hops):
            nxt: list[tuple[tuple[PlanHop, ...], Walks]] = []
            for hops, ends in level:
                groups = step_out(graph, ends, cap, fan)
                for hop in sorted(groups, key=lambda h: (h.relation, not h.forward)):
                    reached = groups[hop]
                    path = hops + (hop,)
                    first = next(iter(reached))
                    plan = RelationPlan(topic, path, example=first, reaches=len(reached), walk=reached[first])
                    key = (topic, tuple(h.relation for h in path), len(reached), hash(frozenset(reached)))
                    earlier = seen.setdefault(key, plan.text)
                    if earlier != plan.text:
                        plan = replace(plan, twin_of=earlier)
                    out.append(plan)
                    nxt.append((path, reached))
            level = nxt
            if len(out) >= max_paths:
                break
    out.sort(key=lambda p: (len(p.hops), p.topic, [h.label for h in p.hops]))
    return out[:max_paths]
