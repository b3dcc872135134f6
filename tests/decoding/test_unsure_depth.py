"""unsure_depth: an unsure reading whose likeliest plans agree how far the question goes guides the chain's depth.

The guidance from the reading's numbers (`DogGuidance.from_reading`) and a DoG run against a fixed unsure reading
on the real 135M model, both backends (the model's own reading: tests/reading).
"""

from __future__ import annotations

import dataclasses

from kgqa_core.methods.base import MethodRequest, run_method
from kgqa_core.methods.dog import DogGuidance, DogParams
from kgqa_core.reading.reading import PlanHop, QuestionReading, RelationPlan
from tests.methods.test_dog_short_text import BORN, HEAT


def _reading(*plans: RelationPlan) -> QuestionReading:
    best = plans[0]
    return QuestionReading("paths", hops=len(best.hops), confidence=best.confidence, sure=True,
                           relations=best.relations, plans=list(plans))


TWO_HOPS = _reading(RelationPlan("Heat", (PlanHop("directed_by"), PlanHop("born_in")), 0.45),
                    RelationPlan("Heat", (PlanHop("directed_by"), PlanHop("directed_by", True)), 0.4),
                    RelationPlan("Heat", (PlanHop("release_year"),), 0.15))


def test_the_depth_the_likely_plans_agree_on_takes_a_short_answer_back():
    assert not TWO_HOPS.guides(DogParams().reading_sure_at)
    g = DogGuidance.from_reading(TWO_HOPS, DogParams(unsure_depth=0.8))
    assert g.walk_out is not None and g.walk_out.min_depth == 2 and g.walk_out.first
    assert "2 most likely plan(s), 85% of its probability, all walk at least 2 hops" in g.depth_note
    assert "not sure of its plan (45%)" in g.depth_note
    assert [f.name for f in g.filters] == ["skip_restatements", "unsure_relations"]  # the relations as before
    # the plans holding 90% include the one-hop plan: no depth is agreed on, nothing is taken back
    assert DogGuidance.from_reading(TWO_HOPS, DogParams(unsure_depth=0.9)).walk_out is None
    # the default (0.8) as above; off (0, the paper preset) or without walk_to_depth: as before
    assert DogGuidance.from_reading(TWO_HOPS, DogParams()).walk_out.min_depth == 2
    assert DogGuidance.from_reading(TWO_HOPS, DogParams(unsure_depth=0.0)).walk_out is None
    assert DogGuidance.from_reading(TWO_HOPS, DogParams(unsure_depth=0.8, walk_to_depth=False)).walk_out is None
    assert DogParams.PRESETS["paper"]["unsure_depth"] == 0.0
    # a sure reading keeps its own depth (its hops), whatever unsure_depth says
    sure = dataclasses.replace(TWO_HOPS, confidence=0.9)
    assert DogGuidance.from_reading(sure, DogParams(unsure_depth=0.8)).walk_out.min_depth == 2
    assert not DogGuidance.from_reading(sure, DogParams(unsure_depth=0.8)).depth_note


def test_an_unsure_chain_walks_to_the_agreed_depth(backend_model, monkeypatch):
    from kgqa_core.reading import guidance

    class Fixed:
        def read(self, question, graph, topics):
            return dataclasses.replace(TWO_HOPS)

    monkeypatch.setattr(guidance, "make_reader", lambda *a, **k: Fixed())

    def ask(**params):
        guidance.clear_readings()
        return run_method("dog", MethodRequest(graph=HEAT, question=BORN, model=backend_model, topic_entities=["Heat"],
                                               params={"max_new_tokens": 96, "reader": "paths", **params}))

    for _ in range(2):  # a second question in one process walks alike
        on = ask(unsure_depth=0.8)
        assert not on.error, on.error
        note = next(n for n in on.notes if n.startswith("unsure_depth:"))
        assert "at least 2 hops" in note and on.parameters["unsure_depth"] == 0.8
        best = on.chains[0]
        heads = {t.head for t in best}
        assert heads - {"Heat"}, on.raw_output  # the chain left the question's entity's own triplets
        # ... because its steps were held to the way out while it stood one hop out (or its answer taken back)
        assert any("its reading says 2" in s.note for s in on.steps), [s.note for s in on.steps]
        assert on.answers and on.answers[0].entity, on.raw_output
    off = ask(unsure_depth=0.0)
    assert not any(n.startswith("unsure_depth:") for n in off.notes)
    assert not any("its reading says" in s.note for s in off.steps)
    assert not any(n.startswith("unsure_depth:") for n in ask(preset="paper").notes)
