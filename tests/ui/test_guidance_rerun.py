"""Issue 30, "Visible, reversible guidance": a result card reruns its run with the paper preset; a glossary of the guidance terms.

The run uses the 135M model with the shortest search (beam 1, one triplet step, a short prompt).
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from apptest import TIMEOUT, assert_clean as _ok, lean_dog_on_ask, wait_for_ask_run as _wait
from conftest import APP
from kgqa_core.methods.base import method_spec
from kgqa_core.parameters import declared
from kgqa_ui.guidance_ui import GLOSSARY_TITLE, RERUN_LABEL, glossary, paper_params
from kgqa_ui.html_utils import md_text
from kgqa_ui.run_store import RunStore

pytestmark = pytest.mark.usefixtures("no_run_outlives_its_test")


def test_a_workbench_card_runs_again_with_the_paper_preset(runs_dir, monkeypatch):
    at = lean_dog_on_ask(monkeypatch)
    assert at.radio(key="ask_preset").value == "workbench"
    at.button(key="ask_run").click().run(timeout=900)
    _wait(at)
    _ok(at)
    first = at.session_state["ask_last_runs"]
    assert len(first) == 1 and first[0]["run_id"] and not first[0].get("error"), first
    again = [b for b in at.button if b.key and b.key.startswith("ask_paper_again_")]
    assert len(again) == 1 and again[0].label == RERUN_LABEL and again[0].key == f"ask_paper_again_{first[0]['run_id']}"
    again[0].click().run(timeout=900)
    _wait(at)
    _ok(at)
    runs = at.session_state["ask_last_runs"]
    assert len(runs) == 2 and runs[0]["run_id"] == first[0]["run_id"] and runs[1]["method"] == "dog", runs
    store = RunStore(runs_dir)
    old, new = store.load(runs[0]["run_id"]), store.load(runs[1]["run_id"])
    assert old.parameters["preset"] == "workbench" and new.parameters["preset"] == "paper"
    assert new.question == old.question and new.topic_entities == old.topic_entities
    assert new.gold_answers == old.gold_answers and new.graph_fingerprint == old.graph_fingerprint
    assert new.parameters["beam_size"] == 1 and new.parameters["max_steps"] == 1  # the card's own values
    assert new.parameters["walk_to_depth"] is False and new.parameters["reader"] == "none"  # the paper's
    # the new card says its preset and offers no second "without guidance"
    assert any(c.value == "Preset: " + md_text("Paper (as published)") for c in at.caption)
    assert [b.key for b in at.button if b.key and b.key.startswith("ask_paper_again_")] == [again[0].key]


def test_the_paper_rerun_keeps_the_runs_own_parameters_and_leaves_the_guidance_to_the_preset():
    from types import SimpleNamespace

    trace = SimpleNamespace(method="dog", parameters={"beam_size": 2, "walk_to_depth": True, "preset": "workbench"})
    assert paper_params(trace) == {"beam_size": 2, "preset": "paper"}
    # the parameters the run was started with win over the trace's (which may hold guided values)
    assert paper_params(trace, {"max_steps": 1, "walk_to_depth": True}) == {"max_steps": 1, "preset": "paper"}


def test_the_glossary_lists_walk_to_depth_with_its_declared_help():
    helps = {i.name: i.help for i in declared(method_spec("dog").params)}
    terms = dict(glossary(["dog"]))
    assert terms["walk_to_depth"] == helps["walk_to_depth"] and terms["preset"] == helps["preset"]
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    _ok(at)
    box = next(e for e in at.expander if e.label == GLOSSARY_TITLE)
    text = "\n".join(m.value for m in box.markdown)
    assert md_text("walk_to_depth") in text and md_text(helps["walk_to_depth"]) in text
    for term in ("past_horizon", "reading_phrase_gain", "reading_joint", "reading_cover", "conclude_at_depth",
                 "meet_topics", "reading_horizon", "reading_order", "reading_answer_kind", "reading_every_relation", "reading_one_arrow", "reading_stop_weight",
                 "reading_domain_words", "reading_agree", "reading_distinct", "reading_entity_free", "reading_listed", "reading_look", "reading_kind_look",
                 "guided_context_triplets", "describe_relations", "describe_other_languages", "plan_leads_answers"):  # recent switches, in the method's own words
        assert terms[term] == helps[term] and md_text(helps[term]) in text
