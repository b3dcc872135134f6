"""Entity linking: brackets, exact / case-insensitive / fuzzy matches, overrides, answer resolution."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kgqa_core.graph import EntityCandidate, KnowledgeGraph, UnknownEntityError, link_entities, load_graph, resolve_entity

METAQA_KB = Path(__file__).resolve().parents[3] / "shared" / "data" / "metaqa" / "kb.tsv.gz"


@pytest.fixture(scope="module")
def movies() -> KnowledgeGraph:
    return KnowledgeGraph.from_triplets(
        [
            ("Forrest Gump", "starred_actors", "Tom Hanks"),
            ("Forrest Gump", "directed_by", "Robert Zemeckis"),
            ("Big", "starred_actors", "Tom Hanks"),
            ("Big", "directed_by", "Penny Marshall"),
            ("Goldfinger", "starred_actors", "Gert Fröbe"),
            ("Drama", "is_a", "genre"),
            ("Forrest Gump", "has_genre", "Drama"),
            ("The Matrix", "directed_by", "Lana Wachowski"),
            ("Matrix", "directed_by", "Someone Else"),
        ],
        name="movies",
    )


def top(cands: list[EntityCandidate]) -> EntityCandidate:
    assert cands, "expected at least one candidate"
    return cands[0]


def test_bracket_is_the_topic(movies):
    cands = link_entities("what movies did [Tom Hanks] star in", movies)
    assert [(c.entity, c.method, c.score) for c in cands] == [("Tom Hanks", "bracket", 1.0)]


def test_bracket_case_and_typo(movies):
    assert top(link_entities("who directed [forrest gump]", movies)).entity == "Forrest Gump"
    c = top(link_entities("who directed [Forest Gump]", movies))
    assert (c.entity, c.method) == ("Forrest Gump", "bracket") and c.score < 1.0


def test_exact_match_in_text_beats_contained_shorter_name(movies):
    cands = link_entities("who directed The Matrix?", movies)
    assert top(cands).entity == "The Matrix" and top(cands).method == "exact"
    scores = {c.entity: c.score for c in cands}
    assert scores.get("Matrix", 0.0) < scores["The Matrix"]


def test_case_insensitive_and_accent_folding(movies):
    c = top(link_entities("which films did tom hanks appear in", movies))
    assert (c.entity, c.method, c.mention) == ("Tom Hanks", "case-insensitive", "tom hanks")
    c = top(link_entities("what films did gert frobe star in", movies))
    assert c.entity == "Gert Fröbe"


def test_fuzzy_typo(movies):
    cands = link_entities("who directed Forest Gumpp", movies)
    c = top(cands)
    assert (c.entity, c.method) == ("Forrest Gump", "fuzzy")
    assert 0.0 < c.score < 0.9


def test_scores_are_ranked_and_bounded(movies):
    cands = link_entities("did Tom Hanks star in Big or in a drama", movies)
    assert [c.score for c in cands] == sorted((c.score for c in cands), reverse=True)
    assert all(0.0 <= c.score <= 1.0 for c in cands)
    assert {"Tom Hanks", "Big"} <= {c.entity for c in cands}
    assert top(cands).entity == "Tom Hanks"  # the long proper name outranks the short one


def test_no_match_gives_no_candidates(movies):
    assert link_entities("what is the weather like", movies) == []


def test_override_validated(movies):
    cands = link_entities("anything at all", movies, topic_entities=["Big", "tom hanks"])
    assert [(c.entity, c.method) for c in cands] == [("Big", "override"), ("Tom Hanks", "override")]
    with pytest.raises(UnknownEntityError) as info:
        link_entities("anything", movies, topic_entities=["Tom Hank"])
    assert "Tom Hanks" in info.value.suggestions
    assert "did you mean 'Tom Hanks'" in str(info.value)
    assert isinstance(info.value, ValueError)


def test_resolve_entity(movies):
    assert resolve_entity("Tom Hanks", movies) == ("Tom Hanks", 1.0)
    assert resolve_entity("* Tom Hanks.", movies) == ("Tom Hanks", 1.0)
    assert resolve_entity("tom hanks", movies)[0] == "Tom Hanks"
    entity, score = resolve_entity("Forest Gump", movies)
    assert entity == "Forrest Gump" and 0.85 <= score < 1.0
    assert resolve_entity("Steven Spielberg", movies) == (None, 0.0)


def test_search_entities(movies):
    hits = movies.search_entities("tom", limit=3)
    assert hits[0][0] == "Tom Hanks"
    assert movies.search_entities("Big")[0] == ("Big", 1.0)


def test_index_follows_graph_edits(movies):
    g = movies.copy()
    assert link_entities("who is Keanu Reeves", g) == []
    g.add("The Matrix", "starred_actors", "Keanu Reeves")
    assert top(link_entities("who is Keanu Reeves", g)).entity == "Keanu Reeves"


@pytest.mark.skipif(not METAQA_KB.exists(), reason="MetaQA data not present")
def test_fast_on_metaqa():
    g = load_graph(METAQA_KB)
    link_entities("warm up the index", g)
    questions = [
        "what movies did [Tom Hanks] star in",
        "who directed Forrest Gump and what genre is it",
        "which films were written by the writer of Inceptoin",
    ]
    start = time.perf_counter()
    results = [link_entities(q, g) for q in questions]
    elapsed = time.perf_counter() - start
    assert top(results[0]).entity == "Tom Hanks"
    assert top(results[1]).entity == "Forrest Gump"
    assert "Inception" in {c.entity for c in results[2]}
    assert elapsed < 2.0, f"linking 3 questions took {elapsed:.2f}s"


def test_a_list_under_one_marker_splits_into_entities():
    from kgqa_core.graph import split_listed_answer

    g = KnowledgeGraph.from_triplets(
        [
            ("The Professionals", "starred_actors", "Robert Ryan"),
            ("The Professionals", "starred_actors", "Lee Marvin"),
            ("The Professionals", "starred_actors", "Burt Lancaster"),
            ("Sex and the City", "release_year", "2008"),
            ("Bahamas", "contains", "Cat Island, Bahamas"),
        ]
    )
    assert split_listed_answer("Robert Ryan, Lee Marvin, and Burt Lancaster", g) == [
        "Robert Ryan", "Lee Marvin", "Burt Lancaster"]
    assert split_listed_answer("Robert Ryan and Lee Marvin.", g) == ["Robert Ryan", "Lee Marvin"]
    assert split_listed_answer("Sex and the City; 2008", g) == ["Sex and the City", "2008"]
    # only one piece names a graph entity: not evidently a list, the answer stays as written
    assert split_listed_answer("Robert Ryan, John Wayne", g) is None
    # ... unless the first is one the chain reached: then the rest, in the model's own words, follow it
    reached = {"Robert Ryan"}.__contains__
    assert split_listed_answer("Robert Ryan, John Wayne", g, also_names=reached) == ["Robert Ryan", "John Wayne"]
    assert split_listed_answer("John Wayne, Robert Ryan", g, also_names=reached) is None
    # names with a comma are joined back; a piece cut off mid-name stays as written, in place
    g2 = KnowledgeGraph.from_triplets(
        [("Anne Suzuki", "starred_in", "Returner"), ("Anne Suzuki", "starred_in", "Heaven Knows, Mr. Allison"),
         ("Anne Suzuki", "starred_in", "April Story")]
    )
    assert split_listed_answer("Returner, Heaven Knows, Mr. Allison, April Story, Godzil", g2) == [
        "Returner", "Heaven Knows, Mr. Allison", "April Story", "Godzil"]
    # one name is not a list
    assert split_listed_answer("Robert Ryan", g) is None

