"""RoK with the real small model: structure a user relies on, whatever it answers."""

import pytest

from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.methods.base import MethodRequest, run_method
from kgqa_core.trace.schema import Trace


@pytest.fixture(scope="module")
def model(backend_model):
    """The 135M model on each backend (transformers and llama.cpp)."""
    return backend_model


def test_rok_smoke_with_smollm2(model):
    g = KnowledgeGraph.from_triplets([
        ("The Fugitive", "directed_by", "Andrew Davis"),
        ("The Fugitive", "starred_actors", "Harrison Ford"),
        ("The Fugitive", "starred_actors", "Tommy Lee Jones"),
        ("The Fugitive", "release_year", "1993"),
        ("The Fugitive", "has_genre", "Thriller"),
        ("Witness", "starred_actors", "Harrison Ford"),
        ("Witness", "directed_by", "Peter Weir"),
        ("Under Siege", "directed_by", "Andrew Davis"),
        ("The Fugitive", "has_tags", "manhunt"),
        ("The Fugitive", "in_language", "English"),
        ("Harrison Ford", "born_in", "Chicago"),
        ("Andrew Davis", "born_in", "Chicago"),
    ], name="films")
    steps = []
    req = MethodRequest(graph=g, question="who directed [The Fugitive] starring Harrison Ford",
                        model=model, topic_entities=["The Fugitive"],
                        params={"cot_max_tokens": 24, "filter_max_tokens": 16, "answer_max_tokens": 12},
                        on_step=steps.append)
    trace = run_method("rok", req)
    assert not trace.error
    assert [s.kind for s in trace.steps] == ["rok.cot", "rok.link", "reading.plan", "rok.paths", "rok.pagerank",
                                             "rok.branches", "rok.answer"]  # the path length from the reading
    assert len(steps) == 7
    assert trace.model_calls >= 3
    assert sum(len(s.model_calls) for s in trace.steps) == trace.model_calls
    assert trace.forward_passes > 0 and trace.tokens_out > 0
    keys = trace.steps[1].extra["key_entities"]
    assert keys[:2] == ["The Fugitive", "Harrison Ford"]  # topic first, then the question's other name
    assert trace.extra["paths"], "the question's entities are joined by a path"
    assert trace.answers, "the model's answer is recorded"
    for a in trace.answers:
        if a.entity is not None:
            assert a.in_graph and g.has_entity(a.entity)
    for chain in trace.chains:
        assert all(c.in_graph and c.triplet_id is not None for c in chain)
    assert Trace.from_json(trace.to_json()) == trace

