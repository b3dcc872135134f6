"""Issue 32 on the Ask page: a sure reading's smaller prompt is set in the form, noted on the card, saved in the run.

The run uses the 135M model with the shortest search (beam 1, one triplet step) and the lexicon reader (no
model call for the reading), whose bars are lowered in the form so that the smaller prompt applies.
"""

from __future__ import annotations

import pytest

from apptest import lean_dog_on_ask, run_one_on_ask
from kgqa_core.methods.dog import DogParams
from kgqa_ui.html_utils import md_text

GUIDED_DEFAULT = DogParams().guided_context_triplets

pytestmark = pytest.mark.usefixtures("no_run_outlives_its_test")


def test_the_smaller_prompt_of_a_sure_reading_is_set_noted_and_saved(runs_dir, monkeypatch):
    at = lean_dog_on_ask(monkeypatch)
    # the defaults, as the form offers them
    assert at.number_input(key="ask_param_sure_context_triplets").value == 8
    assert at.number_input(key="ask_param_sure_context_at").value == 0.9
    assert at.checkbox(key="ask_param_meeting_context").value is True  # a two-entity reading's meeting first
    at.checkbox(key="ask_param_meeting_context").uncheck()
    at.selectbox(key="ask_param_reader").set_value("lexicon")
    at.number_input(key="ask_param_reading_sure_at").set_value(0.0)
    at.number_input(key="ask_param_sure_context_at").set_value(0.0)  # 0: the guidance's own bar
    at.number_input(key="ask_param_sure_context_triplets").set_value(3)
    assert at.number_input(key="ask_param_sure_context_pool").value == 200
    at.number_input(key="ask_param_context_pool").set_value(6)  # candidates embedded for any question
    at.number_input(key="ask_param_sure_context_pool").set_value(3)  # and when only a sure reading's few are shown
    at.run()
    trace = run_one_on_ask(at, runs_dir)
    assert trace.parameters["sure_context_triplets"] == 3 and trace.parameters["sure_context_at"] == 0.0
    assert trace.parameters["meeting_context"] is False
    assert trace.parameters["context_pool"] == 6 and trace.parameters["sure_context_pool"] == 3
    budget = trace.extra["prompt_budget"]
    assert budget["applied"] and budget["shown"] == 3 and budget["of"] > 3 and budget["sure_at"] == 0.0, budget
    assert len(trace.extra["context_triplet_ids"]) == 3
    note = next(n for n in trace.notes if n.startswith("prompt budget:"))
    assert f"3 of {budget['of']} triplets shown" in note
    pruned = next(n for n in trace.notes if n.startswith("prompt context:"))
    assert "ranked 3 of " in pruned and "at most 3 candidates embedded instead of 6, sure_context_pool" in pruned, pruned
    # the card says both, as text
    for said in (note, pruned):
        assert any(c.value == "note: " + md_text(said) for c in at.caption), [c.value for c in at.caption]


def test_the_smaller_prompt_of_a_guiding_reading_is_set_noted_and_saved(runs_dir, monkeypatch):
    at = lean_dog_on_ask(monkeypatch)
    assert at.number_input(key="ask_param_guided_context_triplets").value == GUIDED_DEFAULT
    at.selectbox(key="ask_param_reader").set_value("lexicon")
    at.number_input(key="ask_param_reading_sure_at").set_value(1.0)  # no reading guides the steps
    at.number_input(key="ask_param_guided_context_at").set_value(0.0001)  # but any sets the prompt's context
    at.number_input(key="ask_param_sure_context_at").set_value(1.0)  # and none is very sure
    at.number_input(key="ask_param_guided_context_triplets").set_value(3)
    at.run()
    trace = run_one_on_ask(at, runs_dir)
    assert trace.parameters["guided_context_triplets"] == 3 and trace.parameters["guided_context_at"] == 0.0001
    budget = trace.extra["prompt_budget"]
    assert budget["applied"] and budget["tier"] == "guided" and budget["shown"] == 3, budget
    assert len(trace.extra["context_triplet_ids"]) == 3
    note = next(n for n in trace.notes if n.startswith("prompt budget:"))
    assert "along the question reading's" in note and "guided_context_triplets=3" in note
    assert any(c.value == "note: " + md_text(note) for c in at.caption), [c.value for c in at.caption]
