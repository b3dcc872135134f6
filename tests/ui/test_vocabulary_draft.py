"""The Ask page's "Draft with the model": the model writes the vocabulary's words, the user's own lines kept.

Driven with the 135M model on the app's sample graph (a few relations, well under a minute).
"""

from __future__ import annotations

import time

import pytest
from streamlit.testing.v1 import AppTest

from apptest import assert_clean as _ok, open_app as _app, small_model_or_skip
from kgqa_ui.draft_job import DraftJob, merged_text
from kgqa_core.reading.vocabulary import RelationVocabulary


pytestmark = pytest.mark.usefixtures("no_run_outlives_its_test")


def _wait(at: AppTest, timeout: float = 600) -> DraftJob:
    deadline = time.monotonic() + timeout
    while not (job := at.session_state["vocab_job"]).done:
        assert time.monotonic() < deadline, "the draft did not finish in time"
        time.sleep(1)
        at.run(timeout=timeout)
    at.run(timeout=timeout)
    return job


def test_the_draft_fills_the_text_after_the_users_lines_and_goes_with_the_runs(runs_dir, monkeypatch):
    small_model_or_skip()
    monkeypatch.setenv("KGQA_APP_MODEL", "smollm2-135m")
    at = _app()
    graph_relations = sorted(at.session_state["graph"].relations) if "graph" in at.session_state else None
    mine = "directed_by: director, made by\n"
    at.text_area(key="ask_vocab_text").set_value(mine).run()
    _ok(at)
    button = at.button(key="ask_vocab_draft")
    assert not button.disabled and "smollm2-135m" in (button.help or "")
    button.click().run()
    _ok(at)
    job = _wait(at)
    _ok(at)
    assert "directed_by" not in job.relations, "a relation the user describes is not asked again"
    text = at.text_area(key="ask_vocab_text").value
    assert text.startswith(mine), "the user's lines stay as they were, first"
    assert "# drafted by smollm2-135m" in text
    vocab = at.session_state["graph_vocabulary"]
    assert vocab.aliases("directed_by") == ["director", "made by"]
    assert len(vocab.entries) > 1, "the model described at least one more relation"
    assert any("described" in s.value and "draft" in s.value for s in at.success)
    if graph_relations:
        assert set(vocab.entries) <= set(graph_relations)
    # the button offers only what is left; the page reruns without drafting again
    at.run()
    _ok(at)
    assert at.session_state["vocab_job"] is job


def test_stopping_keeps_what_was_drafted_and_the_text(runs_dir, monkeypatch):
    small_model_or_skip()
    monkeypatch.setenv("KGQA_APP_MODEL", "smollm2-135m")
    at = _app()
    at.button(key="ask_vocab_draft").click().run()
    job = at.session_state["vocab_job"]
    job.stop()
    job = _wait(at)
    _ok(at)
    p = job.progress()
    assert p.stopped and p.relations_done < p.relations_total or p.relations_done == p.relations_total
    drafted = job.result()
    text = at.text_area(key="ask_vocab_text").value or ""
    for relation in drafted.entries:
        assert f"{relation}: " in text


def test_merging_never_overwrites_the_users_lines_and_keeps_a_text_with_errors():
    drafted = RelationVocabulary({"spouse": ["wife"], "born_in": ["birthplace"]}, "drafted by m")
    assert merged_text("spouse: husband\n", drafted, 2) == (
        "spouse: husband\n# drafted by m: 1 of 2 relation(s) described; check and correct before relying on it\n"
        "born_in: birthplace\n")
    assert merged_text("no colon here", drafted, 2).startswith("no colon here\n# drafted by m: 2 of 2")
    assert merged_text("spouse: a\nborn_in: b", drafted, 2) == "spouse: a\nborn_in: b"
