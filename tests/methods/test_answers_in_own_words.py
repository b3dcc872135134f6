"""Issue 29 end to end: the 135M model answers in its own words, DoG and CoT answer with the chain's entity.

On both backends the chain reaches the graph's "russians" (DoG) or
"germany" (CoT, its written triplet grounded), and the answer line says
"Russian" / "German": the trace answers with the graph's entity, records
what the model wrote and how it matched, and says so in a note.
"""

from __future__ import annotations

import pytest

from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.methods.base import MethodRequest, run_method
from kgqa_core.trace.schema import Trace

PUTIN = KnowledgeGraph.from_triplets(
    [("Vladimir Putin", "nationality", "russians"), ("Vladimir Putin", "born_in", "Leningrad")], name="putin")
MERKEL = KnowledgeGraph.from_triplets(
    [("Angela Merkel", "speaks", "germany"), ("Angela Merkel", "born_in", "Hamburg")], name="merkel")


def _written(trace: Trace, kind: str) -> list[str]:
    return next(s for s in trace.steps if s.kind == kind).extra["answers"]


def test_dog_answers_with_the_entity_its_chain_reached(backend_model):
    trace = run_method("dog", MethodRequest(
        graph=PUTIN, question="What nationality is Vladimir Putin?", model=backend_model,
        topic_entities=["Vladimir Putin"],
        # the paper's examples: with the terse ones the 135M writes "Russia" (also mapped, by its ending); and the
        # chain left to write its own answer line (conclude_at_depth forces it after the triplet: "Russia" too)
        params={"max_new_tokens": 48, "max_steps": 1, "prompt_examples": "paper", "free_text_cap": 0,
                "conclude_at_depth": False}))
    assert not trace.error, trace.error
    assert [ct.tail for ct in trace.best_chain] == ["russians"], trace.raw_output
    written = _written(trace, "dog.answer")
    assert written == ["Russian"], trace.raw_output  # the model's own word, not the graph's
    first = trace.answers[0]
    assert (first.text, first.entity, first.in_graph) == ("russians", "russians", True)
    assert (first.mapped_from, first.match) == ("Russian", "inflection")
    assert "the model wrote 'Russian'; the chain reached 'russians'" in " ".join(trace.notes)
    assert Trace.from_json(trace.to_json()) == trace


def test_cot_answers_with_the_entity_of_its_grounded_triplets(backend_model):
    trace = run_method("cot", MethodRequest(
        graph=MERKEL, question="What language does Angela Merkel speak?", model=backend_model,
        topic_entities=["Angela Merkel"], params={"max_new_tokens": 64}))
    assert not trace.error, trace.error
    assert any(ct.grounded and ct.tail == "germany" for ct in trace.best_chain), trace.raw_output
    written = _written(trace, "cot.answer")
    if written != ["German"] and backend_model.backend == "llama.cpp":
        # the 135M's answer line is a near tie on llama.cpp ("German" / "Hamburg"), moved by what the prompt
        # cache held before (issue 32's "same answer whatever was cached"); transformers covers the mapping
        pytest.skip(f"the 135M answered {written} on llama.cpp this time: no written word to map")
    assert written == ["German"], trace.raw_output
    first = trace.answers[0]
    assert (first.text, first.entity, first.mapped_from, first.match) == ("germany", "germany", "German", "inflection")
    assert "the model wrote 'German'; the chain reached 'germany'" in " ".join(trace.notes)
