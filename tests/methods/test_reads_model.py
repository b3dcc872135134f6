"""READS with the real 135M model: the properties a user relies on, whatever it chooses."""

from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.methods.base import MethodRequest, run_method
from kgqa_core.trace.schema import Trace


def test_reads_smoke_with_smollm2(backend_model):
    g = KnowledgeGraph.from_triplets([
        ("Knight Rider", "tv.tv_program.regular_cast", "m.03lj4m5"),
        ("m.03lj4m5", "tv.regular_tv_appearance.character", "KITT"),
        ("m.03lj4m5", "tv.regular_tv_appearance.actor", "William Daniels"),
        ("Knight Rider", "tv.tv_program.regular_cast", "m.02h9cb0"),
        ("m.02h9cb0", "tv.regular_tv_appearance.actor", "David Hasselhoff"),
        ("Knight Rider", "tv.tv_program.genre", "Action"),
    ], name="knight rider")
    seen = []
    request = MethodRequest(
        graph=g, question="who plays the voice of kitt in knight rider?", model=backend_model,
        topic_entities=["Knight Rider"], params={"max_search_steps": 3}, on_step=seen.append,
    )
    trace = run_method("reads", request)
    assert trace.error == ""
    assert trace.method == "reads" and trace.model == backend_model.name
    assert [s.kind for s in trace.steps] == [s.kind for s in seen]  # streamed as they completed
    kinds = [s.kind for s in trace.steps]
    assert kinds[:2] == ["reading.plan", "reads.search"] and kinds[-1] == "reads.answer"  # the question read first
    assert set(kinds) <= {"reading.plan", "reads.search", "reads.prune", "reads.answer"}
    # answers are entities of G_k at one position of S_k
    assert trace.answers and all(g.has_entity(a.entity) and a.in_graph for a in trace.answers)
    node = trace.extra["answer_node"]
    nodes = {n["id"]: n for n in trace.extra["abstract_structure"]["nodes"]}
    assert [a.entity for a in trace.answers] == nodes[node]["entities"]
    assert trace.extra["retrieved_triplets"] == trace.steps[-1].subgraph_after
    for step in trace.steps:
        if len(step.candidates) > 1:
            assert abs(sum(c.prob for c in step.candidates) - 1) < 1e-4
            assert step.model_calls and all(c.prompt_tokens > 0 for c in step.model_calls)
            assert step.candidates[[c.kept for c in step.candidates].index(True)].label == step.choice
    # costs add up: every forward pass belongs to a step
    assert trace.forward_passes == sum(s.extra.get("forward_passes", 0) for s in trace.steps) > 0
    assert trace.model_calls == sum(len(s.model_calls) for s in trace.steps)
    assert trace.tokens_in > 0
    assert trace.faithfulness.ill_triplets == 0
    assert Trace.from_json(trace.to_json()) == trace
