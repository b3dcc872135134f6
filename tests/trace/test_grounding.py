"""Answers are checked against the chain that produced them, not only against the graph."""

from __future__ import annotations

from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.trace.faithfulness import ground_chain
from kgqa_core.trace.grounding import IN_GRAPH, NOT_IN_GRAPH, ON_CHAIN, OTHER_CHAIN, ground_answers
from kgqa_core.trace.schema import Answer

G = KnowledgeGraph.from_triplets([
    ("Valley of the Dolls", "starred_actors", "Sharon Tate"),
    ("Valley of the Dolls", "release_year", "1967"),
    ("The Wrecking Crew", "starred_actors", "Sharon Tate"),
    ("The Wrecking Crew", "release_year", "1968"),
    ("Eye of the Devil", "release_year", "1966"),
], name="g")
BEST = ground_chain(G, [("Valley of the Dolls", "starred_actors", "Sharon Tate"),
                        ("Valley of the Dolls", "release_year", "1967")], ["Sharon Tate"])
OTHER = ground_chain(G, [("The Wrecking Crew", "starred_actors", "Sharon Tate"),
                         ("The Wrecking Crew", "release_year", "1968")], ["Sharon Tate"])


def _ans(text: str) -> Answer:
    return Answer(text=text, entity=text if G.has_entity(text) else None, in_graph=G.has_entity(text))


def test_each_answer_gets_its_own_verdict():
    rep = ground_answers([_ans("1967"), _ans("1968"), _ans("1966"), _ans("1999")], [BEST, OTHER], G)
    assert [a.status for a in rep.answers] == [ON_CHAIN, OTHER_CHAIN, IN_GRAPH, NOT_IN_GRAPH]
    assert rep.has_chain and rep.on_best_chain == 1 and rep.on_chain == 2 and rep.total == 4 and rep.in_graph == 3
    assert not rep.all_grounded
    assert [a.answer for a in rep.off_chain] == ["1966", "1999"]
    both = ground_answers([_ans("1967"), _ans("1968")], [BEST, OTHER], G)
    assert both.all_grounded and both.on_best_chain == 1  # RoK-style: every answer on some cited chain


def test_all_answers_on_the_best_chain_is_grounded_and_case_is_ignored():
    rep = ground_answers([Answer(text="valley of  the dolls")], [BEST], G)
    assert rep.answers[0].status == ON_CHAIN and rep.all_grounded


def test_an_ill_triplet_reaches_nothing():
    ill = ground_chain(G, [("Sharon Tate", "starred_in", "Rosemary's Baby")], ["Sharon Tate"])
    rep = ground_answers([Answer(text="Rosemary's Baby")], [ill], G)
    assert not rep.has_chain and rep.answers[0].status == NOT_IN_GRAPH and not rep.all_grounded


def test_without_a_chain_only_graph_membership_is_known():
    rep = ground_answers([_ans("1967"), _ans("nowhere")], [], None)
    assert not rep.has_chain and [a.status for a in rep.answers] == [IN_GRAPH, NOT_IN_GRAPH]
    assert not rep.all_grounded and rep.in_graph == 1
    assert ground_answers([], [BEST], G).all_grounded is False
