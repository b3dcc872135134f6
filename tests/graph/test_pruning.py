"""Prompt-budget pruning: budget, connectivity to topic entities, ranking, lexical fallback."""

from __future__ import annotations

from collections import deque

import pytest

from kgqa_core.graph import KnowledgeGraph, prune_to_budget


def connected_to_topics(graph: KnowledgeGraph, kept: list[int], topics: list[str]) -> bool:
    """Every kept triplet touches an entity reachable from a topic through kept triplets."""
    sub = graph.subgraph(kept)
    reached, queue = set(topics), deque(topics)
    while queue:
        e = queue.popleft()
        for t in sub.neighbours(e):
            o = t.other(e)
            if o not in reached:
                reached.add(o)
                queue.append(o)
    return all(t.head in reached or t.tail in reached for t in sub)


@pytest.fixture(scope="module")
def city_graph() -> KnowledgeGraph:
    """A hub with many distractor facts and one relevant fact three hops away."""
    triplets = [
        ("Alice", "lives_in", "Springfield"),
        ("Springfield", "located_in", "Oregon"),
        ("Oregon", "capital", "Salem"),
    ]
    triplets += [("Alice", "likes", f"hobby {i}") for i in range(60)]
    triplets += [(f"hobby {i}", "category", "leisure") for i in range(60)]
    # unreachable from Alice, but lexically very close to the question
    triplets += [("Elsewhere", "capital", "Salem state capital Oregon"), ("Nowhere", "capital", "state")]
    return KnowledgeGraph.from_triplets(triplets, name="city")


QUESTION = "what is the capital of the state where Alice lives"


def test_graph_that_fits_is_kept_whole():
    g = KnowledgeGraph.from_triplets([("a", "r", "b"), ("c", "r", "d")])
    res = prune_to_budget(g, "q", ["a"], max_triplets=5, embedder=None)
    assert res.method == "none" and sorted(res.triplet_ids) == [0, 1]


def test_lexical_budget_connectivity_and_path(city_graph):
    res = prune_to_budget(city_graph, QUESTION, ["Alice"], max_triplets=10, embedder=None)
    assert res.method == "lexical"
    assert "no embedding model" in res.note  # the trace says why the ranking is lexical
    assert len(res.triplet_ids) <= 10
    kept = {city_graph.triplet(i).as_tuple for i in res.triplet_ids}
    # the best-matching fact is 3 hops out: the whole path to it came along
    assert ("Oregon", "capital", "Salem") in kept
    assert ("Alice", "lives_in", "Springfield") in kept
    assert ("Springfield", "located_in", "Oregon") in kept
    # unreachable triplets are never kept, however similar
    assert not any(t[0] in ("Elsewhere", "Nowhere") for t in kept)
    assert connected_to_topics(city_graph, res.triplet_ids, ["Alice"])
    assert set(res.scores) == set(res.triplet_ids)


@pytest.mark.parametrize("budget", [1, 2, 3, 7, 50])
def test_budget_is_a_hard_limit_and_stays_connected(city_graph, budget):
    res = prune_to_budget(city_graph, QUESTION, ["Alice"], max_triplets=budget, embedder=None)
    assert 1 <= len(res.triplet_ids) <= budget
    assert len(set(res.triplet_ids)) == len(res.triplet_ids)
    assert connected_to_topics(city_graph, res.triplet_ids, ["Alice"])


def test_two_topics_each_anchor_their_side():
    triplets = [("A", "r", f"a{i}") for i in range(30)] + [("B", "wrote", "Book"), ("Book", "genre", "Mystery")]
    triplets += [("B", "s", f"b{i}") for i in range(30)]
    g = KnowledgeGraph.from_triplets(triplets)
    res = prune_to_budget(g, "what genre is the book B wrote", ["A", "B"], max_triplets=5, embedder=None)
    kept = {g.triplet(i).as_tuple for i in res.triplet_ids}
    assert ("Book", "genre", "Mystery") in kept and ("B", "wrote", "Book") in kept
    assert connected_to_topics(g, res.triplet_ids, ["A", "B"])


def test_unknown_topic_is_noted(city_graph):
    res = prune_to_budget(city_graph, QUESTION, ["Alice", "Bob"], max_triplets=5, embedder=None)
    assert "Bob" in res.note
    assert connected_to_topics(city_graph, res.triplet_ids, ["Alice"])


def test_embedding_ranking_keeps_the_answer_path(embedder):
    from kgqa_core.samples import load_sample

    g, _ = load_sample("solar_system")
    res = prune_to_budget(g, "Who discovered the planet that Triton orbits?", ["Triton"], max_triplets=8, embedder=embedder)
    assert res.method == "embedding" and "all-MiniLM-L6-v2" in res.note
    kept = {g.triplet(i).linearized() for i in res.triplet_ids}
    assert "Triton -> orbits -> Neptune" in kept
    assert "Neptune -> discovered_by -> Johann Gottfried Galle" in kept
    assert len(res.triplet_ids) <= 8
    assert connected_to_topics(g, res.triplet_ids, ["Triton"])
    # the ids follow the ranking: the best-scored triplet is added first
    assert res.scores[res.triplet_ids[0]] == max(res.scores.values())


def test_an_embedding_pool_embeds_only_the_nearest_and_the_closest_by_relation_and_words():
    """context_pool: the prompt's triplets come from a pool; the question's own facts are in it."""
    from kgqa_core.graph.knowledge_graph import KnowledgeGraph
    from kgqa_core.graph.pruning import embedding_pool, prune_to_budget

    rows = [("Heat", "directed_by", "Michael Mann"), ("Heat", "release_year", "1995")]
    rows += [(f"Film {i}", "starred_actors", f"Actor {i % 7}") for i in range(60)]
    rows += [("Heat", "starred_actors", f"Actor {i}") for i in range(7)]
    g = KnowledgeGraph.from_triplets(rows, name="films")
    cands = list(g)

    class Counting:
        name = "counting"

        def __init__(self):
            self.texts = 0

        def encode(self, texts):
            import numpy as np

            self.texts += len(texts)
            out = np.array([[1.0, float("Mann" in t or "direct" in t)] for t in texts], dtype=np.float32)
            return out / np.linalg.norm(out, axis=1, keepdims=True)

    emb = Counting()
    pool = embedding_pool("who directed Heat", cands, 12, {}, emb)
    assert len(pool) == 12 and list(range(3)) == pool[:3]  # the nearest quarter, in BFS order
    assert g.find("Heat", "directed_by", "Michael Mann").id in [cands[i].id for i in pool]
    emb.texts = 0
    kept = prune_to_budget(g, "who directed Heat", ["Heat"], max_triplets=5, embedder=emb, embed_pool=12)
    assert g.find("Heat", "directed_by", "Michael Mann").id in kept.triplet_ids
    assert "ranked 12 of" in kept.note
    every = Counting()
    prune_to_budget(g, "who directed Heat", ["Heat"], max_triplets=5, embedder=every)
    assert every.texts > emb.texts  # the pool embedded fewer triplets
