"""Complete answers: every entity the chain's last relation holds, after the model's own."""

from __future__ import annotations

from kgqa_core.answers.completion import complete_from_last_triplet
from kgqa_core.decoding.context import resolve_answers
from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.trace.schema import Answer, Trace

G = KnowledgeGraph.from_triplets(
    [
        ("Disclosure", "starred_actors", "Michael Douglas"),
        ("Disclosure", "starred_actors", "Demi Moore"),
        ("Disclosure", "starred_actors", "Donald Sutherland"),
        ("Disclosure", "directed_by", "Barry Levinson"),
        ("Ghost", "starred_actors", "Demi Moore"),
        ("G.I. Jane", "starred_actors", "Demi Moore"),
        ("Rain Man", "directed_by", "Barry Levinson"),
    ]
)


def _ans(*names):
    return [Answer(text=n, entity=n if G.has_entity(n) else None, in_graph=G.has_entity(n)) for n in names]


def test_forward_triplet_adds_every_tail_after_the_models_answer():
    last = G.find("Disclosure", "starred_actors", "Demi Moore")
    got = complete_from_last_triplet(_ans("Demi Moore"), last, G, topics=["Disclosure"])
    assert [a.text for a in got.answers] == ["Demi Moore", "Michael Douglas", "Donald Sutherland"]
    assert [a.completed_from_graph for a in got.answers] == [False, True, True]
    assert got.direction == "tails" and got.anchor == "Disclosure" and got.cut == 0
    assert "every tail of (Disclosure, starred_actors, ?)" in got.note and "2 answer(s) added" in got.note


def test_backward_reading_adds_every_head_and_never_the_topic_entity():
    # "which films did Demi Moore act in": the chain read (Ghost, starred_actors, Demi Moore) backwards
    last = G.find("Ghost", "starred_actors", "Demi Moore")
    got = complete_from_last_triplet(_ans("Ghost"), last, G, topics=["Demi Moore"])
    assert [a.text for a in got.answers] == ["Ghost", "Disclosure", "G.I. Jane"]
    assert got.direction == "heads" and got.anchor == "Demi Moore"
    # a topic entity among the films is not added
    got = complete_from_last_triplet(_ans("Ghost"), last, G, topics=["Demi Moore", "Disclosure"])
    assert [a.text for a in got.answers] == ["Ghost", "G.I. Jane"]


def test_no_completion_when_the_answer_is_not_on_the_triplets_relation_or_nothing_is_missing():
    last = G.find("Disclosure", "starred_actors", "Demi Moore")
    assert complete_from_last_triplet(_ans("Barry Levinson"), last, G, ["Disclosure"]) is None
    assert complete_from_last_triplet(_ans("Atlantis"), last, G, ["Disclosure"]) is None
    # the model already gave the whole list
    full = _ans("Michael Douglas", "Demi Moore", "Donald Sutherland")
    assert complete_from_last_triplet(full, last, G, ["Disclosure"]) is None
    # the answer is the question's own entity: no completion from it
    assert complete_from_last_triplet(_ans("Disclosure"), last, G, ["Disclosure"]) is None


def test_a_hub_relation_is_cut_and_the_cut_is_noted():
    hub = KnowledgeGraph.from_triplets([(f"Film {i}", "has_genre", "Drama") for i in range(250)])
    last = hub.find("Film 3", "has_genre", "Drama")
    got = complete_from_last_triplet([Answer("Film 3", "Film 3", True)], last, hub, topics=["Drama"], max_added=100)
    assert len(got.answers) == 101 and got.held == 250 and got.cut == 149
    assert "cut at 100 of 250; 149 left out" in got.note


def test_resolve_answers_completes_only_when_asked_and_notes_it():
    last = G.find("Disclosure", "starred_actors", "Demi Moore")
    notes: list[str] = []
    plain = resolve_answers(["Demi Moore"], G, ["Disclosure"], notes)
    assert [a.text for a in plain] == ["Demi Moore"] and notes == []
    done = resolve_answers(["Demi Moore"], G, ["Disclosure"], notes, complete_from=last)
    assert [a.text for a in done] == ["Demi Moore", "Michael Douglas", "Donald Sutherland"]
    assert len(notes) == 1 and notes[0].startswith("answers completed from the graph")
    # the flag survives a JSON round trip of the trace
    trace = Trace(method="dog", question="q", answers=done)
    back = Trace.from_json(trace.to_json())
    assert [a.completed_from_graph for a in back.answers] == [False, True, True]
