"""Property: every chain DoG writes is well-formed, on random graphs with adversarial names.

Well-formed (DoG §2.2): each triplet exists in the graph and touches a topic
entity or an entity of an earlier triplet of the same chain.  Checked here
independently of `check_chains`, with the real 135M model, beam sizes 1..3.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st

from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.methods.base import MethodRequest, run_method
from kgqa_core.reading.wording import estimate_hops, hop_vocabulary

NAMES = [
    "Bahamas", "Bahamas Islands", " Grand Bahama ", "Zürich", "東京", "Cat Island, Bahamas",
    "A -> B", "X > Y", "Heat", "Heat (1995 film)", "1995", "Michael Mann", "Ōsaka-jō", "<weird>",
]
RELATIONS = ["directed_by", "location.location.containedby", "release_year", "odd -> relation", "has, comma"]

triplet = st.tuples(st.sampled_from(NAMES), st.sampled_from(RELATIONS), st.sampled_from(NAMES)).filter(
    lambda t: t[0] != t[2]
)


def assert_well_formed(graph: KnowledgeGraph, chain, topics) -> None:
    visited = set(topics)
    for ct in chain:
        assert ct.triplet_id is not None, f"{ct} has no graph id"
        t = graph.triplet(ct.triplet_id)
        assert (t.head, t.relation, t.tail) == (ct.head, ct.relation, ct.tail)
        assert t.head in visited or t.tail in visited, f"{t} touches none of {sorted(visited)}"
        visited.update((t.head, t.tail))


@pytest.mark.parametrize("beam_size", [1, 2, 3])
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture],
          derandomize=True, phases=[Phase.explicit, Phase.generate])  # no shrinking: each example is a model run
@given(triplets=st.lists(triplet, min_size=2, max_size=8, unique=True))
def test_every_dog_chain_is_well_formed(backend_model, beam_size, triplets):
    graph = KnowledgeGraph.from_triplets(triplets, name="random")
    topic = triplets[0][0]
    request = MethodRequest(
        graph=graph,
        question=f"What is {topic.strip()} related to?",
        model=backend_model,
        topic_entities=[topic],
        # the wording reader: the offer is checked against the relations its words name (a fixed reading)
        # skip_restatements off: the offer below is G_q exactly (tests/decoding/test_question_relations.py
        # checks what that filter leaves out)
        params={"beam_size": beam_size, "max_steps": 2, "max_new_tokens": 24, "strict": True, "reader": "wording",
                "skip_restatements": False},
    )
    trace = run_method("dog", request)
    assert not trace.error, trace.error
    if not any(trace.chains):
        # DoG never drops a triplet: an empty chain means the model never opened one with "<"
        event("the model opened no triplet")
        assert not any(s.kind == "dog.triplet" for s in trace.steps)
        assert "<" not in trace.raw_output
    else:
        event("the model wrote a chain")
    for chain in trace.chains:
        assert_well_formed(graph, chain, [topic])
    assert trace.faithfulness.ill_triplets == 0
    # the relations the question's words name ("related" names "odd -> relation"): question_relations
    named = set(estimate_hops(request.question, hop_vocabulary(graph, [topic]), [topic]).relations)
    for step in trace.steps:
        if step.kind == "dog.triplet":
            allowed = {c.triplet_id for c in step.candidates}
            gq = set(step.subgraph_before)
            of_named = {t for t in gq if graph.triplet(t).relation in named}
            assert allowed == (of_named or gq)  # the trie allowed exactly G_q (its named relations' part)
            assert step.chosen_triplet_id in allowed
