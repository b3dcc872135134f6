"""Answers as the decoding methods resolve them: lists split, topic entities ranked last."""

from __future__ import annotations

from kgqa_core.decoding.context import resolve_answers
from kgqa_core.graph.knowledge_graph import KnowledgeGraph


def test_resolved_answers_split_lists_but_keep_names_with_commas():
    g = KnowledgeGraph.from_triplets(
        [("Bahamas", "contains", "Cat Island, Bahamas"), ("Bahamas", "capital", "Nassau"),
         ("X", "starred_actors", "Lee Marvin"), ("X", "starred_actors", "Robert Ryan")]
    )
    got = resolve_answers(["Robert Ryan, Lee Marvin, and Robert Ryan", "Cat Island, Bahamas", "Atlantis"], g)
    assert [(a.text, a.entity) for a in got] == [
        ("Robert Ryan", "Robert Ryan"), ("Lee Marvin", "Lee Marvin"),
        ("Cat Island, Bahamas", "Cat Island, Bahamas"), ("Atlantis", None)]


MOVIES = KnowledgeGraph.from_triplets(
    [("Forever Young", "starred_actors", "Mel Gibson"), ("Ransom", "starred_actors", "Mel Gibson"),
     ("Lethal Weapon", "starred_actors", "Mel Gibson"), ("Heat", "release_year", "1995"),
     ("Casino", "release_year", "1995")]
)


def test_the_topic_entity_is_ranked_after_the_other_answers_with_a_note():
    notes: list[str] = []
    got = resolve_answers(["Forever Young", "Ransom", "Lethal Weapon"], MOVIES, ["Forever Young"], notes)
    assert [a.text for a in got] == ["Ransom", "Lethal Weapon", "Forever Young"]
    assert notes == ["answer Forever Young is the question's topic entity; ranked after the other answers"]
    # listed under one marker: split first, then ranked
    got = resolve_answers(["Forever Young, Ransom"], MOVIES, ["Forever Young"])
    assert [a.text for a in got] == ["Ransom", "Forever Young"]


def test_a_topic_entity_that_is_the_only_answer_stays():
    """A comparison ("which came out first, Heat or Casino?") answers with a topic entity."""
    notes: list[str] = []
    assert [a.text for a in resolve_answers(["Heat"], MOVIES, ["Heat", "Casino"], notes)] == ["Heat"]
    both = resolve_answers(["Heat", "Casino"], MOVIES, ["Heat", "Casino"], notes)
    assert [a.text for a in both] == ["Heat", "Casino"] and notes == []
    # without topics nothing moves
    assert [a.text for a in resolve_answers(["Forever Young", "Ransom"], MOVIES)] == ["Forever Young", "Ransom"]
