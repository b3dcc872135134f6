"""The gold answer travels with the run: saved in the trace, read back by old and new readers alike."""

from __future__ import annotations

from kgqa_core.trace.gold import grade
from kgqa_core.trace.schema import Answer, Trace


def test_a_trace_keeps_its_gold_and_an_older_trace_without_it_still_loads():
    t = Trace(method="dog", question="q", gold_answers=["1967", "1968"])
    assert Trace.from_json(t.to_json()) == t
    old = t.to_dict()
    del old["gold_answers"]  # written before the field existed
    assert Trace.from_dict(old).gold_answers == []


def test_grade_reads_like_the_app_in_words_without_emoji():
    answers = [Answer(text="The Wrecking Crew.", entity="The Wrecking Crew"), Answer(text="1967")]
    g = grade(answers, ["the wrecking crew", "1968"])
    assert g.hit_at_1 and g.matched == 1 and g.gold == 2
    assert g.text == "first answer correct: 1/2 gold found"
    assert grade(answers[1:], ["1968"]).text == "not correct: 0/1 gold found"
    assert grade(answers, []) is None
    assert all(ord(ch) < 0x2600 for ch in g.text)  # nothing that needs an emoji font
