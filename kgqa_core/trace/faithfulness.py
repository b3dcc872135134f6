"""Check every triplet a method cites against the graph.

A chain is well-formed (DoG §2.2) when each triplet (1) exists in the graph
and (2) has its head or tail among the topic entities or the entities of the
triplets before it.  A triplet failing either is "ill".  DoG produces no ill
triplets by construction; for CoT and the other methods this report measures
how many they cite.
"""

from __future__ import annotations

from typing import Iterable, Sequence, Union

from ..graph.knowledge_graph import KnowledgeGraph, Triplet
from ..graph.readings import find_written
from .schema import Answer, ChainTriplet, FaithfulnessReport

TripletLike = Union[ChainTriplet, Triplet, Sequence[str]]


def _as_tuple(t: TripletLike) -> tuple[str, str, str]:
    if isinstance(t, (ChainTriplet, Triplet)):
        return (t.head, t.relation, t.tail)
    h, r, tail = t
    return (str(h), str(r), str(tail))


def _lookup(graph: KnowledgeGraph, h: str, r: str, t: str) -> Triplet | None:
    """Exact match first, then one tolerant of surrounding white space; a backward reading names its triplet."""
    found = find_written(graph, h, r, t)[0]
    if found is None and (h != h.strip() or r != r.strip() or t != t.strip()):
        found = find_written(graph, h.strip(), r.strip(), t.strip())[0]
    return found


def ground_chain(
    graph: KnowledgeGraph, chain: Iterable[TripletLike], topic_entities: Iterable[str]
) -> list[ChainTriplet]:
    """Annotate each triplet of a chain with its graph id and well-formedness."""
    visited = set(topic_entities)
    out: list[ChainTriplet] = []
    for item in chain:
        h, r, t = _as_tuple(item)
        found = _lookup(graph, h, r, t)
        touches = h in visited or t in visited or h.strip() in visited or t.strip() in visited
        if found is None:
            reason = "not in the graph"
        elif not touches:
            reason = "touches no topic entity or entity visited before"
        else:
            reason = ""
        out.append(
            ChainTriplet(
                head=h, relation=r, tail=t,
                triplet_id=found.id if found is not None else None,
                in_graph=found is not None,
                grounded=found is not None and touches,
                reason=reason,
            )
        )
        visited.update((h, t, h.strip(), t.strip()))
    return out


def check_chains(
    graph: KnowledgeGraph,
    chains: Iterable[Iterable[TripletLike]],
    topic_entities: Iterable[str],
    answers: Iterable[Answer] | None = None,
) -> FaithfulnessReport:
    """A faithfulness report over all chains a method cites, and its answers."""
    topics = list(topic_entities)
    report = FaithfulnessReport()
    seen: set[tuple[str, str, str]] = set()
    for chain in chains:
        for ct in ground_chain(graph, chain, topics):
            key = (ct.head, ct.relation, ct.tail)
            report.checked += 1
            report.in_graph += int(ct.in_graph)
            report.ill_triplets += int(not ct.grounded)
            if key not in seen:
                seen.add(key)
                report.details.append(ct)
    for ans in answers or ():
        report.answers_total += 1
        report.answers_in_graph += int(bool(ans.in_graph))
    return report
