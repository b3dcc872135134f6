"""Issue 32's newest DoG settings on the Ask page: the examples' style (bare by default) and the answer among the
entities reached, offered with their defaults, set in the form and saved with the run."""

from __future__ import annotations

import pytest

from apptest import lean_dog_on_ask, run_one_on_ask

pytestmark = pytest.mark.usefixtures("no_run_outlives_its_test")


def test_the_example_style_and_the_answer_among_reached_are_set_in_the_form_and_saved(runs_dir, monkeypatch):
    at = lean_dog_on_ask(monkeypatch)
    style = at.selectbox(key="ask_param_prompt_examples")
    assert style.value == "bare" and {"bare", "terse", "paper"} <= set(style.options)
    assert at.checkbox(key="ask_param_answer_among_reached").value is True
    style.set_value("terse")
    at.checkbox(key="ask_param_answer_among_reached").uncheck()
    at.run()
    trace = run_one_on_ask(at, runs_dir)
    assert trace.parameters["prompt_examples"] == "terse" and trace.parameters["answer_among_reached"] is False
    assert "1. <" in trace.extra["prompt"] and "2. <" in trace.extra["prompt"]  # the numbered examples, as chosen
