"""READS offers None only once a path is as deep as the hops the question names (auto_search_steps)."""

from __future__ import annotations

from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.methods import reads
from kgqa_core.methods.base import MethodRequest
from kgqa_core.reads.scoring import ScriptedChooser

from test_reads import NoModel, Script, films, run_scripted

Q2 = "who directed the films starred by Kate Winslet"  # names 'directed' and 'starred': two hops


def test_a_two_relation_question_is_not_offered_none_before_its_second_expansion():
    # the first expansion is the only option (no model call); the second is asked without None
    trace, script = run_scripted(films(), Q2, "Kate Winslet", "entity_1 + directed_by", "None")
    search_pools = [opts for kind, opts in script.pools if kind == "search"]
    assert "None" not in search_pools[0] and "None" in search_pools[1]
    assert any("min_search_steps 2 from the question" in n for n in trace.notes)
    assert [a.entity for a in trace.answers] == ["James Cameron"]


def test_the_switch_turns_it_off_and_bad_values_are_refused():
    _, script = run_scripted(films(), Q2, "Kate Winslet", "None", auto_search_steps="false")
    assert "None" in [opts for kind, opts in script.pools if kind == "search"][0]
    request = MethodRequest(graph=films(), question=Q2, model=NoModel(), topic_entities=["Kate Winslet"],
                            params={"auto_search_steps": "two"})
    trace = reads.run(request, chooser=ScriptedChooser(Script()))
    assert "auto_search_steps" in trace.error


def mendoza() -> KnowledgeGraph:
    return KnowledgeGraph.from_triplets([
        ("Kinatay", "directed_by", "Brillante Mendoza"), ("Kinatay", "starred_actors", "Coco Martin"),
        ("Kinatay", "release_year", "2009"), ("Serbis", "directed_by", "Brillante Mendoza"),
        ("Serbis", "starred_actors", "Gina Pareno"), ("Lola", "directed_by", "Brillante Mendoza"),
        ("Lola", "starred_actors", "Anita Linda"),
    ])


Q3 = "the films directed by the director of Kinatay starred who"  # three hops


def test_none_waits_for_a_path_as_deep_as_the_question_and_the_last_decisions_go_deeper():
    # the chooser spends two decisions on relations out of the root (the failure seen on whole-KB 3-hop
    # questions); with two decisions left for two more hops only the deepest nodes may be expanded, and
    # those pools hold one option each here, so no chooser call is made for them
    trace, script = run_scripted(
        mendoza(), Q3, "Kinatay", "Kinatay + starred_actors", "Kinatay + directed_by",
        max_search_steps="4")
    pools = [opts for kind, opts in script.pools if kind == "search"]
    assert len(pools) == 2 and all("None" not in p for p in pools)  # no path three deep yet
    assert "Kinatay + directed_by" in pools[1]  # breadth is still allowed while there is room
    searches = [s for s in trace.steps if s.kind == "reads.search"]
    assert [s.title for s in searches] == [
        "retrieve Kinatay + starred_actors -> entity_1", "retrieve Kinatay + directed_by -> entity_2",
        "retrieve entity_2 + directed_by (reverse) -> entity_3", "retrieve entity_3 + starred_actors -> entity_4"]
    assert "2 search decision(s) left for 2 more hop(s): only expansions of the deepest node(s) offered (1 of 2)" \
        in searches[2].note
    assert {a.entity for a in trace.answers} == {"Gina Pareno", "Anita Linda"}
    assert trace.extra["search_stopped_by"] == "max_search_steps"


def test_none_is_offered_once_the_path_is_deep_enough():
    _, script = run_scripted(
        mendoza(), Q3, "Kinatay", "Kinatay + directed_by", "entity_1 + directed_by (reverse)",
        "entity_2 + starred_actors", "None")
    pools = [opts for kind, opts in script.pools if kind == "search"]
    assert ["None" in p for p in pools] == [False, False, False, True]


def test_answer_positions_are_as_deep_as_the_question_names():
    # the search reached three hops, so the director one hop out (entity_2) is the way there, not an answer
    trace, script = run_scripted(
        mendoza(), Q3, "Kinatay", "Kinatay + starred_actors", "Kinatay + directed_by",
        max_search_steps="4")
    assert [kind for kind, _ in script.pools if kind == "answer"] == []  # one position left: no call
    step = next(s for s in trace.steps if s.kind == "reads.answer")
    assert "answer positions at depth >= 3 offered (the question names about 3 hop(s)): 1 of 4" in step.note
    assert {a.entity for a in trace.answers} == {"Gina Pareno", "Anita Linda"}


def test_a_shallow_search_still_answers_from_what_it_reached():
    # with auto_search_steps off, the estimate is not used and every node is an answer position
    trace, script = run_scripted(
        mendoza(), Q3, "Kinatay", "Kinatay + directed_by", "None", auto_search_steps="false")
    assert [a.entity for a in trace.answers] == ["Brillante Mendoza"]
    assert "answer positions" not in next(s for s in trace.steps if s.kind == "reads.answer").note


def banquet() -> KnowledgeGraph:
    return KnowledgeGraph.from_triplets([
        ("The Banquet", "written_by", "Qiu Gangjian"), ("The Banquet", "has_genre", "Drama"),
        ("The Banquet", "directed_by", "Feng Xiaogang"), ("The Banquet", "has_tags", "ziyi zhang"),
        ("Farewell My Concubine", "written_by", "Qiu Gangjian"), ("Farewell My Concubine", "has_genre", "Romance"),
        ("Farewell My Concubine", "written_by", "Lilian Lee"), ("Rouge", "written_by", "Lilian Lee"),
    ])


Q_TYPES = "what types are the movies written by the screenwriter of The Banquet"  # has_genre once, written_by twice


def test_question_relations_offer_each_named_relation_as_often_as_the_question_names_it():
    # the failure seen on whole-KB 3-hop questions: after written_by and written_by (reverse) the chooser
    # took written_by a third time, back toward where it came from; only has_genre may follow now
    steps = ("The Banquet + written_by", "entity_1 + written_by (reverse)", "entity_2 + has_genre")
    trace, script = run_scripted(banquet(), Q_TYPES, "The Banquet", *steps, "None", question_relations="true",
                                 hop_order="false")
    pools = [opts for kind, opts in script.pools if kind == "search"]
    assert set(pools[0]) == {"The Banquet + written_by", "The Banquet + has_genre"}  # no tags, no director
    assert "entity_2 + written_by" not in pools[2] and "entity_2 + has_genre" in pools[2]
    searches = [s for s in trace.steps if s.kind == "reads.search"]
    assert ("expansions along the relations the question names (has_genre x1, written_by x2): 2 of 4 offered"
            in searches[0].note)
    assert [a.entity for a in trace.answers] == ["Romance"]
    # off (the paper's pools): every relation of the film, and written_by a third time
    _, off = run_scripted(banquet(), Q_TYPES, "The Banquet", *steps, "None")
    off_pools = [opts for kind, opts in off.pools if kind == "search"]
    assert "The Banquet + has_tags" in off_pools[0] and "entity_2 + written_by" in off_pools[2]


def test_question_relations_stop_the_search_when_nothing_named_is_left_at_the_questions_depth():
    # "who acted in the movie The Big House" (MetaQA dev 1-hop): with starred_actors walked once, the chooser
    # went on to the actors' other films and answered with those
    trace, script = run_scripted(films(), "who acted in Titanic", "Titanic", question_relations="true")
    assert not [opts for kind, opts in script.pools if kind == "search"]  # one option, then nothing: no call
    searches = [s for s in trace.steps if s.kind == "reads.search"]
    assert [s.title for s in searches] == ["retrieve Titanic + starred_actors -> entity_1"]
    assert trace.extra["search_stopped_by"] == "nothing the question names left"
    assert any("search stopped: a path is as deep as the question names" in n for n in trace.notes)
    assert sorted(a.entity for a in trace.answers) == ["Kate Winslet", "Leonardo DiCaprio"]


def test_hop_order_offers_each_hop_only_the_relation_the_wording_puts_there():
    # "the movies written by the screenwriter of The Banquet": its writer first, his films, then their genres;
    # the film's own genre is never offered, and each pool holds one option, so the chooser is not asked
    trace, script = run_scripted(banquet(), Q_TYPES, "The Banquet", question_relations="true")
    assert not [opts for kind, opts in script.pools if kind == "search"]
    searches = [s for s in trace.steps if s.kind == "reads.search"]
    assert [s.title for s in searches][:3] == [
        "retrieve The Banquet + written_by -> entity_1", "retrieve entity_1 + written_by (reverse) -> entity_2",
        "retrieve entity_2 + has_genre -> entity_3"]
    assert "in the question's order written_by -> written_by -> has_genre" in searches[0].note
    assert [a.entity for a in trace.answers] == ["Romance"]
