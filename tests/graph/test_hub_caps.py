"""Hub entities cut to a cap, the question's relations first; the prompt pool is not flooded by a hub."""

from __future__ import annotations

from kgqa_core.graph.hub_caps import capped_neighbours, relation_relevance, relation_words
from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.graph.pruning import prune_to_budget


def hub_graph(n: int = 5000) -> KnowledgeGraph:
    trips = [(f"Film {i}", "has_genre", "Drama") for i in range(n)]
    trips += [(f"Film {i}", "release_year", "1995") for i in range(n)]
    trips += [("Drama", "described_by", "sad"), ("Drama", "described_by", "slow")]
    trips += [("Film 0", "directed_by", "Ann Lee"), ("Film 0", "has_tags", "noir"),
              ("Ann Lee", "directed_by_inverse", "Film 9")]
    return KnowledgeGraph.from_triplets(trips, name="hubs")


G = hub_graph()


def test_relation_words_and_lexical_relevance():
    assert relation_words("film.film.directed_by") == "directed by" and relation_words("has_tags") == "has tags"
    rel = relation_relevance("which films were written by the writer of Heat", ["written_by", "has_genre"])
    assert rel["written_by"] == 1.0 and rel["has_genre"] == 0.0


def test_a_hub_keeps_its_rare_relation_and_the_questions_relation_first():
    kept, cut = capped_neighbours(G, "Drama", 50, {"described_by": 0.9, "has_genre": 0.1})
    assert len(kept) == 50 and cut is not None and (cut.kept, cut.total) == (50, 5002)
    assert [t.tail for t in kept[:2]] == ["sad", "slow"]  # the relation the question asks for comes first
    assert all(t.relation == "has_genre" for t in kept[2:])
    small, none = capped_neighbours(G, "Film 0", 50, {})
    assert none is None and len(small) == len(G.neighbours("Film 0"))


def test_entity_words_rank_inside_a_relation():
    kept, _ = capped_neighbours(G, "1995", 3, {}, question_stems={"4321"})
    assert kept[0].head == "Film 4321"


def test_prompt_pool_reaches_past_a_hub():
    res = prune_to_budget(G, "who directed the films directed by the director of Film 0", ["Film 0"],
                          max_triplets=20, embedder=None, max_candidates=300, max_per_entity=100)
    kept = {G.triplet(i).as_tuple for i in res.triplet_ids}
    # without the cap the 300-triplet pool is all Drama and 1995 films, and Ann Lee's films are never candidates
    assert ("Ann Lee", "directed_by_inverse", "Film 9") in kept
    assert "hub entities cut to 100 triplets each" in res.note and "'Drama': kept 100 of its 5002 triplets" in res.note
    uncapped = prune_to_budget(G, "who directed the films directed by the director of Film 0", ["Film 0"],
                               max_triplets=20, embedder=None, max_candidates=300, max_per_entity=None)
    assert ("Ann Lee", "directed_by_inverse", "Film 9") not in {G.triplet(i).as_tuple for i in uncapped.triplet_ids}
