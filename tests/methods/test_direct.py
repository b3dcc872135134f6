"""Direct: the same context and question, answers without a chain."""

from __future__ import annotations

from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.methods.base import MethodRequest, run_method
from kgqa_core.trace.schema import Trace

GRAPH = KnowledgeGraph.from_triplets(
    [
        ("Grand Bahama", "location.location.containedby", "Lucayan Archipelago"),
        ("Lucayan Archipelago", "location.location.containedby", "Atlantic Ocean"),
        ("Grand Bahama", "location.location.people_born_here", "Hubert Ingraham"),
    ],
    name="bahama",
)


def test_direct_answers_in_one_line_with_markers(small_model):
    emitted = []
    req = MethodRequest(graph=GRAPH, question="What island group is Grand Bahama in?", model=small_model,
                        topic_entities=["Grand Bahama"], on_step=emitted.append)
    trace = run_method("direct", req)
    assert not trace.error, trace.error
    assert trace.extra["prompt_variant"] == "direct"
    assert "Let's break down" not in trace.extra["prompt"]
    assert "Grand Bahama -> location.location.containedby -> Lucayan Archipelago" in trace.extra["prompt"]
    assert "\n" not in trace.raw_output.strip()  # stopped at the end of the answer line
    assert trace.raw_output.lstrip().startswith("*")
    assert trace.answers and trace.answer_texts == emitted[-1].extra["answers"]
    for a in trace.answers:
        assert a.in_graph == (a.entity is not None and GRAPH.has_entity(a.entity))
    assert trace.chains == [] and trace.faithfulness.checked == 0
    assert [s.kind for s in trace.steps] == ["direct.answer"]
    assert trace.forward_passes <= trace.tokens_out + 1
    assert Trace.from_json(trace.to_json()) == trace
