"""A run whose answers were ranked by the question's two entities (meet_topics): Replay shows why, as text."""

from __future__ import annotations

from apptest import assert_clean, open_replay
from kgqa_core.answers.meeting import NOTE_HEAD
from kgqa_core.methods.base import MethodRequest, run_method
from kgqa_ui.html_utils import md_text

from tests.answers.orchestras import GRAPH


def test_replay_says_which_answers_meet_both_of_the_questions_entities(runs_dir, small_model):
    trace = run_method("dog", MethodRequest(
        graph=GRAPH, question="who plays the oboe in the Oslo Philharmonic?", model=small_model,
        topic_entities=["Oslo Philharmonic", "oboe"],
        # meeting_context off: with the walks' meeting triplets first the model answers the two oboists alone
        params={"max_new_tokens": 48, "reader": "lexicon", "reading_sure_at": 0, "meeting_context": False}))
    note = next(n for n in trace.notes if n.startswith(NOTE_HEAD))  # the rule fired (tests/methods checks how)
    at = open_replay(runs_dir, trace, GRAPH)
    assert_clean(at)
    assert any(c.value == "note: " + md_text(note) for c in at.caption), [c.value for c in at.caption]
    assert trace.answers[0].text in ("Ann Berg", "Cy Rossi")
