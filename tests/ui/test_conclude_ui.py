"""A run whose chain answered where its path completed the question's reading (conclude_at_depth): Replay shows the
note, as text, on the answer step."""

from __future__ import annotations

from apptest import assert_clean, open_replay, replay_at_step
from kgqa_core.methods.base import MethodRequest, run_method
from kgqa_core.reading.guidance import clear_readings
from kgqa_ui.html_utils import md_text

from tests.methods.test_conclude_at_depth_dog import CITIES, GRAPH


def test_replay_says_the_chain_answered_where_its_path_completed_the_reading(runs_dir, small_model):
    clear_readings()
    trace = run_method("dog", MethodRequest(graph=GRAPH, question="give me the cities in virginia", model=small_model,
                                            topic_entities=["virginia"], params={"max_new_tokens": 96}))
    note = next(n for n in trace.notes if n.startswith("conclude_at_depth:"))
    assert {a.entity for a in trace.answers} >= set(CITIES)
    at = open_replay(runs_dir, trace, GRAPH)
    assert_clean(at)
    shown = [c.value for c in at.caption] + [m.value for m in at.markdown]
    assert any(md_text(note) in v for v in shown), shown


def test_replay_shows_the_answer_items_choice_among_the_reached_entities(runs_dir, small_model):
    """The answer item chosen under the reached names' trie (`answer_among_reached`) has a token view like a
    triplet's; Replay draws it on the answer step, titled as the answer's."""
    clear_readings()
    trace = run_method("dog", MethodRequest(graph=GRAPH, question="give me the cities in virginia", model=small_model,
                                            topic_entities=["virginia"], params={"max_new_tokens": 96}))
    step = next(i for i, s in enumerate(trace.steps) if s.kind == "dog.answer")
    assert trace.steps[step].token_view
    at = replay_at_step(runs_dir, trace, GRAPH, step)
    assert_clean(at)
    shown = [m.value for m in at.markdown]
    assert any("Token-level view of the answer, chosen among the entities" in v for v in shown), shown
