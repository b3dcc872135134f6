"""The reader's newest settings on the Ask page: offered with their defaults, set in the form, saved with the run."""

from __future__ import annotations

import pytest

from apptest import lean_dog_on_ask, run_one_on_ask

pytestmark = pytest.mark.usefixtures("no_run_outlives_its_test")


def test_the_stop_weight_the_hop_order_agreeing_looks_distinct_and_listed_walks_are_set_in_the_form_and_saved(
        runs_dir, monkeypatch):
    at = lean_dog_on_ask(monkeypatch)
    assert at.number_input(key="ask_param_reading_stop_weight").value == 0.5
    assert at.number_input(key="ask_param_reading_order").value == 0.0
    assert at.checkbox(key="ask_param_reading_agree").value is True  # two looks that agree settle the reading
    assert at.checkbox(key="ask_param_reading_distinct").value is False  # a walk listed both ways (off by default)
    assert at.number_input(key="ask_param_reading_listed").value == 12  # every walk the quick look scored is listed
    at.number_input(key="ask_param_reading_listed").set_value(8)
    at.number_input(key="ask_param_reading_stop_weight").set_value(1.0)
    at.number_input(key="ask_param_reading_order").set_value(0.2)
    at.checkbox(key="ask_param_reading_agree").uncheck()
    at.checkbox(key="ask_param_reading_distinct").check()
    at.run()
    trace = run_one_on_ask(at, runs_dir)
    assert trace.parameters["reading_stop_weight"] == 1.0 and trace.parameters["reading_order"] == 0.2
    assert trace.parameters["reading_agree"] is False and trace.parameters["reading_distinct"] is True
    assert trace.parameters["reading_listed"] == 8


def test_the_run_card_says_which_nouns_of_the_question_name_no_hop(runs_dir, monkeypatch):
    """`alignment.AGENT_NOUNS` through the app: "films" before "written by Blake Edwards" says what that hop reaches,
    and the result card's "Question reading" says so, as text."""
    at = lean_dog_on_ask(monkeypatch)
    at.text_area(key="ask_question").set_value("when were the films written by Blake Edwards released").run()
    at.multiselect(key="ask_topics").set_value(["Blake Edwards"]).run()
    trace = run_one_on_ask(at, runs_dir)
    said = "'films' says what a hop from the entity after it reaches, so it names no hop of its own"
    assert said in trace.extra["reading"]["explanation"], trace.extra["reading"]["explanation"]
    assert any(said in c.value.replace("\\", "") for c in at.caption), [c.value for c in at.caption]


def test_the_relation_look_is_off_in_the_form_and_when_set_its_look_is_in_the_run_and_on_the_card(runs_dir, monkeypatch):
    """`reading_look` through the app: 0 by default; set to 4 it is saved with the run, the reading step holds the
    model's look at the relations, and the card's "Question reading" says its gains, as text; a second question
    after the first keeps the setting and is looked at too."""
    at = lean_dog_on_ask(monkeypatch)
    assert at.number_input(key="ask_param_reading_look").value == 0
    at.number_input(key="ask_param_reading_look").set_value(4)
    at.run()
    trace = run_one_on_ask(at, runs_dir)
    assert trace.parameters["reading_look"] == 4
    assert "reads.reading (the relations the question asks about)" in [c.purpose for c in trace.steps[0].model_calls]
    said = "the model was asked which relations the question asks about"
    assert said in trace.extra["reading"]["explanation"]
    assert any(said in c.value.replace("\\", "") for c in at.caption), [c.value for c in at.caption]
    # a second question in the same session: the setting stays, and the new question gets its own look
    at.text_area(key="ask_question").set_value("when were the films written by Blake Edwards released").run()
    at.multiselect(key="ask_topics").set_value(["Blake Edwards"]).run()
    assert at.number_input(key="ask_param_reading_look").value == 4
    second = run_one_on_ask(at, runs_dir)
    assert second.question != trace.question and second.parameters["reading_look"] == 4
    assert "reads.reading (the relations the question asks about)" in [c.purpose for c in second.steps[0].model_calls]
    assert said in second.extra["reading"]["explanation"]


def test_the_kind_look_is_set_in_the_form_and_its_figures_are_in_the_run_and_on_the_card(runs_dir, monkeypatch):
    """`reading_kind_look` through the app: saved with the run; on a question that asks with a noun ("which films")
    and reads unsure, the reading step holds the model's kind calls and the card's "Question reading" gives each
    entity's figure, as text."""
    from kgqa_core.reading import readers

    monkeypatch.setattr(readers, "READ_BACK_UNDER", 1.01)  # the 135M's reading counts as unsure, whatever it says
    at = lean_dog_on_ask(monkeypatch)
    assert at.number_input(key="ask_param_reading_kind_look").value == 0.0
    at.number_input(key="ask_param_reading_kind_look").set_value(1.0)
    at.text_area(key="ask_question").set_value("which films did Blake Edwards write").run()
    at.multiselect(key="ask_topics").set_value(["Blake Edwards"]).run()
    trace = run_one_on_ask(at, runs_dir)
    assert trace.parameters["reading_kind_look"] == 1.0
    assert any(c.purpose.startswith("reads.reading (what kind of thing") for c in trace.steps[0].model_calls)
    said = "the question names the kind of thing it asks for, 'films'"
    assert said in trace.extra["reading"]["explanation"]
    assert any(said in c.value.replace("\\", "") for c in at.caption), [c.value for c in at.caption]
    # a second question in the same session keeps the setting and gets its own kind look
    at.text_area(key="ask_question").set_value("which films did Blake Edwards direct").run()
    assert at.number_input(key="ask_param_reading_kind_look").value == 1.0
    second = run_one_on_ask(at, runs_dir)
    assert second.question != trace.question and second.parameters["reading_kind_look"] == 1.0
    assert any(c.purpose.startswith("reads.reading (what kind of thing") for c in second.steps[0].model_calls)
