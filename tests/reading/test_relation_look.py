"""The model's look at which relations a question asks about (`reading_look`): what it scores and what it offers."""

from __future__ import annotations

import pytest

from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.models.interface import PromptText
from kgqa_core.reading import relation_look as look_module
from kgqa_core.reading.readers import make_reader
from kgqa_core.reading.relation_look import LOOK_HEAD, NO_QUESTION, relation_look

LOOK = "reads.reading (the relations the question asks about)"
# One entity with more one-hop walks than the reader offers (12), so the embedder's offer leaves some out.
RELATIONS = ["spouse", "ethnicity", "place_of_birth", "employer", "alma_mater", "religion", "hobby", "pet",
             "favourite_food", "car", "shoe_size", "blood_type", "eye_colour", "zodiac_sign", "native_language",
             "political_party", "instrument"]
WIDE = KnowledgeGraph.from_triplets([("Ann", r, f"{r}_of_Ann") for r in RELATIONS], name="wide")
QUESTION = "which instrument does Ann play"


def _alone(model, question: str, relation: str) -> float:
    """A relation's log-probability after its own prompt (no batch): what the look must agree with."""
    text = " " + relation.replace("_", " ") + "\n"
    prompt = PromptText(LOOK_HEAD + f"Question: {question}\nRelation:", LOOK_HEAD)
    return model.score_continuations(prompt, [text])[0].total


def test_each_gain_is_the_relation_after_the_question_against_after_none(backend_model):
    """The gain is log P(relation | question) - log P(relation | no question), read in one batch after each prompt,
    as each relation's own call gives it; the order of the relations changes nothing, and the no-question scores
    are kept for the model (a second look reads fewer)."""
    look_module._PRIORS.clear()
    relations = ["spouse", "instrument", "shoe_size"]
    first = relation_look(backend_model, QUESTION, relations)
    assert set(first.gain) == set(relations) and first.calls[0].purpose == LOOK
    for r in relations:
        expected = _alone(backend_model, QUESTION, r) - _alone(backend_model, NO_QUESTION, r)
        assert abs(first.gain[r] - expected) < 1e-3, (r, first.gain[r], expected)
    again = relation_look(backend_model, QUESTION, relations[::-1])
    assert all(abs(first.gain[r] - again.gain[r]) < 1e-3 for r in relations)
    assert again.forward_passes < first.forward_passes  # the priors were not read again


def test_a_walks_score_is_its_hops_mean_gain():
    from kgqa_core.reading.reading import PlanHop, RelationPlan

    look = look_module.RelationLook(gain={"a": 2.0, "b": -1.0})
    assert look.walk_score(RelationPlan("X", (PlanHop("a"), PlanHop("b")))) == pytest.approx(0.5)
    assert look.walk_score(RelationPlan("X", (PlanHop("a"), PlanHop("c")))) == pytest.approx(1.0)  # unknown: 0


def test_the_look_offers_the_walks_the_model_raises_that_the_embedder_left_out(small_model):
    """With look=N the offer is the embedder's, then the walks it left out of the N the look likes best (two of
    each length first); the reading says the look's best gains and which walks it added; with 0 there is no look and
    the offer is as before."""
    from kgqa_core.reading.readers import shortlist

    plain = make_reader("paths", small_model)
    looking = make_reader("paths:look=12", small_model)
    before = plain.offer(QUESTION, WIDE, ["Ann"])
    after = looking.offer(QUESTION, WIDE, ["Ann"])
    assert before.look is None and not before.looked
    assert after.indices[: len(before.indices)] == before.indices  # the embedder's offer is kept whole
    liked = shortlist(after.plans, [after.look.walk_score(p) for p in after.plans], per_length=2, limit=12)
    assert after.looked == [i for i in liked if i not in before.indices]
    assert after.looked and after.indices[len(before.indices):] == after.looked
    reading = looking.read(QUESTION, WIDE, ["Ann"])
    assert reading.calls[0].purpose == LOOK  # in the order the calls were made: the look before the walks are scored
    assert "`reading_look`" in reading.explanation and "were offered too" in reading.explanation
    assert LOOK not in [c.purpose for c in plain.read(QUESTION, WIDE, ["Ann"]).calls]


def test_dog_passes_reading_look_to_its_reader_and_records_the_look(small_model):
    from kgqa_core.methods.base import MethodRequest, run_method
    from kgqa_core.reading.guidance import clear_readings

    clear_readings()
    ask = dict(graph=WIDE, question=QUESTION, model=small_model, topic_entities=["Ann"])
    trace = run_method("dog", MethodRequest(**ask, params={"max_new_tokens": 8, "max_steps": 1, "reading_look": 4}))
    assert trace.parameters["reading_look"] == 4
    assert LOOK in [c.purpose for c in trace.steps[0].model_calls]
    clear_readings()
    paper = run_method("dog", MethodRequest(**ask, params={"preset": "paper", "max_new_tokens": 8, "max_steps": 1,
                                                           "reading_look": 4}))
    assert not any(c.purpose == LOOK for s in paper.steps for c in s.model_calls)
    clear_readings()
