"""walk_chain: how a chain walks from the question's entity (hops, listed siblings, restarts, steps off the path)."""

from __future__ import annotations

from kgqa_core.graph.chain_walk import path_segments, walk_chain
from kgqa_core.graph.knowledge_graph import KnowledgeGraph

G = KnowledgeGraph.from_triplets(
    [
        ("Heat", "starred_actors", "Al Pacino"),
        ("Heat", "starred_actors", "Robert De Niro"),
        ("Heat", "directed_by", "Michael Mann"),
        ("Serpico", "starred_actors", "Al Pacino"),
        ("Scarface", "starred_actors", "Al Pacino"),
        ("Scarface", "release_year", "1983"),
    ]
)


def _chain(*spo):
    return [G.find(*t) for t in spo]


def test_hops_siblings_and_restarts_from_the_topic():
    chain = _chain(("Heat", "starred_actors", "Al Pacino"), ("Serpico", "starred_actors", "Al Pacino"),
                   ("Scarface", "starred_actors", "Al Pacino"), ("Scarface", "release_year", "1983"),
                   ("Heat", "directed_by", "Michael Mann"), ("Heat", "starred_actors", "Robert De Niro"))
    steps = walk_chain(chain, ["Heat"])
    assert [s.kind for s in steps] == ["hop", "hop", "sibling", "hop", "restart", "restart"]
    assert [(s.source, s.relation, s.forward, s.target) for s in steps[:4]] == [
        ("Heat", "starred_actors", True, "Al Pacino"),
        ("Al Pacino", "starred_actors", False, "Serpico"),
        ("Al Pacino", "starred_actors", False, "Scarface"),  # a sibling: the walk stands on it...
        ("Scarface", "release_year", True, "1983"),  # ...so the chain goes on from the listed film
    ]


def test_a_chain_read_backwards_from_the_topic_and_one_that_misses_it():
    steps = walk_chain(_chain(("Serpico", "starred_actors", "Al Pacino")), ["Al Pacino"])
    assert [(s.kind, s.source, s.forward, s.target) for s in steps] == [("hop", "Al Pacino", False, "Serpico")]
    assert walk_chain(_chain(("Serpico", "starred_actors", "Al Pacino")), ["Heat"]) == []
    assert walk_chain([], ["Heat"]) == []


def test_a_step_off_the_path_stands_nowhere_until_a_restart():
    chain = _chain(("Heat", "starred_actors", "Al Pacino"), ("Scarface", "release_year", "1983"),
                   ("Serpico", "starred_actors", "Al Pacino"), ("Heat", "directed_by", "Michael Mann"))
    steps = walk_chain(chain, ["Heat"])
    # Scarface touches neither Al Pacino nor Heat: off; Serpico then touches no entity the walk stands on
    assert [s.kind for s in steps] == ["hop", "off", "off", "restart"]
    assert path_segments(steps) == [("Heat", [("directed_by", True)]), ("Heat", [("starred_actors", True)])]


def test_path_segments_follow_the_hops_after_a_survey_of_the_topic():
    # "the release years of the films of Heat's actors": the chain first lists Heat's own facts
    chain = _chain(("Heat", "directed_by", "Michael Mann"), ("Heat", "starred_actors", "Al Pacino"),
                   ("Scarface", "starred_actors", "Al Pacino"), ("Scarface", "release_year", "1983"))
    steps = walk_chain(chain, ["Heat"])
    assert [s.kind for s in steps] == ["hop", "restart", "hop", "hop"]
    assert path_segments(steps) == [
        ("Heat", [("starred_actors", True), ("starred_actors", False), ("release_year", True)]),
        ("Heat", [("directed_by", True)]),
    ]
    assert path_segments([]) == []


def test_the_chain_may_go_on_from_any_sibling_it_listed_not_only_the_last():
    # "who directed the movies Al Pacino starred in": Heat, Serpico, Scarface listed, then Heat's director
    chain = _chain(("Heat", "starred_actors", "Al Pacino"), ("Serpico", "starred_actors", "Al Pacino"),
                   ("Scarface", "starred_actors", "Al Pacino"), ("Heat", "directed_by", "Michael Mann"))
    steps = walk_chain(chain, ["Al Pacino"])
    assert [s.kind for s in steps] == ["hop", "sibling", "sibling", "hop"]
    assert (steps[3].source, steps[3].target) == ("Heat", "Michael Mann")
    assert path_segments(steps) == [("Al Pacino", [("starred_actors", False), ("directed_by", True)])]
