"""PageRank buckets: fullest bucket first, mean PageRank inside a bucket."""

from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.rok.paths import pairwise_paths
from kgqa_core.rok.ranking import rank_paths, subgraph_pagerank


def _fan_out() -> KnowledgeGraph:
    """A and B are joined through a Hub (which also reaches C, D, E) and through a Leaf."""
    return KnowledgeGraph.from_triplets([
        ("A", "r", "Hub"), ("Hub", "r", "B"), ("Hub", "r", "C"), ("Hub", "r", "D"), ("Hub", "r", "E"),
        ("A", "s", "Leaf"), ("Leaf", "s", "B"),
    ])


def test_pagerank_prefers_the_hub_path():
    g = _fan_out()
    keys = ["A", "B", "C", "D", "E"]
    search = pairwise_paths(g, keys, max_hops=2, max_paths=50)
    pr = subgraph_pagerank(g, search.triplet_ids, damping=0.85)
    assert max(pr, key=pr.get) == "Hub"
    ranking = rank_paths(search.paths, keys, pr, top_k=1)
    (best,) = ranking.selected
    assert best.path.entities == ("A", "Hub", "B")
    leaf = next(r for r in ranking.ranked if "Leaf" in r.path.entities)
    assert not leaf.selected and leaf.mean_pagerank < best.mean_pagerank
    assert leaf.key_count == best.key_count == 2


def test_fullest_bucket_first_then_next_until_k():
    g = KnowledgeGraph.from_triplets([
        ("K1", "r", "K2"), ("K2", "r", "K3"), ("K1", "r", "X"), ("X", "r", "K3"), ("K3", "r", "Y"),
    ])
    search = pairwise_paths(g, ["K1", "K3"], max_hops=2, max_paths=50)
    paths = search.paths
    pr = {"K1": 0.1, "K2": 0.1, "K3": 0.1, "X": 0.9, "Y": 0.0}
    ranking = rank_paths(paths, ["K1", "K2", "K3"], pr, top_k=2)
    # K1-K2-K3 holds 3 key entities: chosen first despite X's higher PageRank
    assert ranking.selected[0].path.entities == ("K1", "K2", "K3")
    assert ranking.selected[1].path.entities == ("K1", "X", "K3")
    assert set(ranking.buckets) == {3, 2}
    assert ranking.buckets[3] == [paths.index(ranking.selected[0].path)]


def test_damping_is_used():
    g = _fan_out()
    ids = [t.id for t in g]
    low = subgraph_pagerank(g, ids, damping=0.5)
    high = subgraph_pagerank(g, ids, damping=0.95)
    assert high["Hub"] > low["Hub"]
    assert abs(sum(low.values()) - 1.0) < 1e-6


def test_question_entity_keeps_a_path_when_cot_paths_fill_the_top_buckets():
    g = _fan_out()
    g.add("Topic", "t", "Answer")
    keys = ["Topic", "A", "B", "C", "D", "E"]
    search = pairwise_paths(g, keys, max_hops=2, max_paths=50)
    from kgqa_core.rok.paths import neighbourhood_paths

    paths = search.paths + neighbourhood_paths(g, ["Topic"], 2, 50).paths
    pr = subgraph_pagerank(g, [t for p in paths for t in p.triplet_ids])
    plain = rank_paths(paths, keys, pr, top_k=2)
    assert not any("Topic" in r.path.entities for r in plain.selected)
    covered = rank_paths(paths, keys, pr, top_k=2, must_cover=["Topic"])
    assert len(covered.selected) == 3
    assert covered.selected[-1].path.entities == ("Topic", "Answer")


def test_the_question_entitys_paths_the_question_asks_about_are_the_ones_added():
    g = _fan_out()
    g.add("Topic", "has_genre", "Drama")
    g.add("Other film", "has_genre", "Drama")
    g.add("Topic", "directed_by", "Director")
    keys = ["A", "B", "C", "D", "E"]
    search = pairwise_paths(g, keys, max_hops=2, max_paths=50)
    from kgqa_core.rok.paths import neighbourhood_paths

    own = neighbourhood_paths(g, ["Topic"], 2, 50).paths
    paths = search.paths + own
    pr = subgraph_pagerank(g, [t for p in paths for t in p.triplet_ids])
    relevance = {"directed_by": 0.9, "has_genre": 0.1}
    covered = rank_paths(paths, keys, pr, top_k=2, must_cover=["Topic"], relation_relevance=relevance, graph=g,
                         cover_paths=1)
    added = [r for r in covered.selected if "Topic" in r.path.entities]
    assert [r.path.entities for r in added] == [("Topic", "Director")]
    # without relevance the best-ranked path is added, whatever it is about
    plain = rank_paths(paths, keys, pr, top_k=2, must_cover=["Topic"])
    assert len([r for r in plain.selected if "Topic" in r.path.entities]) == 1


def test_with_relevance_the_asked_path_is_added_even_when_a_chosen_path_passes_the_entity():
    g = KnowledgeGraph.from_triplets([
        ("Topic", "release_year", "1987"), ("Other", "release_year", "1987"),
        ("Topic", "written_by", "Writer"),
    ])
    from kgqa_core.rok.paths import neighbourhood_paths

    paths = neighbourhood_paths(g, ["Topic"], 2, 50).paths
    pr = subgraph_pagerank(g, [t for p in paths for t in p.triplet_ids])
    ranked = rank_paths(paths, ["Topic", "1987"], pr, top_k=1, must_cover=["Topic"],
                        relation_relevance={"written_by": 0.3, "release_year": 0.0}, graph=g, cover_paths=1)
    chosen = [r.path.entities for r in ranked.selected]
    assert ("Topic", "Writer") in chosen and len(chosen) == 2
