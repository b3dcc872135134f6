"""G_q follows Eq. 1: triplets touching a visited entity, in either direction."""

from kgqa_core.decoding.query_subgraph import QueryCentricSubgraph
from kgqa_core.graph.knowledge_graph import KnowledgeGraph

G = KnowledgeGraph.from_triplets(
    [
        ("Heat", "directed_by", "Michael Mann"),  # 0
        ("Collateral", "directed_by", "Michael Mann"),  # 1 (reaches Michael Mann as tail)
        ("Collateral", "starred_actors", "Tom Cruise"),  # 2
        ("Top Gun", "starred_actors", "Tom Cruise"),  # 3
        ("Heat", "release_year", "1995"),  # 4
        ("Unrelated", "release_year", "2001"),  # 5
    ]
)


def test_initial_subgraph_is_every_triplet_touching_a_topic_entity():
    gq = QueryCentricSubgraph(G, ["Michael Mann", "Not in graph"])
    assert gq.triplet_ids == [0, 1]
    assert gq.topics == ["Michael Mann"]


def test_expansion_adds_neighbours_of_both_ends_and_reports_new_entities():
    gq = QueryCentricSubgraph(G, ["Heat"])
    assert gq.triplet_ids == [0, 4]
    added = gq.expand(G.triplet(0))
    assert added == ["Michael Mann"]
    assert gq.triplet_ids == [0, 1, 4]
    assert gq.expand(G.triplet(1)) == ["Collateral"]
    assert gq.triplet_ids == [0, 1, 2, 4]
    assert 5 not in gq


def test_copies_grow_independently():
    a = QueryCentricSubgraph(G, ["Heat"])
    b = a.copy()
    b.expand(G.triplet(0))
    assert a.triplet_ids == [0, 4] and b.triplet_ids == [0, 1, 4]
