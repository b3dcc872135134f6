"""The made-up graphs' questions (datasets/madeup): every answer is in the graph and reached from the topics."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgqa_core.eval.dataset import load_dataset

MADEUP = Path(__file__).resolve().parents[2] / "datasets" / "madeup"


@pytest.mark.parametrize("name", ["family_dev.jsonl", "university_dev.jsonl", "music_dev.jsonl"])
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
