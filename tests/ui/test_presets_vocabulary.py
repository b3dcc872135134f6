"""Issue 29 in the app: the preset beside the method choice, the user's relation vocabulary, the question's reading.

The runs use the 135M model with the shortest search (beam 1, one triplet step, a short prompt).
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

import ui_fixtures as F
from apptest import assert_clean as _ok, lean_dog_on_example, open_app as _app, small_model_or_skip, wait_for_ask_run
from kgqa_core.reading.guidance import record_reading
from kgqa_core.reading.reading import PlanHop, QuestionReading, RelationPlan
from kgqa_core.reading.vocabulary import RelationVocabulary
from kgqa_ui.run_store import RunStore
from kgqa_ui.trace_tables import READ_BACK

pytestmark = pytest.mark.usefixtures("no_run_outlives_its_test")


def _run_and_wait(at: AppTest, timeout: float = 900) -> dict:
    at.button(key="ask_run").click().run(timeout=timeout)
    wait_for_ask_run(at, timeout)
    runs = at.session_state["ask_last_runs"]
    assert len(runs) == 1 and runs[0]["run_id"] and not runs[0].get("error"), runs
    return runs[0]



# ------------------------------------------------------------------ preset
def test_the_paper_preset_runs_dog_as_published_and_the_trace_says_so(runs_dir, monkeypatch):
    small_model_or_skip()
    monkeypatch.setenv("KGQA_APP_MODEL", "smollm2-135m")
    at = _app()
    lean_dog_on_example(at)
    preset = at.radio(key="ask_preset")
    assert preset.options == ["Workbench (guided)", "Paper (as published)"] and preset.value == "workbench"
    assert at.checkbox(key="ask_param_walk_to_depth").value is True
    preset.set_value("paper").run()
    _ok(at)
    # the form starts at the paper's values, under keys of their own; the preset is no parameter widget
    assert at.checkbox(key="ask_param_walk_to_depth@paper").value is False
    assert at.selectbox(key="ask_param_reader@paper").value == "none"
    assert "ask_param_preset" not in {w.key for w in at.selectbox}
    run = _run_and_wait(at)
    _ok(at)
    trace = RunStore(runs_dir).load(run["run_id"])
    assert trace.parameters["preset"] == "paper"
    assert trace.parameters["walk_to_depth"] is False and trace.parameters["reader"] == "none"
    assert trace.parameters["beam_size"] == 1 and trace.parameters["max_steps"] == 1  # the form's own values
    assert not any(s.kind == "reading.plan" for s in trace.steps)
    # back to the workbench: its values, as they were
    at.radio(key="ask_preset").set_value("workbench").run()
    assert at.checkbox(key="ask_param_walk_to_depth").value is True


def test_runs_from_other_pages_take_the_ask_pages_preset():
    from kgqa_core.methods.base import method_spec
    from kgqa_ui.params_form import ask_params

    dog = method_spec("dog")
    assert ask_params(dog, {})["preset"] == "workbench"
    paper = ask_params(dog, {"ask_preset": "paper", "ask_param_walk_to_depth": True})
    assert paper["preset"] == "paper" and paper["walk_to_depth"] is False  # the workbench's widget is not the paper's
    own = ask_params(dog, {"ask_preset": "paper", "ask_param_walk_to_depth@paper": True})
    assert own["walk_to_depth"] is True and own["reader"] == "none"


# ------------------------------------------------------------------ vocabulary
def test_a_bad_vocabulary_line_is_a_text_error_and_nothing_is_lost(runs_dir):
    at = _app()
    at.selectbox(key="ask_example").set_value(0).run()
    question = at.text_area(key="ask_question").value
    text = "directed_by: director, made by\n**written by** the screenwriter\nstarred_actors:"
    at.text_area(key="ask_vocab_text").set_value(text).run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "line 2" in errors[0] and "line 3" in errors[0]
    assert "**" not in errors[0].replace("\\*", ""), "no Markdown is rendered from the error"
    assert at.text_area(key="ask_vocab_text").value == text, "the text is kept to fix"
    assert at.text_area(key="ask_question").value == question and at.multiselect(key="ask_topics").value
    assert at.button(key="ask_run").disabled, "nothing runs with words other than those shown"
    assert "vocabulary" in (at.button(key="ask_run").help or "")
    at.text_area(key="ask_vocab_text").set_value(text.replace("**written by** the", "written_by:").replace(
        "starred_actors:", "starred_actors: actor")).run()
    _ok(at)
    assert not at.button(key="ask_run").disabled
    assert at.session_state["graph_vocabulary"].entries["written_by"] == ["screenwriter"]


def test_unknown_relations_are_a_warning_and_another_graph_clears_the_vocabulary(runs_dir):
    at = _app()
    at.text_area(key="ask_vocab_text").set_value("directed_by: director\nspouse: wife, husband").run()
    assert not at.exception and not at.error
    warning = next(w.value for w in at.warning if "spouse" in w.value)
    assert "directed" not in warning
    assert at.session_state["graph_vocabulary"].aliases("directed_by") == ["director"]
    at.selectbox(key="ask_sample").set_value("dog_freebase").run()
    _ok(at)
    assert "graph_vocabulary" not in at.session_state or at.session_state["graph_vocabulary"] is None
    assert not at.text_area(key="ask_vocab_text").value
    assert any("relation vocabulary was cleared" in i.value for i in at.info)


def test_an_uploaded_vocabulary_fills_the_text_and_names_its_file(runs_dir):
    at = _app()
    at.file_uploader(key="ask_vocab_upload").set_value(("words.txt", b"directed_by: director, made by\n",
                                                         "text/plain")).run()
    _ok(at)
    assert at.text_area(key="ask_vocab_text").value == "directed_by: director, made by\n"
    vocab = at.session_state["graph_vocabulary"]
    assert vocab.source == "words.txt" and vocab.aliases("directed_by") == ["director", "made by"]
    at.text_area(key="ask_vocab_text").set_value("directed_by: director").run()  # edited: no longer the file's
    assert at.session_state["graph_vocabulary"].source == "typed on the Ask page"


def test_a_good_vocabulary_goes_with_the_run_and_the_reading_is_shown(runs_dir, monkeypatch):
    small_model_or_skip()
    monkeypatch.setenv("KGQA_APP_MODEL", "smollm2-135m")
    at = _app()
    lean_dog_on_example(at)
    at.text_area(key="ask_vocab_text").set_value("starred_actors: acted by, actor\nrelease_year: released, year").run()
    _ok(at)
    run = _run_and_wait(at)
    _ok(at)
    trace = RunStore(runs_dir).load(run["run_id"])
    assert trace.parameters["preset"] == "workbench"
    assert trace.extra["vocabulary"]["entries"] == {"starred_actors": ["acted by", "actor"],
                                                     "release_year": ["released", "year"]}
    assert trace.extra["vocabulary"]["source"] == "typed on the Ask page"
    assert trace.steps[0].kind == "reading.plan"
    assert any(m.value == "**Question reading**" for m in at.markdown), "the result card shows the reading"
    assert "starred_actors: acted by, actor" in [c.value.replace("\\", "") for c in at.caption]
    replay = _app("pages/replay.py", run=run["run_id"])
    _ok(replay)


# ------------------------------------------------------------------ a reading.plan step in every view
PLANS = [RelationPlan(F.TOPIC, (PlanHop("starred_actors", False), PlanHop("release_year")), 0.81, "1967", 5),
         RelationPlan(F.TOPIC, (PlanHop("starred_actors", False), PlanHop("has_genre")), 0.12, "Drama", 3)]


def _trace_with_a_reading(graph):
    trace = F.dog_trace(graph)
    steps = list(trace.steps)
    trace.steps = []
    trace.extra["vocabulary"] = RelationVocabulary.parse("starred_actors: acted by", "words.txt").to_dict()
    trace.extra["described_relations"] = {"entries": {"has_imdb_votes": ["**votes**", "<b>popularity</b>"],
                                                      "has_imdb_rating": ["rating"]},
                                          "unread": ["has_imdb_votes", "has_imdb_rating"],
                                          "drafted_now": ["has_imdb_votes", "has_imdb_rating"],
                                          "from_disk": ["has_imdb_rating"], "tokens_written": 7, "seconds": 1.2}

    class Rec:
        def step(self, step):
            trace.add_step(step)

    Rec.trace = trace
    reading = QuestionReading(reader="paths", hops=2, confidence=0.81, sure=True,
                              relations=["starred_actors", "release_year"], order=["starred_actors", "release_year"],
                              plans=PLANS, explanation="the model chose *starred_actors* then release_year")
    record_reading(Rec(), reading, 0.5)
    for s in steps:
        trace.add_step(s)
    return trace


def test_a_reading_step_renders_on_replay_compare_and_runs(runs_dir, graph):
    from kgqa_ui.trace_scene import step_name, step_scene
    from kgqa_ui.views import view_for_step, view_for_trace

    trace = _trace_with_a_reading(graph)
    assert trace.steps[0].kind == "reading.plan" and trace.steps[1].kind == "dog.triplet"
    assert step_name(trace, 0) == "reading the question: 2 hop(s), 81% sure"
    assert view_for_step(trace, trace.steps[0]).label == "the question's reading"
    assert view_for_trace(trace).method == "dog" and view_for_step(trace, trace.steps[1]).method == "dog"
    assert step_name(trace, 1).endswith("first triplet")
    for i in range(len(trace.steps) + 1):
        step_scene(trace, i, graph)
    run_id = RunStore(runs_dir).save(trace, graph).run_id

    replay = _app("pages/replay.py", run=run_id, step="0")
    _ok(replay)
    assert not any("unknown step type" in str(getattr(e, "value", "")) for e in replay.markdown)
    assert any("reading the question" in m.value for m in replay.markdown)
    assert not any("not one this workbench knows" in i.value for i in replay.info)
    plans = [d.value for d in replay.dataframe]
    assert plans and list(plans[0]["plan"]) == [p.text for p in PLANS]
    # the "Question reading" section: the explanation as text (its '*' shown, not rendered), the plans, the words
    assert any(m.value == "**Question reading**" for m in replay.markdown)
    captions = [c.value for c in replay.caption]
    assert any("\\*starred\\_actors\\*" in c for c in captions), "escaped: shown as typed"
    shown = [c.replace("\\", "") for c in captions]
    assert "1. Sharon Tate -> starred_actors (reverse) -> release_year · 81% · e.g. 1967" in shown
    assert "starred_actors: acted by" in shown
    assert "Described by the model (relation names the sentence embedder cannot read):" in shown
    assert "has_imdb_votes: **votes**, <b>popularity</b>" in shown, "the model's words as text, never markup"
    assert f"has_imdb_rating: rating {READ_BACK}" in shown  # said again from an earlier run's answer, and so marked
    for step in range(len(trace.steps) + 1):
        replay.select_slider(key=f"replay_step::{run_id}").set_value(step).run()
        _ok(replay)
    compare = _app("pages/compare.py")
    compare.multiselect(key="cmp_pick").set_value([run_id]).run()
    _ok(compare)
    runs = _app("pages/runs.py", run=run_id)
    _ok(runs)

