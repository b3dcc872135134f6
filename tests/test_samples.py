"""Every shipped sample loads and its questions are answerable from its graph."""

from __future__ import annotations

import json

import pytest

from kgqa_core.samples import SampleError, get_sample, list_samples, load_sample, read_questions

SAMPLES = [s.name for s in list_samples()]


def within_hops(graph, topics, hops):
    seen, frontier = set(topics), set(topics)
    for _ in range(hops):
        frontier = {t.other(e) for e in frontier for t in graph.neighbours(e)} - seen
        seen |= frontier
    return seen


def test_catalog_has_the_three_required_samples():
    assert {"metaqa_movies", "dog_freebase", "solar_system"} <= set(SAMPLES)
    formats = {get_sample(n).graph_path.suffix for n in SAMPLES}
    assert {".tsv", ".txt", ".ttl"} <= formats
    for name in SAMPLES:
        s = get_sample(name)
        assert s.title and s.description and s.attribution
        assert s.graph_path.is_file() and s.questions_path.is_file()


@pytest.mark.parametrize("name", SAMPLES)
def test_sample_questions_are_answerable(name):
    graph, questions = load_sample(name)
    sample = get_sample(name)
    assert len(graph) > 0 and graph.name == name
    assert questions, "each sample ships example questions"
    assert len({q.id for q in questions}) == len(questions)
    for q in questions:
        assert q.question and q.topic_entities and q.answers
        for ent in q.topic_entities:
            assert graph.has_entity(ent), f"{q.id}: topic entity {ent!r} not in graph"
        for ans in q.answers:
            assert graph.has_entity(ans), f"{q.id}: gold answer {ans!r} not in graph"
        # graph_file is relative to the questions file (the evaluation dataset format)
        graph_file = (sample.questions_path.parent / q.extra["graph_file"]).resolve()
        assert graph_file == sample.graph_path.resolve()
        # gold answers are reachable from the topic entities within a few hops
        hops = int(q.extra.get("hops", 2))
        reach = within_hops(graph, q.topic_entities, hops)
        missing = set(q.answers) - reach
        assert not missing, f"{q.id}: answers {missing} not within {hops} hops"


def test_metaqa_sample_size_and_attribution():
    graph, questions = load_sample("metaqa_movies")
    assert 300 <= len(graph) <= 2000
    assert "has_tags" not in graph.relations
    assert len(questions) >= 15
    assert {q.extra["hops"] for q in questions} == {1, 2}
    readme = (get_sample("metaqa_movies").graph_path.parent / "README.md").read_text(encoding="utf-8")
    assert "CC BY 3.0" in readme and "Zhang" in readme


def test_dog_sample_is_the_papers_prompt():
    graph, questions = load_sample("dog_freebase")
    assert graph.find("Grand Bahama", "location.location.containedby", "Bahamas") is not None
    assert graph.find("Toronto Maple Leafs", "sports.sports_team.sport", "Ice Hockey") is not None
    assert [q.answers for q in questions] == [["Bahamas"], ["Playwright", "Poet"], ["Ice Hockey"]]


def test_unknown_sample_and_bad_questions_file(tmp_path):
    with pytest.raises(SampleError, match="no sample named 'nope'"):
        load_sample("nope")
    bad = tmp_path / "q.jsonl"
    bad.write_text(json.dumps({"id": "1", "question": "q", "answers": ["a"]}) + "\n{broken\n", encoding="utf-8")
    with pytest.raises(SampleError, match=r"q.jsonl, line 2: invalid JSON"):
        read_questions(bad)
