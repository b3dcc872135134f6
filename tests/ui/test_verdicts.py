"""Honest verdicts: exact names preselected, answers checked against where the chain ends, edits reported as they are."""

from __future__ import annotations

from types import SimpleNamespace

import ui_fixtures as F
from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.trace.faithfulness import check_chains, ground_chain
from kgqa_core.trace.grounding import chain_ends, ground_answers
from kgqa_core.trace.schema import Answer, Trace
from kgqa_ui.counterfactual import Edit, edit_effect
from kgqa_ui.link_labels import preselected
from kgqa_ui.trace_tables import faithfulness_badge, grounding_badge

FOOT = KnowledgeGraph.from_triplets([
    ("Jose CORONA", "nationality", "Mexico"),
    ("Jose CORONA", "plays_position", "Goalkeeper"),
    ("Jose CORONA", "plays_for", "Tecos"),
    ("Guillermo OCHOA", "nationality", "Mexico"),
    ("Guillermo OCHOA", "plays_position", "Goalkeeper"),
    ("Iker CASILLAS", "nationality", "Spain"),
    ("Iker CASILLAS", "plays_position", "Goalkeeper"),
], name="football")
QUESTION = "which Mexican players are goalkeepers"


def _cand(entity: str, method: str, score: float):
    return SimpleNamespace(entity=entity, method=method, score=score)


def test_every_exact_name_match_is_preselected_whatever_its_score():
    cands = [_cand("Goalkeeper", "exact", 0.9), _cand("Mexico", "exact", 0.84), _cand("Mexicans", "fuzzy", 0.86),
             _cand("Goal", "fuzzy", 0.5)]
    assert preselected(cands) == ["Goalkeeper", "Mexico", "Mexicans"]
    many = [_cand(f"E{i}", "exact", 0.3) for i in range(5)]
    assert preselected(many) == [f"E{i}" for i in range(5)]  # never cut at three
    assert preselected([_cand("Goal", "fuzzy", 0.5)]) == ["Goal"]  # nothing sure: the best is offered
    assert preselected([]) == []


def _run(chain: list[tuple[str, str, str]], answers: list[str], graph: KnowledgeGraph = FOOT,
         completed: tuple[str, ...] = ()) -> Trace:
    tr = Trace(method="dog", question=QUESTION, topic_entities=["Mexico"])
    tr.chains = [ground_chain(graph, chain, tr.topic_entities)] if chain else []
    tr.answers = [Answer(text=a, entity=a if graph.has_entity(a) else None, in_graph=graph.has_entity(a),
                         completed_from_graph=a in completed) for a in answers]
    tr.faithfulness = check_chains(graph, [chain] if chain else [], tr.topic_entities, tr.answers)
    return tr


CHAIN = [("Jose CORONA", "nationality", "Mexico"), ("Jose CORONA", "plays_for", "Tecos")]


def test_an_answer_the_chain_passed_through_is_not_what_it_reached():
    assert chain_ends(ground_chain(FOOT, CHAIN, ["Mexico"]), ["Mexico"]) == {"Tecos"}
    player = _run(CHAIN, ["Jose CORONA"])  # "which club": the chain reached Tecos, the answer names the player
    assert faithfulness_badge(player).color == "green"  # every cited triplet is in the graph ...
    assert "cited triplets in the graph" in faithfulness_badge(player).label and "faithful" not in \
        faithfulness_badge(player).label
    badge = grounding_badge(player, FOOT)  # ... but the answer is not where the chain ends
    assert badge.color == "orange" and "not where the chain ends" in badge.label
    club = _run(CHAIN, ["Tecos"])
    assert grounding_badge(club, FOOT).color == "green" and "where the chain ends" in grounding_badge(club, FOOT).label


def test_answers_that_are_not_graph_entities_are_flagged_red():
    tr = _run(CHAIN, ["Tecos", "Club América"])
    badge = grounding_badge(tr, FOOT)
    assert badge.color == "red" and "not a graph entity" in badge.label
    assert "Club América: not an entity of the graph" in badge.help


def test_siblings_listed_at_one_depth_are_all_ends_and_completion_is_said():
    chain = [("Jose CORONA", "nationality", "Mexico"), ("Guillermo OCHOA", "nationality", "Mexico")]
    rep = ground_answers(_run(chain, []).answers, [ground_chain(FOOT, chain, ["Mexico"])], FOOT, ["Mexico"])
    assert rep.total == 0
    assert chain_ends(ground_chain(FOOT, chain, ["Mexico"]), ["Mexico"]) == {"Jose CORONA", "Guillermo OCHOA"}
    tr = _run(chain[:1], ["Jose CORONA", "Guillermo OCHOA"], completed=("Guillermo OCHOA",))
    badge = grounding_badge(tr, FOOT)
    assert badge.color == "blue" and "completed from the graph" in badge.label


def test_the_reask_report_names_gained_answers_the_new_chain_does_not_support():
    """The issue's case: removing a chain triplet, the answer gains goalkeepers who are not Mexican."""
    chain = [("Jose CORONA", "nationality", "Mexico"), ("Jose CORONA", "plays_position", "Goalkeeper")]
    original = _run(chain, ["Jose CORONA"])
    removed = FOOT.find("Jose CORONA", "plays_position", "Goalkeeper")
    edited_graph = FOOT.copy(name="football (edited)")
    edited_graph.remove(removed.id)
    edited = _run([("Guillermo OCHOA", "nationality", "Mexico")], ["Guillermo OCHOA", "Iker CASILLAS"],
                  graph=edited_graph)
    effect = edit_effect(original, edited, [Edit("removed", removed.id, *removed.as_tuple)], edited_graph)
    assert effect.gained == ["Guillermo OCHOA", "Iker CASILLAS"] and effect.lost == ["Jose CORONA"]
    assert [e.triplet_id for e in effect.removed_on_chain] == [removed.id]
    assert [a.answer for a in effect.unsupported] == ["Iker CASILLAS"]
    assert effect.level == "warning" and "not supported" in effect.headline
    assert "follows the graph" not in effect.headline.replace("not evidence that the method follows", "")
    text = "\n".join(effect.details())
    assert "Answers gained (2)" in text and "it was on the original run's chain" in text


def test_the_reask_report_when_nothing_changed_or_the_change_is_supported():
    chain = [("Jose CORONA", "nationality", "Mexico")]
    original = _run(chain, ["Jose CORONA"])
    off = FOOT.find("Iker CASILLAS", "nationality", "Spain")
    same = edit_effect(original, _run(chain, ["Jose CORONA"]), [Edit("removed", off.id, *off.as_tuple)], FOOT)
    assert not same.changed and same.level == "info" and "touched no triplet" in same.headline
    on = FOOT.find(*chain[0])
    kept = edit_effect(original, _run(chain, ["Jose CORONA"]), [Edit("removed", on.id, *on.as_tuple)], FOOT)
    assert kept.level == "warning" and "did not change although" in kept.headline
    moved = edit_effect(original, _run([("Guillermo OCHOA", "nationality", "Mexico")], ["Guillermo OCHOA"]),
                        [Edit("removed", on.id, *on.as_tuple)], FOOT)
    assert moved.level == "success" and moved.gained == ["Guillermo OCHOA"] and not moved.unsupported


def test_the_fixture_dog_run_is_green_on_both_badges(graph):
    tr = F.dog_trace(graph)
    assert faithfulness_badge(tr).color == "green" and grounding_badge(tr, graph).color == "green"


def test_explore_reask_report_is_shown_as_text_on_the_page(runs_dir, graph):
    """The page shows the report (not a blanket 'follows the evidence'), its lines as text."""
    from streamlit.testing.v1 import AppTest

    from conftest import APP
    from kgqa_ui.run_store import RunStore

    store = RunStore(runs_dir)
    original = F.dog_trace(graph)
    removed = graph.find("Valley of the Dolls", "release_year", "1967")  # on the original's best chain
    edited_graph = graph.copy(name=f"{graph.name} (edited)")
    edited_graph.remove(removed.id)
    edited = F.reads_trace(graph)
    edited.answers = [a for a in edited.answers if a.text == "1968"] + [Answer(text="1999", in_graph=False)]
    ids = [store.save(original, graph).run_id, store.save(edited, edited_graph).run_id]
    at = AppTest.from_file(APP, default_timeout=120)
    at.switch_page("pages/explore.py").run()  # the first run loads the default sample (which resets any edit)
    at.session_state["edited_graph"] = edited_graph
    at.session_state["edit_log"] = [f"removed #{removed.id}: {removed.linearized()}"]
    at.session_state["edit_results"] = [{"method": "dog", "title": t, "run_id": r, "error": None, "stopped": False}
                                        for t, r in zip(("original", "edited"), ids)]
    at.session_state["edit_results_changes"] = [Edit("removed", removed.id, *removed.as_tuple).to_dict()]
    at.run()
    assert not at.exception, at.exception
    shown = " ".join(w.value for w in at.warning) + " ".join(s.value for s in at.success)
    assert shown, ([i.value for i in at.info], [c.value for c in at.caption][-5:], [e.value for e in at.error])
    assert "not supported" in shown and "follows the graph's evidence" not in shown
    text = "\n".join(t.value for t in at.text)
    assert f"Removed #{removed.id} (Valley of the Dolls -> release_year -> 1967): it was on the original run's chain." \
        in text
    assert "Answers lost (1): 1967" in text and "Answers gained (1): 1999" in text
