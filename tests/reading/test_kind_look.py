"""The model's look at what kind of thing each likely walk reaches (`reading/kind_look.py`, reader option
``kind_look``): the question's own answer noun, the entity's facts in the graph, the model's log-probability."""

from __future__ import annotations

import math

import pytest

from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.reading import readers
from kgqa_core.reading.kind_look import entity_facts, kind_look, kind_prompt
from kgqa_core.reading.readers import make_reader, weigh_read_back
from kgqa_core.reading.reading import PlanHop, RelationPlan

PEOPLE = KnowledgeGraph.from_triplets([
    ("Ann", "spouse", "Bob"), ("Bob", "ethnicity", "germans"), ("Ann", "place_of_birth", "Delft"),
    ("Delft", "is_in_country", "Netherlands"), ("Bob", "place_of_birth", "Delft"), ("Ann", "nationality", "Netherlands"),
], name="people")
KIND = "reads.reading (what kind of thing"


def _plan(relations: tuple[str, ...], walk: tuple[str, ...]) -> RelationPlan:
    return RelationPlan("Ann", tuple(PlanHop(r) for r in relations), walk=walk, example=walk[-1])


def test_an_entitys_facts_one_per_relation_and_direction_first_then_the_rest_up_to_the_limit():
    facts = entity_facts(PEOPLE, "Delft")
    assert facts == ["Delft — is in country — Netherlands", "Ann — place of birth — Delft", "Bob — place of birth — Delft"]
    assert entity_facts(PEOPLE, "Delft", limit=2) == facts[:2]
    assert entity_facts(PEOPLE, "nobody") == []
    assert kind_prompt("Delft", facts[:1]).endswith("Question: What kind of thing is Delft?\nAnswer: Delft is a")


def test_the_noun_is_scored_after_each_entitys_facts_one_call_each(backend_model):
    """Each entity's figure is the noun's log-probability after its own prompt (as scored alone); one model call
    per entity, in the trace; a walk's score is its entity's figure less the best one's."""
    walks = [_plan(("place_of_birth",), ("Ann", "Delft")),
             _plan(("place_of_birth", "is_in_country"), ("Ann", "Delft", "Netherlands")),
             _plan(("spouse", "place_of_birth"), ("Ann", "Bob", "Delft"))]
    look = kind_look(backend_model, PEOPLE, "country", walks)
    assert list(look.log_kind) == ["Delft", "Netherlands"]  # one judgement per entity
    for entity, figure in look.log_kind.items():
        alone = backend_model.score_continuations(kind_prompt(entity, entity_facts(PEOPLE, entity)), [" country."])[0]
        assert abs(alone.total - figure) < 0.05
    assert [c.purpose for c in look.calls] == [f"{KIND} Delft is)", f"{KIND} Netherlands is)"]
    assert all(c.forward_passes >= 1 for c in look.calls) and look.forward_passes == sum(
        c.forward_passes for c in look.calls)
    scores = [look.walk_score(p) for p in walks]
    assert max(scores) == 0.0 and all(s <= 0.0 for s in scores) and scores[0] == scores[2]
    assert look.walk_score(_plan(("spouse",), ("Ann", "Bob"))) == 0.0  # not looked at


def test_an_unsure_reading_asking_for_a_noun_is_weighed_by_the_kind_look_and_says_so(backend_model, monkeypatch):
    """With the read-back off, the weighed reading is exactly `weigh_read_back` of the reading without the kind
    look, by its walk scores; a question that asks with no noun, or the option at 0, makes no kind call."""
    monkeypatch.setattr(readers, "READ_BACK_UNDER", 1.01)  # every reading counts as unsure here
    question = "which country was Ann born in"
    spec = "paths:quick=0,read_back=0,horizon=0"
    without = make_reader(spec, backend_model).read(question, PEOPLE, ["Ann"])
    assert not any(c.purpose.startswith(KIND) for c in without.calls)
    weighed = make_reader(spec + ",kind_look=1", backend_model).read(question, PEOPLE, ["Ann"])
    kinds = [c for c in weighed.calls if c.purpose.startswith(KIND)]
    assert kinds and weighed.calls[-len(kinds):] == kinds  # after the looks
    top = without.plans[:readers.READ_BACK_WALKS]
    look = kind_look(backend_model, PEOPLE, "country", top)
    expected = weigh_read_back([(p.confidence, p) for p in without.plans], [look.walk_score(p) for p in top], 1.0)
    assert [p.text for p in weighed.plans] == [p.text for _, p in expected]
    assert all(math.isclose(p.confidence, c, abs_tol=1e-3) for p, (c, _) in zip(weighed.plans, expected))
    assert "the question names the kind of thing it asks for, 'country'" in weighed.explanation and "`reading_kind_look`" in weighed.explanation
    no_noun = make_reader(spec + ",kind_look=1", backend_model).read("where was Ann born", PEOPLE, ["Ann"])
    assert not any(c.purpose.startswith(KIND) for c in no_noun.calls)
    assert "`reading_kind_look`" not in no_noun.explanation


def test_off_by_default_and_a_checked_reader_option():
    assert readers.KIND_LOOK == 0.0
    assert make_reader("paths:kind_look=0.5", model=object()).kind_look == 0.5
    with pytest.raises(ValueError, match="kind_looks"):
        make_reader("paths:kind_looks=1", model=object())


def test_dog_passes_reading_kind_look_to_its_reader_and_records_the_look(small_model, monkeypatch):
    """Through DoG: the parameter is in the trace and the reading step holds the kind calls; the paper preset
    reads nothing, so it has none."""
    from kgqa_core.methods.base import MethodRequest, run_method
    from kgqa_core.reading.guidance import clear_readings

    monkeypatch.setattr(readers, "READ_BACK_UNDER", 1.01)  # every reading counts as unsure here
    ask = dict(graph=PEOPLE, question="which country was Ann born in", model=small_model, topic_entities=["Ann"])
    clear_readings()
    trace = run_method("dog", MethodRequest(**ask, params={"max_new_tokens": 8, "max_steps": 1,
                                                           "reading_kind_look": 1.0}))
    assert trace.parameters["reading_kind_look"] == 1.0
    assert any(c.purpose.startswith(KIND) for c in trace.steps[0].model_calls)
    assert "`reading_kind_look`" in trace.extra["reading"]["explanation"]
    clear_readings()
    paper = run_method("dog", MethodRequest(**ask, params={"preset": "paper", "max_new_tokens": 8, "max_steps": 1,
                                                           "reading_kind_look": 1.0}))
    assert not any(c.purpose.startswith(KIND) for s in paper.steps for c in s.model_calls)
    clear_readings()
