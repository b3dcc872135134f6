"""Stored and backward readings of graph triplets, and the trie over both."""

from __future__ import annotations

from kgqa_core.graph.readings import REVERSE_SUFFIX, is_reversed, reading_of, readings, triplet_of
from kgqa_core.decoding.triplet_trie import TripletTokenCache, TripletTrie
from kgqa_core.graph.knowledge_graph import KnowledgeGraph

G = KnowledgeGraph.from_triplets(
    [("Ransom", "starred_actors", "Mel Gibson"), ("Forever Young", "starred_actors", "Mel Gibson"),
     ("Loop", "see_also", "Loop")]
)


def test_backward_readings_swap_ends_and_map_back_to_the_graph_triplet():
    rs = readings(G.triplets_by_ids(range(len(G))), reverse=True)
    fwd = [r for r in rs if not r.reversed]
    back = [r for r in rs if r.reversed]
    assert [r.label for r in fwd] == [t.linearized() for t in G.triplets_by_ids(range(len(G)))]
    # the self-loop has no distinct backward reading
    assert [r.label for r in back] == [
        "Mel Gibson -> starred_actors (reverse) -> Ransom", "Mel Gibson -> starred_actors (reverse) -> Forever Young"]
    for r in rs:
        assert triplet_of(r.id) == r.triplet_id and is_reversed(r.id) == r.reversed
        assert reading_of(G, r.id) == r
    assert len({r.id for r in rs}) == len(rs)  # reading ids never collide
    assert readings(G.triplets_by_ids([0]), reverse=False) == [fwd[0]]
    assert REVERSE_SUFFIX == " (reverse)"


def test_the_trie_over_both_readings_lets_a_step_start_from_either_end(small_model):
    small_tokenizer = small_model.tokenizer
    cache = TripletTokenCache(small_tokenizer)
    trie = TripletTrie.build(readings(G.triplets_by_ids([0, 1])), opener=" <", cache=cache)
    assert len(trie) == 4
    ids = small_tokenizer(" < Mel Gibson -> starred_actors (reverse) -> Ransom >", add_special_tokens=False)["input_ids"]
    opener = small_tokenizer(" <", add_special_tokens=False)["input_ids"]
    node = trie.walk(ids[len(opener):])
    assert node is not None and [triplet_of(r) for r in trie.triplets_at(node)] == [0]
    assert all(is_reversed(r) for r in trie.triplets_at(node))
