"""Which G_q triplets a DoG step may offer, from where the chain stands and what the question names.

DoG's trie holds the chain's whole G_q (§2.3).  On a whole KB a small
model spends its steps on facts the question never asked for (a film's tags
where its director's films' languages were asked), stops short of the
question's depth, or walks past it.  These pure functions read where a chain
stands (`entity_paths`: each entity it reached and the relations of the way
there) and narrow a step's triplets; `ChainBeam` decides when to apply
them, counts them and leaves the rest of the step as it was.  Each returns
triplet ids, a subset of ``allowed`` in its order.

Examples
--------
>>> from kgqa_core.graph.knowledge_graph import KnowledgeGraph
>>> g = KnowledgeGraph.from_triplets([("Heat", "directed_by", "Michael Mann"),
...                                   ("Thief", "directed_by", "Michael Mann"), ("Heat", "release_year", "1995")])
>>> chain = [g.find("Heat", "directed_by", "Michael Mann").id]
>>> entity_paths(g, chain, ["Heat"])
{'Heat': [], 'Michael Mann': ['directed_by']}
>>> [g.triplet(i).head for i in frontier_triplets(g, chain, ["Heat"], [0, 1, 2])]
['Thief']
>>> [g.triplet(i).relation for i in within_depth(g, chain, ["Heat"], [0, 1, 2], max_depth=1)]
['directed_by', 'release_year']
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..reading.reading import plan_allows


def entity_paths(graph: Any, chain: Sequence[int], topics: Sequence[str]) -> dict[str, list[str]]:
    """Each entity the chain reaches from a topic entity, with the relations of its shortest way there (topics: []).

    The chain's triplets are read as an undirected graph.
    """
    adjacent: dict[str, list[tuple[str, str]]] = {}
    for t in graph.triplets_by_ids(list(chain)):
        adjacent.setdefault(t.head, []).append((t.tail, t.relation))
        adjacent.setdefault(t.tail, []).append((t.head, t.relation))
    paths: dict[str, list[str]] = {e: [] for e in topics if e in adjacent}
    frontier = list(paths)
    while frontier:
        nxt = []
        for e in frontier:
            for o, r in adjacent[e]:
                if o not in paths:
                    paths[o] = paths[e] + [r]
                    nxt.append(o)
        frontier = nxt
    return paths


def entity_depths(graph: Any, chain: Sequence[int], topics: Sequence[str]) -> dict[str, int]:
    """Each entity the chain reaches from a topic entity, with its distance in hops (the topics at 0)."""
    return {e: len(p) for e, p in entity_paths(graph, chain, topics).items()}


def chain_depth(graph: Any, chain: Sequence[int], topics: Sequence[str]) -> int:
    """How many hops from the topic entities the chain's triplets reach (0 for no triplet).

    The depth is the largest distance from a topic entity to an entity the
    chain reaches: three facts about the topic entity are one hop deep, not
    three.
    """
    return max(entity_depths(graph, chain, topics).values(), default=0)


def frontier_triplets(graph: Any, chain: Sequence[int], topics: Sequence[str], allowed: Sequence[int]) -> list[int]:
    """The `allowed` triplets that lead on from the chain's farthest entities to an entity it has not reached.

    Names equal up to case count as reached (MetaQA tags repeat people's
    names in lower case).  What a chain short of the question's depth may
    write next: a step out, not another fact about where it has been.
    """
    depths = entity_depths(graph, chain, topics)
    if not depths:
        depths = {t: 0 for t in topics}
    far = max(depths.values(), default=0)
    frontier = {e for e, d in depths.items() if d == far}
    reached = {e.casefold() for e in depths}  # a tag "albert pyun" is where the chain has been
    out = []
    for t in graph.triplets_by_ids(list(allowed)):
        if (t.head in frontier and t.tail.casefold() not in reached) or (
                t.tail in frontier and t.head.casefold() not in reached):
            out.append(t.id)
    return out


def within_depth(graph: Any, chain: Sequence[int], topics: Sequence[str], allowed: Sequence[int],
                 max_depth: int) -> list[int]:
    """The `allowed` triplets that do not walk past `max_depth` hops from the topic entities.

    A triplet with both ends reached stays, and so does one whose reached
    end is short of the cap (its new end is at most `max_depth` out).
    """
    depths = entity_depths(graph, chain, topics)
    out = []
    for t in graph.triplets_by_ids(list(allowed)):
        touched = [d for d in (depths.get(t.head), depths.get(t.tail)) if d is not None]
        if len(touched) != 1 or touched[0] < max_depth:
            out.append(t.id)  # both ends reached, one end short of the cap, or (never in G_q) neither
    return out


def of_named_relations(graph: Any, chain: Sequence[int], topics: Sequence[str], allowed: Sequence[int],
                       relations: frozenset[str], uses: Mapping[str, int] | None = None,
                       order: Sequence[str] = ()) -> list[int]:
    """The `allowed` triplets of `relations`, each walked no more often than `uses` allows, and at the hop `order`
    puts it when given (`fits_uses`)."""
    # before the first triplet the chain stands on its topic entities (the first step is counted and ordered too)
    walked = (entity_paths(graph, chain, topics) or {e: [] for e in topics}) if uses else {}
    return [t.id for t in graph.triplets_by_ids(list(allowed))
            if t.relation in relations and fits_uses(graph, t, walked, uses or {}, order)]


def fits_uses(graph: Any, t: Any, walked: Mapping[str, list[str]], uses: Mapping[str, int],
              order: Sequence[str] = ()) -> bool:
    """Whether `t` walks its relation no more often than `uses` allows on the way to the entity it leads on from,
    and reaches an entity from which a relation still to be walked goes on (no dead end).

    "The release dates of the movies starred by actors in Quality Street"
    walks `release_year` once: not from the film's year 1937 back to other
    films of 1937.  "The languages of the films directed by the director of
    Raw Deal": a film of John Irvin's with no language in the graph is a dead
    end (the chain listed five such films and ran out of steps).

    With `order` (the relation of each hop, `QuestionReading.order`), a triplet
    that leads on to hop k walks that hop's relation, and the next hop's
    relation goes on from its new end: "which person directed the movies
    written by Jeffrey Kramer" starts with the films he wrote, not those he
    directed.
    """
    if not uses:
        return True
    head, tail = walked.get(t.head), walked.get(t.tail)
    if (head is None) == (tail is None):
        return True  # both ends reached already (or neither: never in G_q)
    path, new = (head, t.tail) if head is not None else (tail, t.head)
    if not plan_allows(path, t.relation, dict(uses), order):
        return False
    if order and len(path) < len(order):
        left = set(order[len(path) + 1:len(path) + 2])
    else:
        left = {r for r, n in uses.items() if (path + [t.relation]).count(r) < n}
    if not left:
        return True
    return any(n.relation in left and n.id != t.id for n in graph.neighbours(new))
