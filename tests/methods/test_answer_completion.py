"""DoG and CoT with complete_answers on and off, end to end with the 135M model."""

from __future__ import annotations

import pytest

from kgqa_core.answers.completion import complete_from_last_triplet
from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.methods.base import MethodRequest, run_method

CAST = KnowledgeGraph.from_triplets(
    [
        ("Heat", "starred_actors", "Al Pacino"),
        ("Heat", "starred_actors", "Robert De Niro"),
        ("Heat", "starred_actors", "Val Kilmer"),
        ("Heat", "directed_by", "Michael Mann"),
        ("Heat", "release_year", "1995"),
    ],
    name="cast",
)


def _run(model, method, **params):
    req = MethodRequest(graph=CAST, question="who acted in the movie Heat?", model=model, topic_entities=["Heat"],
                        params={"max_new_tokens": 48, "max_steps": 1, **params} if method == "dog"
                        else {"max_new_tokens": 64, **params})
    return run_method(method, req)


@pytest.mark.parametrize("method", ["dog", "cot"])
def test_completion_adds_exactly_the_graphs_missing_entities_after_the_models_answers(small_model, method):
    on = _run(small_model, method)
    off = _run(small_model, method, complete_answers="false")
    assert not on.error and not off.error, (on.error, off.error)
    assert off.parameters["complete_answers"] is False and on.parameters["complete_answers"] is True
    own = [a for a in on.answers if not a.completed_from_graph]
    added = [a for a in on.answers if a.completed_from_graph]
    # the model's own answers come first (the two runs are not compared answer for answer: the second
    # reuses the first's cached prompt prefix, and the 135M model's greedy path can flip on that rounding)
    assert on.answers[: len(own)] == own
    assert not any(a.completed_from_graph for a in off.answers)
    last = on.chains[0][-1] if on.chains and on.chains[0] and on.chains[0][-1].grounded else None
    expected = complete_from_last_triplet(own, CAST.triplet(last.triplet_id), CAST, ["Heat"]) if last else None
    assert [a.text for a in added] == (expected.added if expected else [])
    assert any(n.startswith("answers completed from the graph") for n in on.notes) == bool(added)


def test_dog_answers_where_the_questions_two_entities_meet_and_the_switch_and_preset_turn_it_off(backend_model):
    """The question names an orchestra and an instrument: the chain's completed list (every member) is
    ranked by the graph's links to both, and members who play something else, added by the graph, are left out."""
    from kgqa_core.answers.meeting import NOTE_HEAD, linked_topics

    from tests.answers.orchestras import GRAPH

    topics = ["Oslo Philharmonic", "oboe"]

    def ask(**extra):
        # the answers' ranking alone: the prompt's triplets where the walks meet (meeting_context, tests/methods/
        # test_dog.py) let the model answer the members who play the oboe, and then nothing is left to rank
        # and the numbered examples: after them the model answers Bo Lind (a member who plays no oboe) first, which
        # the rule must rank below the oboists; after the bare ones it answers an oboist itself (nothing to rank;
        # tests/methods/test_dog_short_text.py)
        params = {"max_new_tokens": 48, "reader": "lexicon", "reading_sure_at": 0, "meeting_context": False,
                  "prompt_examples": "terse", **extra}
        return run_method("dog", MethodRequest(graph=GRAPH, question="who plays the oboe in the Oslo Philharmonic?",
                                               model=backend_model, topic_entities=topics, params=params))

    for _ in range(2):  # a second question in the same process answers the same way
        on = ask()
        assert not on.error, on.error
        assert on.parameters["meet_topics"] is True
        assert any(n.startswith(NOTE_HEAD) for n in on.notes), on.notes
        links = linked_topics(GRAPH, [a.entity for a in on.answers if a.entity], topics)
        counts = [len(links[a.entity]) for a in on.answers if a.entity and a.entity not in topics]
        assert counts == sorted(counts, reverse=True) and counts[0] == 2  # Ann Berg and Cy Rossi play the oboe there
        assert all(len(links[a.entity]) == 2 for a in on.answers if a.completed_from_graph)
    off = ask(meet_topics="false")
    assert off.parameters["meet_topics"] is False and not any(n.startswith(NOTE_HEAD) for n in off.notes)
    links = linked_topics(GRAPH, [a.entity for a in off.answers if a.entity], topics)
    counts = [len(links[a.entity]) for a in off.answers if a.entity and a.entity not in topics]
    assert counts != sorted(counts, reverse=True)  # without the rule a member who plays no oboe comes first
    paper = ask(preset="paper")
    assert paper.parameters["meet_topics"] is False and not any(n.startswith(NOTE_HEAD) for n in paper.notes)


def test_reads_ranks_its_answer_positions_entities_by_the_questions_two_entities(backend_model):
    """READS' answer position one hop from either entity holds every member (or every oboist); those linked to
    both are the answers, the others left out (the answer position's entities are READS' own answers)."""
    from kgqa_core.answers.meeting import NOTE_HEAD, linked_topics
    from kgqa_core.graph.knowledge_graph import KnowledgeGraph

    graph = KnowledgeGraph.from_triplets(
        [("Ann Berg", "member_of", "Oslo Philharmonic"), ("Bo Lind", "member_of", "Oslo Philharmonic"),
         ("Cy Rossi", "member_of", "Oslo Philharmonic"), ("Ann Berg", "plays", "oboe"), ("Cy Rossi", "plays", "oboe"),
         ("Bo Lind", "plays", "violin"), ("Di Sato", "plays", "oboe")], name="one orchestra")

    def ask(topics, **extra):
        return run_method("reads", MethodRequest(graph=graph, question="who plays the oboe in the Oslo Philharmonic?",
                                                 model=backend_model, topic_entities=topics,
                                                 params={"max_depth": 1, **extra}))

    for topics in (["Oslo Philharmonic", "oboe"], ["oboe", "Oslo Philharmonic"]):  # either one as READS' root
        on, off = ask(topics), ask(topics, meet_topics="false")
        assert not on.error and not off.error, (on.error, off.error)
        assert on.parameters["meet_topics"] is True and off.parameters["meet_topics"] is False
        assert any(n.startswith(NOTE_HEAD) for n in on.notes) and not any(n.startswith(NOTE_HEAD) for n in off.notes)
        assert sorted(a.text for a in on.answers) == ["Ann Berg", "Cy Rossi"]  # both play the oboe in the orchestra
        left = sorted({a.text for a in off.answers} - {"Ann Berg", "Cy Rossi"})
        assert left and f"{', '.join(a for a in (x.text for x in off.answers) if a in left)} have fewer and were " \
            "left out" in next(n for n in on.notes if n.startswith(NOTE_HEAD))
        links = linked_topics(graph, [a.text for a in off.answers], topics)
        assert all(len(links[a]) == 1 for a in left)
    assert ask(["Oslo Philharmonic", "oboe"], preset="paper").parameters["meet_topics"] is False


def test_reads_starts_from_the_question_entity_that_is_not_a_number(backend_model):
    """"the entities with elevation 4317 and the mountain of colorado": READS never expands a number, so a search
    started from 4317 retrieved nothing (an error); it starts from colorado, 4317 a constraint, and says so."""
    from kgqa_core.graph.knowledge_graph import KnowledgeGraph

    graph = KnowledgeGraph.from_triplets(
        [("colorado", "has mountain", "kit carson (mountain)"), ("colorado", "has mountain", "elbert (mountain)"),
         ("kit carson (mountain)", "elevation", "4317"), ("elbert (mountain)", "elevation", "4399"),
         ("california", "has mountain", "sill (mountain)"), ("sill (mountain)", "elevation", "4317")], name="peaks")
    for _ in range(2):  # a second question in the same process
        trace = run_method("reads", MethodRequest(
            graph=graph, question="What is both the entities with elevation 4317 and the mountain of colorado?",
            model=backend_model, topic_entities=["4317", "colorado"], params={"max_depth": 1}))
        assert not trace.error, trace.error
        assert trace.topic_entities == ["colorado", "4317"] and trace.answers
        assert any("the search starts from 'colorado', not '4317'" in n for n in trace.notes), trace.notes
