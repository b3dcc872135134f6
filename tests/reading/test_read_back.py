"""The question read back from an unsure reading's likeliest walks (`reading_read_back`, the noisy channel)."""

from __future__ import annotations

import math

import pytest

from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.models.interface import PromptText
from kgqa_core.reading import readers
from kgqa_core.reading.readers import READ_BACK_HEAD, make_reader, read_back, weigh_read_back
from kgqa_core.reading.reading import PlanHop, RelationPlan

PEOPLE = KnowledgeGraph.from_triplets([
    ("Ann", "spouse", "Bob"), ("Bob", "ethnicity", "germans"), ("Ann", "ethnicity", "dutch"),
    ("Ann", "place_of_birth", "Delft"), ("Delft", "is_in_country", "Netherlands"), ("Carl", "spouse", "Dora"),
], name="people")
QUESTION = "what is the ethnicity of Ann's wife"
BACK = "reads.reading (the question read back from its walks)"


def _purposes(reading) -> list[str]:
    return [c.purpose for c in reading.calls]


def test_the_question_is_scored_after_each_walk_in_one_batch(backend_model):
    """log P(question | walk): the question's own tokens after ``Walk: <plan>``, whatever the other walks of the batch
    and their order; about what each walk's own prompt gives (there the fixed first line's last line break is
    tokenised together with "Walk", a seam worth a few tenths of a nat, not the tens a wrong span would be)."""
    plans = [RelationPlan("Ann", (PlanHop("spouse"), PlanHop("ethnicity"))), RelationPlan("Ann", (PlanHop("ethnicity"),)),
             RelationPlan("Ann", (PlanHop("place_of_birth"), PlanHop("is_in_country")))]
    backs, call = read_back(backend_model, QUESTION, plans)
    assert len(backs) == 3 and all(b < 0 for b in backs) and len(set(backs)) == 3
    assert call.purpose == BACK and call.forward_passes >= 1
    again, _ = read_back(backend_model, QUESTION, plans[::-1])
    assert all(abs(a - b) < 1e-3 for a, b in zip(backs, again[::-1]))
    for plan, back in zip(plans, backs):
        alone = backend_model.score_continuations(
            PromptText(READ_BACK_HEAD + f"Walk: {plan.text}\nQuestion:", READ_BACK_HEAD), [" " + QUESTION])[0]
        assert abs(alone.total - back) < 1.0, (alone.total, back)


def test_an_unsure_reading_is_weighed_by_the_question_read_back_and_says_so(backend_model, monkeypatch):
    """Read under the bar, the likeliest walks' probabilities are the reading's, weighed by the read-back (exactly
    `weigh_read_back` of the reading without it); the explanation gives each walk's figure; 0 turns it off."""
    monkeypatch.setattr(readers, "READ_BACK_UNDER", 1.01)  # every reading counts as unsure here
    without = make_reader("paths:quick=0,read_back=0", backend_model).read(QUESTION, PEOPLE, ["Ann"])
    assert BACK not in _purposes(without) and "read back" not in without.explanation
    weighed = make_reader("paths:quick=0,read_back=0.5", backend_model).read(QUESTION, PEOPLE, ["Ann"])
    assert _purposes(weighed)[-1] == BACK
    top = [p for p in without.plans[:readers.READ_BACK_WALKS]]
    backs, _ = read_back(backend_model, QUESTION, top)
    expected = weigh_read_back([(p.confidence, p) for p in without.plans], backs, 0.5)
    assert [p.text for p in weighed.plans] == [p.text for _, p in expected]
    assert all(math.isclose(p.confidence, c, abs_tol=1e-5) for p, (c, _) in zip(weighed.plans, expected))
    assert math.isclose(weighed.confidence, weighed.plans[0].confidence, abs_tol=1e-9)
    assert math.isclose(sum(p.confidence for p in weighed.plans), 1.0, abs_tol=1e-6)
    assert "the question was read back from its" in weighed.explanation and "`reading_read_back`" in weighed.explanation
    for plan, back in zip(top, backs):
        assert f"{plan.text} {back:.1f}" in weighed.explanation


def test_a_sure_reading_and_a_two_entity_question_are_not_read_back(small_model, monkeypatch):
    monkeypatch.setattr(readers, "READ_BACK_UNDER", 0.0)  # no reading is that unsure
    sure = make_reader("paths:quick=0", small_model).read(QUESTION, PEOPLE, ["Ann"])
    assert BACK not in _purposes(sure)
    monkeypatch.setattr(readers, "READ_BACK_UNDER", 1.01)
    both = make_reader("paths:quick=0", small_model).read("who is married to both Ann and Carl", PEOPLE, ["Ann", "Carl"])
    assert BACK not in _purposes(both)  # two entities' walks are chosen together (`joint_choice`), not read back


def test_dog_records_the_read_back_in_its_reading_step_and_the_paper_preset_has_none(small_model, monkeypatch):
    from kgqa_core.methods.base import MethodRequest, run_method
    from kgqa_core.reading.guidance import clear_readings

    monkeypatch.setattr(readers, "READ_BACK_UNDER", 1.01)
    clear_readings()
    ask = dict(graph=PEOPLE, question=QUESTION, model=small_model, topic_entities=["Ann"])
    trace = run_method("dog", MethodRequest(**ask, params={"max_new_tokens": 8, "max_steps": 1}))
    assert trace.parameters["reading_read_back"] == 0.5
    assert BACK in [c.purpose for c in trace.steps[0].model_calls]
    assert "read back" in trace.extra["reading"]["explanation"]
    clear_readings()
    paper = run_method("dog", MethodRequest(**ask, params={"preset": "paper", "max_new_tokens": 8, "max_steps": 1}))
    assert not any(c.purpose == BACK for s in paper.steps for c in s.model_calls)
    clear_readings()


@pytest.mark.parametrize("weight", [0.0, 0.5, 2.0])
def test_weighing_keeps_the_walks_share_and_the_rest_of_the_ranking(weight):
    plans = [RelationPlan("X", (PlanHop(r),)) for r in ("a", "b", "c", "d")]
    ranked = [(0.5, plans[0]), (0.3, plans[1]), (0.15, plans[2]), (0.05, plans[3])]
    out = weigh_read_back(ranked, [-30.0, -20.0, -25.0], weight)
    assert math.isclose(sum(p for p, _ in out[:3]), 0.95) and out[3] == ranked[3]
    assert all(math.isclose(p, plan.confidence) for p, plan in out[:3])  # each plan carries its new probability
    if weight == 0.0:
        assert [(round(p, 9), plan.text) for p, plan in out] == [(round(p, 9), plan.text) for p, plan in ranked]
    else:
        assert out[0][1].text == plans[1].text  # 10 nats likelier read back than the first walk


def test_a_reading_lengthened_past_the_horizon_after_the_read_back_still_says_both(small_model, monkeypatch):
    """The read-back weighs the walks before the horizon may add a hop to the first: the explanation names the
    walks as they were read back (a Wikidata 4-hop question crashed the reading when it looked the longer walk up)."""
    from dataclasses import replace

    from kgqa_core.reading.horizon import HorizonHop

    monkeypatch.setattr(readers, "READ_BACK_UNDER", 1.01)
    monkeypatch.setattr(readers.ModelPathReader, "__init__", _with_max_hops(readers.ModelPathReader.__init__, 1))
    longer = lambda q, t, g, plan, *a, **k: HorizonHop(replace(plan, hops=plan.hops + (PlanHop("extra"),)), "x", 1.0)  # noqa: E731
    monkeypatch.setattr(readers, "horizon_hop", longer)
    reading = make_reader("paths:quick=0", small_model).read(QUESTION, PEOPLE, ["Ann"])
    assert reading.plans[0].relations[-1] == "extra" and BACK in _purposes(reading)
    assert "the question was read back from its" in reading.explanation


def _with_max_hops(init, hops):
    """The reader's __init__ with its lexicon planning at most `hops` hops (so every best walk is at the horizon)."""
    def patched(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.lexicon.max_hops = hops
    return patched
