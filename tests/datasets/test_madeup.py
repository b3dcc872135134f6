"""The made-up graphs' questions (datasets/madeup): every answer is in the graph and reached from the topics."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgqa_core.eval.dataset import load_dataset

MADEUP = Path(__file__).resolve().parents[2] / "datasets" / "madeup"
NAMES = ["family_dev.jsonl", "university_dev.jsonl", "music_dev.jsonl", "pharma_dev.jsonl", "software_dev.jsonl"]


@pytest.mark.parametrize("name", NAMES)
def test_every_answer_is_reached_from_every_topic_within_the_questions_hops(name):
    ds = list(load_dataset(MADEUP / name))
    assert len(ds) >= 12
    for q in ds:
        g = q.graph()
        hops = int(q.type[0]) if q.type[0].isdigit() else 1  # 2i: one hop from each entity
        for topic in q.topic_entities:
            assert g.has_entity(topic), (q.id, topic)
            reached, frontier = set(), {topic}
            for _ in range(hops):
                frontier = {t.tail if t.head == e else t.head for e in frontier for t in g.neighbours(e)}
                reached |= frontier
            missing = [a for a in q.answers if a not in reached]
            assert not missing, (q.id, topic, missing)


@pytest.mark.parametrize("name", NAMES)
def test_gold_chains_are_facts_of_the_graph_and_name_the_answers(name):
    """Where a line gives a gold chain, its triplets are facts of the graph and name every answer."""
    for q in load_dataset(MADEUP / name):
        if q.gold_chain is None:
            continue
        g = q.graph()
        for h, r, t in q.gold_chain:
            assert g.find(h, r, t) is not None, (q.id, (h, r, t))
        named = {x for h, _, t in q.gold_chain for x in (h, t)}
        assert set(q.topic_entities) <= named, (q.id, set(q.topic_entities) - named)
        assert set(q.answers) <= named, (q.id, set(q.answers) - named)
