"""AppTest checks of every page: what a user sees, clicks and gets back."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import ui_fixtures as F
from apptest import assert_clean as _ok, open_app as _app, small_model_or_skip
from conftest import APP
from kgqa_ui.html_utils import md_text
from kgqa_ui.run_store import RunStore

pytestmark = pytest.mark.usefixtures("no_run_outlives_its_test")




def _srcdoc(at: AppTest) -> list[str]:
    return [el.proto.srcdoc for el in at.get("iframe")]


@pytest.mark.parametrize("page", ["pages/ask.py", "pages/replay.py", "pages/compare.py", "pages/explore.py",
                                  "pages/runs.py"])
def test_every_page_loads_with_saved_runs(saved_runs, page):
    at = _app(page)
    _ok(at)
    assert at.title, "page has a title"


@pytest.mark.parametrize("page", ["pages/replay.py", "pages/compare.py", "pages/runs.py"])
def test_pages_have_helpful_empty_states(runs_dir, page):
    at = _app(page)
    _ok(at)
    assert any("No saved runs" in i.value or "No runs yet" in i.value for i in at.info)


def test_ask_loads_a_sample_and_links_the_example_question(runs_dir):
    at = _app()
    _ok(at)
    assert md_text("metaqa_movies") in at.success[0].value  # names are shown as text (escaped Markdown)
    at.selectbox(key="ask_example").set_value(0).run()
    _ok(at)
    question = at.text_area(key="ask_question").value
    assert question
    assert at.multiselect(key="ask_topics").value, "a topic entity was suggested"


def test_bad_upload_shows_the_line_and_keeps_the_previous_graph(runs_dir):
    at = _app()
    at.segmented_control(key="ask_source").set_value("Upload a file").run()
    good = "\n".join("\t".join(t) for t in F.TRIPLETS).encode()
    at.file_uploader(key="ask_upload").set_value(("tate.tsv", good, "text/tab-separated-values")).run()
    _ok(at)
    assert "tate" in at.success[0].value and f"{len(F.TRIPLETS)} triplets" in at.success[0].value
    bad = b"a\tb\tc\nonly two\tfields\nd\te\tf\n"
    at.file_uploader(key="ask_upload").set_value(("broken.tsv", bad, "text/tab-separated-values")).run()
    assert not at.exception
    shown = at.error[0].value.replace("\\", "") if at.error else ""  # file text is escaped Markdown
    assert "broken.tsv" in shown and "line 2" in shown
    assert any("still loaded" in c.value for c in at.caption)
    assert at.session_state["graph"].name == "tate" and len(at.session_state["graph"]) == len(F.TRIPLETS)


def test_oversized_upload_is_refused_with_a_clear_message(runs_dir, monkeypatch):
    monkeypatch.setenv("KGQA_MAX_UPLOAD_MB", "0.001")
    at = _app()
    at.segmented_control(key="ask_source").set_value("Upload a file").run()
    at.file_uploader(key="ask_upload").set_value(("big.tsv", b"a\tb\tc\n" * 1000, "text/plain")).run()
    assert not at.exception
    shown = at.error[0].value.replace("\\", "")
    assert "upload limit" in shown and "KGQA_MAX_UPLOAD_MB" in shown
    assert at.session_state["graph"].name == "metaqa_movies"


def test_replay_steps_through_a_saved_trace(saved_runs):
    run_id = saved_runs["dog"]
    at = _app("pages/replay.py", run=run_id)
    _ok(at)
    assert at.selectbox(key="replay_pick").value == run_id
    n = len(F.dog_trace().steps)
    titles = []
    for _ in range(n):
        docs = _srcdoc(at)
        assert docs and "const SCENE" in docs[0]
        titles.append(docs[0].split("<title>", 1)[1].split("</title>", 1)[0])
        at.button(key="replay_next").click().run()
        _ok(at)
    assert titles[0].startswith(f"Step 1 of {n} ") and titles[-1].startswith(f"Step {n} of {n} ")
    assert at.select_slider[0].value == n  # final
    assert "Final result" in _srcdoc(at)[0]
    assert at.query_params["step"] == [str(n)] or at.query_params["step"] == str(n)
    # the plotly chart of candidate scores is shown on candidate steps; the token view on DoG triplet steps
    at.button(key="replay_prev").click().run()
    at2 = _app("pages/replay.py", run=run_id, step="3")
    _ok(at2)
    assert at2.select_slider[0].value == 3
    assert len(at2.get("plotly_chart")) >= 2  # scores + token heatmap


def test_replay_play_button_toggles(saved_runs):
    at = _app("pages/replay.py", run=saved_runs["rok"])
    at.button(key="replay_play").click().run()
    _ok(at)
    assert at.session_state["replay_playing"] == saved_runs["rok"]
    at.button(key="replay_play").click().run()
    assert at.session_state["replay_playing"] is None


@pytest.mark.parametrize("method", ["reads", "rok", "lpkg", "cot"])
def test_replay_renders_each_method_at_every_step(saved_runs, method):
    at = _app("pages/replay.py", run=saved_runs[method])
    _ok(at)
    n = len(at.select_slider[0].options) - 1
    for i in range(n + 1):
        at.select_slider[0].set_value(i).run()
        _ok(at)
    if method == "reads":
        at.select_slider[0].set_value(1).run()
        assert any("Abstract structure" in d for d in _srcdoc(at))


def test_replay_of_a_malformed_trace_shows_json_not_a_traceback(runs_dir, graph):
    run_id = RunStore(runs_dir).save(F.weird_trace(graph), graph).run_id
    at = _app("pages/replay.py", run=run_id)
    assert not at.exception
    assert any("not in this graph" in d for d in _srcdoc(at))
    assert at.get("json"), "unknown extras shown as JSON"


def test_runs_page_downloads_and_delete(saved_runs, runs_dir):
    at = _app("pages/runs.py", run=saved_runs["dog"])
    _ok(at)
    assert at.selectbox(key="runs_pick").value == saved_runs["dog"]
    assert len(at.dataframe[0].value) == len(saved_runs)
    assert len(at.get("download_button")) == 3
    assert at.button(key="runs_delete").disabled  # needs the confirmation first
    at.checkbox(key=f"runs_confirm::{saved_runs['dog']}").check().run()
    at.button(key="runs_delete").click().run()
    assert not at.exception
    assert not (runs_dir / f"{saved_runs['dog']}.json").exists()
    assert len(RunStore(runs_dir).list()) == len(saved_runs) - 1


def test_runs_page_imports_a_trace_and_rejects_garbage(runs_dir):
    at = _app("pages/runs.py")
    at.file_uploader(key="runs_import").set_value(("t.json", F.dog_trace().to_json().encode(), "application/json")).run()
    assert not at.exception and at.success
    assert len(RunStore(runs_dir).list()) == 1
    at.file_uploader(key="runs_import").set_value(("bad.json", b'{"x": 1}', "application/json")).run()
    assert at.error and md_text("bad.json") in at.error[0].value


def test_compare_table_and_overlay(saved_runs):
    at = _app("pages/compare.py")
    _ok(at)
    at.multiselect(key="cmp_pick").set_value([saved_runs["dog"], saved_runs["cot"]]).run()
    _ok(at)
    at.text_input(key=f"cmp_gold::{F.QUESTION}").set_value("1967 | 1968").run()
    table = next(h.proto.body for h in at.get("html") if "kg-cmp" in h.proto.body)  # wraps: no cell is cut
    rows = [r for r in table.split("<tr>")[2:]]
    assert "dog" in rows[0] and "cot" in rows[1]
    assert "<td>0/4</td>" in rows[0] and "<td>2/2</td>" in rows[1]
    assert "first answer correct: 2/2 gold found" in rows[0]  # words, no emoji (no emoji font needed)
    assert "\u2705" not in table and "\u274c" not in table
    assert "seconds" in str(at.get("plotly_chart")[0].proto.spec)  # cost on separate scales
    assert any("Chains overlaid" in d for d in _srcdoc(at))


def test_explore_search_expand_and_edit_a_copy(runs_dir):
    at = _app("pages/explore.py")
    _ok(at)
    entity = at.session_state["sample_questions"][0].topic_entities[0]
    at.text_input(key="explore_q").set_value(entity).run()
    assert at.selectbox(key="explore_pick").value == entity
    at.button(key="explore_expand").click().run()
    _ok(at)
    assert entity in at.session_state["explore_expanded"]
    assert any("Explored neighbourhoods" in d for d in _srcdoc(at))
    original = at.session_state["graph"]
    n = len(original)
    at.button(key="edit_rm").click().run()
    _ok(at)
    assert len(at.session_state["edited_graph"]) == n - 1 and len(at.session_state["graph"]) == n
    at.text_input(key="edit_h").set_value("Sharon Tate")
    at.text_input(key="edit_r").set_value("born_in")
    at.text_input(key="edit_t").set_value("Dallas")  # a form: the fields go with the click that adds them
    at.button(key="edit_add").click().run()
    _ok(at)
    assert at.session_state["edited_graph"].find("Sharon Tate", "born_in", "Dallas") is not None
    assert original.find("Sharon Tate", "born_in", "Dallas") is None
    assert [at.text_input(key=k).value for k in ("edit_h", "edit_r", "edit_t")] == ["", "", ""]  # ready for the next
    legend = _srcdoc(at)[0]
    assert "expanded entity" in legend and "key entity (RoK)" not in legend  # the legend speaks this page's words


def test_explore_add_waits_for_all_three_fields_and_keeps_what_was_typed(runs_dir):
    """Add is a form's button: an incomplete triplet is refused with a message, nothing is added, the typed
    fields stay; a rerun between fields (another widget) adds nothing and loses nothing of the graph."""
    at = _app("pages/explore.py")
    _ok(at)
    n = len(at.session_state["graph"])
    at.text_input(key="edit_h").set_value("Sharon Tate")
    at.text_input(key="edit_r").set_value("born_in")
    at.button(key="edit_add").click().run()
    assert [e.value for e in at.error] == ["Head\\, relation and tail must all be non\\-empty\\."]
    assert at.session_state.get("edited_graph") is None and len(at.session_state["graph"]) == n
    assert [at.text_input(key=k).value for k in ("edit_h", "edit_r")] == ["Sharon Tate", "born_in"]
    at.text_input(key="edit_t").set_value("Dallas")
    at.button(key="edit_add").click().run()
    _ok(at)
    assert at.session_state["edited_graph"].find("Sharon Tate", "born_in", "Dallas") is not None
    assert len(at.session_state["edited_graph"]) == n + 1 and len(at.session_state["graph"]) == n


def _a_method() -> str | None:
    from kgqa_core.methods.base import available_methods
    from kgqa_core.models.registry import PACKAGED_MODELS, is_installed

    if not is_installed(PACKAGED_MODELS["smollm2-135m"]):
        return None
    methods = available_methods()
    return next((m for m in ("dog", "reads", "rok", "lpkg", "cot", "direct") if m in methods), None)


def test_ask_runs_a_method_with_the_small_model_and_saves_the_trace(runs_dir, monkeypatch):
    method = _a_method()
    if method is None:
        pytest.skip("no reasoning method module or the smollm2-135m model package is not installed yet")
    monkeypatch.setenv("KGQA_APP_MODEL", "smollm2-135m")
    at = _app()
    at.selectbox(key="ask_example").set_value(0).run()
    at.multiselect(key="ask_methods").set_value([method])
    at.number_input(key="ask_beam").set_value(1)
    at.number_input(key="ask_steps").set_value(1).run()
    at.text_input(key="ask_gold_text").set_value("Stalag 17").run()  # a gold answer typed by the user
    _run_and_wait(at, timeout=1800)
    assert not at.exception, [e.value for e in at.exception]
    runs = RunStore(runs_dir).list()
    assert len(runs) == 1 and runs[0].method == method and runs[0].model == "smollm2-135m"
    assert at.session_state["ask_last_runs"][0]["run_id"] == runs[0].run_id
    assert any("Answer" in m.value for m in at.markdown)
    assert any("gold found" in m.value for m in at.markdown), "the typed gold answer marks the run"
    replay = _app("pages/replay.py", run=runs[0].run_id)
    assert not replay.exception and _srcdoc(replay)


# ------------------------------------------------------------ a whole session (issue 13)



@pytest.fixture
def fresh_process(monkeypatch):
    """What a newly started server has: no model loaded, Streamlit's caches empty.

    The first model load of a process is the one that reported progress into the
    page, so each session test starts from it (and gives the loaded models back).
    """
    import streamlit as st
    from kgqa_core.models import manager

    monkeypatch.setenv("KGQA_APP_MODEL", "smollm2-135m")
    st.cache_resource.clear()
    st.cache_data.clear()
    saved = dict(manager._LOADED)
    manager._LOADED.clear()
    yield
    manager._LOADED.clear()
    manager._LOADED.update(saved)
    st.cache_resource.clear()


def _job_running(at: AppTest) -> bool:
    job = at.session_state["ask_job"] if "ask_job" in at.session_state else None
    return job is not None and not job.done


def _run_and_wait(at: AppTest, timeout: float = 900) -> None:
    """Press Run and let the page poll until the run has finished (a user waiting and watching)."""
    at.button(key="ask_run").click().run(timeout=timeout)
    deadline = time.monotonic() + timeout
    while _job_running(at):
        assert time.monotonic() < deadline, "the run did not finish in time"
        time.sleep(2)  # each poll reruns the whole page here (the browser reruns only the panel)
        at.run(timeout=timeout)
    at.run(timeout=timeout)


def _lean_params(at: AppTest, method: str) -> None:
    """One method, the shortest search: the form shows only the parameters that method declares."""
    at.multiselect(key="ask_methods").set_value([method]).run()
    keys = {w.key for w in at.number_input}
    for key, value in (("ask_beam", 1), ("ask_steps", 1), ("ask_budget", 30)):  # 30: a short prompt
        if key in keys:
            at.number_input(key=key).set_value(value)
    at.run()


def _last_run(at: AppTest) -> dict:
    runs = at.session_state["ask_last_runs"]
    assert len(runs) == 1
    return runs[0]


def test_sessions_run_several_questions_and_methods_in_one_process(runs_dir, fresh_process):
    """Regression: only the first run of a server process worked (the cached loader wrote into st.status).

    One session asks two questions with DoG, then the second with READS; then a second
    session (another browser tab, same process) asks a third.
    """
    small_model_or_skip(["dog", "reads"])
    at = _app()
    _ok(at)
    seen = []

    def ask(at: AppTest, example: int, method: str) -> None:
        at.selectbox(key="ask_example").set_value(example).run()
        _lean_params(at, method)
        _run_and_wait(at)
        _ok(at)
        run = _last_run(at)
        assert run["run_id"] and not run.get("error"), run
        trace = RunStore(runs_dir).load(run["run_id"])
        assert trace.method == method and trace.question == at.session_state["sample_questions"][example].question
        seen.append(run["run_id"])

    for example, method in ((0, "dog"), (1, "dog"), (1, "reads")):
        ask(at, example, method)
    ask(_app(), 2, "dog")  # a new session, same process
    assert len(set(seen)) == 4 and len(RunStore(runs_dir).list()) == 4


def test_an_upload_and_the_question_survive_a_visit_to_other_pages(runs_dir):
    at = _app()
    at.segmented_control(key="ask_source").set_value("Upload a file").run()
    good = "\n".join("\t".join(t) for t in F.TRIPLETS).encode()
    at.file_uploader(key="ask_upload").set_value(("tate.tsv", good, "text/tab-separated-values")).run()
    _ok(at)
    at.text_area(key="ask_question").set_value(F.QUESTION).run()
    _ok(at)
    topics = at.multiselect(key="ask_topics").value
    assert F.TOPIC in topics
    for page in ("pages/explore.py", "pages/replay.py", "pages/runs.py"):
        at.switch_page(page).run()
        _ok(at)
        assert at.session_state["graph"].name == "tate"
    at.switch_page("pages/ask.py").run()
    _ok(at)
    assert at.session_state["graph"].name == "tate", "the sample graph was reloaded over the upload"
    assert "tate" in at.success[0].value
    assert at.segmented_control(key="ask_source").value == "Upload a file"
    assert at.text_area(key="ask_question").value == F.QUESTION
    assert at.multiselect(key="ask_topics").value == topics


def test_a_run_shows_progress_can_be_stopped_and_keeps_its_partial_trace(runs_dir, monkeypatch):
    """Run is disabled while the run goes, the step log and elapsed time show, Stop saves the steps so far."""
    at = _set_a_long_dog_run_then_open("pages/ask.py", monkeypatch)
    job = _start_and_watch(at, "ask", "dog: running · triplet step ")
    labels = [s.label for s in at.status]
    assert any(re.search(r" · \d+ s( · |$)", lb) for lb in labels), labels  # the elapsed time
    assert any(re.search(r" · (about \d+ (s|min) left|no run like this one measured here yet|longer than the usual)",
                         lb) for lb in labels), labels  # and the time left, or why it is not known
    assert any(line.startswith("1. ") for t in at.status[-1].text for line in t.value.splitlines()), \
        "the step log lists step 1"
    _stop_and_wait(at, "ask", job)
    run = _last_run(at)
    assert run["stopped"] and run["run_id"], run
    trace = RunStore(runs_dir).load(run["run_id"])
    assert trace.stopped and trace.steps and not trace.error
    assert any("Stopped by you" in w.value for w in at.warning)
    assert not at.button(key="ask_run").disabled, "Run is enabled again"
    labels = [s.label for s in at.status]
    assert any(lb.startswith("Stopped after") for lb in labels), labels


def _wait_for_a_step(job, timeout: float = 900) -> None:
    deadline = time.monotonic() + timeout
    while job.progress().steps < 1 and not job.done:
        assert time.monotonic() < deadline, "no step recorded in time"
        time.sleep(1)


def _start_and_watch(at: AppTest, key: str, headline: str):
    """Press the page's run button (``<key>_run``); once a step is recorded the job is still going,
    the button is disabled and the progress panel's headline starts with `headline` and names the step."""
    at.button(key=f"{key}_run").click().run()
    _ok(at)
    job = at.session_state[f"{key}_job"]
    _wait_for_a_step(job)
    # the panel names the method's stage as it goes; once past reading the question, the triplet step
    deadline = time.monotonic() + 600
    while True:
        at.run()
        labels = [s.label for s in at.status]
        if any(lb.startswith(headline) and " of at most 4" in lb for lb in labels) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert not job.done, "the run should still be going (4 triplet steps)"
    assert at.button(key=f"{key}_run").disabled, "Run is disabled while the run is going"
    assert any(lb.startswith(headline) and " of at most 4" in lb for lb in labels), labels
    return job


def _stop_and_wait(at: AppTest, key: str, job) -> None:
    at.button(key=f"{key}_job_stop").click().run()
    assert job.progress().stop_requested
    assert job.wait(timeout=900)
    at.run()
    _ok(at)


def _set_a_long_dog_run_then_open(page: str, monkeypatch) -> AppTest:
    """Example 0 set up on the Ask page with DoG, beam 1 and 4 triplet steps (long enough to be
    stopped), then `page` opened in the same session."""
    small_model_or_skip(["dog", "reads"])
    monkeypatch.setenv("KGQA_APP_MODEL", "smollm2-135m")
    at = _app()
    at.selectbox(key="ask_example").set_value(0).run()
    _lean_params(at, "dog")
    at.number_input(key="ask_steps").set_value(4).run()
    # the paper's offer and step budget (the question's reading would raise 4 steps to two per hop it reads):
    # the chain writes all 4 steps
    # (nor the 135M's descriptions of the sample's has_imdb_* names: with them its reading, and so its chain, changes,
    # and the run may answer after two steps)
    for rule in ("question_relations", "stay_at_depth", "auto_steps", "describe_relations"):
        at.checkbox(key=f"ask_param_{rule}").uncheck()
    # and the whole pruned context, whatever the reading: with a very sure reading's 8 triplets the 135M may
    # answer after one step, and the run ends before it can be watched
    at.number_input(key="ask_param_sure_context_triplets").set_value(0)
    at.run()
    at.switch_page(page).run()
    _ok(at)
    return at


def test_explore_reask_runs_in_the_background_shows_progress_and_stops(runs_dir, monkeypatch):
    """Explore's re-ask is a job like Ask's: Ask's parameters, progress, Run disabled, Stop saves the partial run."""
    at = _set_a_long_dog_run_then_open("pages/explore.py", monkeypatch)
    for k, v in (("edit_h", "Otto Preminger"), ("edit_r", "directed"), ("edit_t", "Laura")):
        at.text_input(key=k).set_value(v)
    at.button(key="edit_add").click().run()
    _ok(at)
    at.selectbox(key="edit_method").set_value("dog").run()
    assert at.text_input(key="edit_q").value == at.session_state["ask_question"]
    job = _start_and_watch(at, "edit", "dog on the original graph (1 of 2): running")
    at.switch_page("pages/ask.py").run()  # one run at a time per session: Ask says where it is going
    assert at.button(key="ask_run").disabled
    assert "Explore page" in (at.button(key="ask_run").help or "")
    at.switch_page("pages/explore.py").run()
    _stop_and_wait(at, "edit", job)
    original, edited = at.session_state["edit_results"]
    assert original["stopped"] and original["run_id"], original
    assert edited["stopped"] and not edited["run_id"], "the edited graph's run is not started after Stop"
    trace = RunStore(runs_dir).load(original["run_id"])
    assert trace.stopped and trace.steps and not trace.error
    assert trace.parameters["max_steps"] == 4 and trace.parameters["beam_size"] == 1, "the Ask page's parameters"
    assert any("Stopped by you" in w.value for w in at.warning)
    assert any(i.value.startswith("Not run") for i in at.info)
    assert not any("did not change" in i.value for i in at.info), "a stopped run's answer is not compared"
    assert not at.button(key="edit_run").disabled


def test_compare_runs_in_the_background_shows_progress_and_stops(runs_dir, monkeypatch):
    """Compare's Run all is a job like Ask's; its runs join the comparison, stopped ones marked."""
    at = _set_a_long_dog_run_then_open("pages/compare.py", monkeypatch)
    at.multiselect(key="cmp_methods").set_value(["dog", "reads"]).run()
    job = _start_and_watch(at, "cmp", "dog (1 of 2): running")
    _stop_and_wait(at, "cmp", job)
    dog, reads = at.session_state["cmp_outcomes"]
    assert dog["stopped"] and dog["run_id"] and reads["stopped"] and not reads["run_id"]
    assert RunStore(runs_dir).load(dog["run_id"]).stopped
    assert at.multiselect(key="cmp_pick").value == [dog["run_id"]], "the new run is compared"
    assert any(i.value.startswith("Not run") for i in at.info)
    assert not at.button(key="cmp_run").disabled


def test_topic_entity_suggestions_say_why_in_plain_words(runs_dir):
    at = _app()
    at.selectbox(key="ask_example").set_value(0).run()
    _ok(at)
    box = at.multiselect(key="ask_topics")
    topic = at.session_state["sample_questions"][0].topic_entities[0]
    assert box.value == [topic]
    labels = box.options
    assert f"{topic}  · marked with [ ] in the question" in labels, labels
    assert not any("(bracket" in o or ", 1.00)" in o for o in labels), labels
    at.text_area(key="ask_question").set_value("which films did Otto Premingr direct").run()  # a typo: fuzzy
    labels = at.multiselect(key="ask_topics").options
    assert any(o.startswith("Otto Preminger  · fuzzy match ") and o.endswith("%") for o in labels), labels


def test_gold_answer_is_filled_from_an_example_typed_for_an_own_question_and_shared(runs_dir):
    at = _app()
    at.selectbox(key="ask_example").set_value(0).run()
    example = at.session_state["sample_questions"][0]
    assert at.text_input(key="ask_gold_text").value == " | ".join(example.answers)
    assert at.session_state["ask_gold"] == list(example.answers)
    at.text_area(key="ask_question").set_value("the films written by [Otto Preminger], who acted in them").run()
    assert at.text_input(key="ask_gold_text").value == "", "an example's gold is not kept for another question"
    assert at.session_state["ask_gold"] == []
    at.text_input(key="ask_gold_text").set_value("Laura | Bunny Lake Is Missing,  the sequel | ").run()
    _ok(at)
    assert at.session_state["ask_gold"] == ["Laura", "Bunny Lake Is Missing,  the sequel"]
    at.switch_page("pages/compare.py").run()
    at.switch_page("pages/ask.py").run()
    assert at.text_input(key="ask_gold_text").value.startswith("Laura | ")
    assert at.session_state["ask_gold"][0] == "Laura"


def test_the_upload_box_states_the_limit_it_applies(runs_dir, monkeypatch):
    monkeypatch.setenv("KGQA_MAX_UPLOAD_MB", "7")
    at = _app()
    at.segmented_control(key="ask_source").set_value("Upload a file").run()
    box = at.get("file_uploader")[0]
    assert "up to 7 MB" in box.proto.label
    assert box.proto.max_upload_size_mb == 7, "Streamlit refuses bigger files with the same limit"
    import tomllib

    config = tomllib.loads((Path(APP).parent / ".streamlit" / "config.toml").read_text())
    from kgqa_ui.state import DEFAULT_UPLOAD_MB

    assert config["server"]["maxUploadSize"] == DEFAULT_UPLOAD_MB, "the other upload boxes use the same default"


def test_answers_written_otherwise_or_naming_no_entity_are_marked_in_words(runs_dir, graph):
    """Issue 29: Replay, Compare and Runs say in text (no emoji, never Markdown) how each answer stands."""
    from kgqa_core.trace.schema import Answer

    trace = F.dog_trace(graph)
    trace.answers = [Answer(text="1967", entity="1967", in_graph=True, mapped_from="the year *1967*", match="embedding"),
                     Answer(text="[the late sixties](http://example.com)")]
    run_id = RunStore(runs_dir).save(trace, graph).run_id
    for page in ("pages/replay.py", "pages/runs.py"):
        at = _app(page, run=run_id)
        _ok(at)
        answer = next(m.value for m in at.markdown if m.value.startswith("**Answer:**"))
        # the model's text is escaped, so '*' and the link stay as typed
        assert "\\*1967\\*" in answer and "\\[the late sixties\\]\\(http" in answer
        shown = answer.replace("\\", "")
        assert "1967 (written as 'the year *1967*')" in shown, shown
        assert "[the late sixties](http://example.com) (not a graph entity)" in shown.replace("\u2060", ""), shown
    at = _app("pages/compare.py")
    at.multiselect(key="cmp_pick").set_value([run_id]).run()
    _ok(at)
    table = next(h.proto.body for h in at.get("html") if "kg-cmp" in h.proto.body)
    assert "1967 (written as &#x27;the year *1967*&#x27;)" in table and "(not a graph entity)" in table
