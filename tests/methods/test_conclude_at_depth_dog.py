"""DoG end to end with conclude_at_depth: a sure one-hop reading, a chain that answers where its path completes it.

The graph gives Virginia one relation, so the paths reader has one walk to offer and is sure of it (no word list,
no stand-in reader): the 135M model's chain opens a triplet of "has city" and, with the switch on, writes its answer
line right after it; the graph completes the list.  Off (and in the paper preset) the chain goes on as before.
"""

from __future__ import annotations

from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.methods.base import MethodRequest, run_method
from kgqa_core.reading.guidance import clear_readings

CITIES = ["richmond", "norfolk", "chesapeake", "arlington", "roanoke"]
GRAPH = KnowledgeGraph.from_triplets([("virginia", "has city", c) for c in CITIES] +
                                     [("texas", "has city", c) for c in ("austin", "houston", "dallas")],
                                     name="states")


def _ask(model, question, topic, **params):
    return run_method("dog", MethodRequest(graph=GRAPH, question=question, model=model, topic_entities=[topic],
                                           params={"max_new_tokens": 96, **params}))


def _depth_steps(trace):
    return [s for s in trace.steps if s.kind == "dog.answer" and s.extra.get("stop") == "depth"]


def test_a_chain_that_walked_the_sure_reading_answers_there_and_the_graph_completes_the_list(backend_model):
    clear_readings()
    for question, topic, cities in [("give me the cities in virginia", "virginia", CITIES),
                                    ("which cities are in texas", "texas", ["austin", "houston", "dallas"])]:
        on = _ask(backend_model, question, topic)
        off = _ask(backend_model, question, topic, conclude_at_depth=False)
        assert not on.error and not off.error, (on.error, off.error)
        assert on.extra["reading"]["confidence"] > 0.99 and on.extra["reading"]["order"] == ["has city"]
        assert on.parameters["conclude_at_depth"] is True and off.parameters["conclude_at_depth"] is False
        assert not _depth_steps(off)
        assert on.chains and len(on.chains[0]) == 1, on.raw_output  # one triplet of the hop, then the answer line
        (step,) = _depth_steps(on)
        assert "conclude_at_depth" in step.note and "has city" in step.note
        assert any("conclude_at_depth" in n for n in on.notes)
        assert on.extra.get("concluded_at_depth") == 1
        assert {a.entity for a in on.answers} >= set(cities)  # the graph completes what the chain did not list
        # the line's one item is a city the path reached, chosen under their names' trie, and the line ends there
        assert on.raw_output.split("Therefore, the answer is")[-1].removeprefix(" * ") in cities, on.raw_output
        assert "their names' trie" in step.note
        # the choice is shown as a triplet's is: the names the model could start with, and their probabilities
        assert step.token_view and max(p.n_allowed for p in step.token_view) > 1, step.token_view
        assert on.tokens_out <= off.tokens_out


def test_the_paper_preset_turns_it_off(small_model):
    clear_readings()
    trace = _ask(small_model, "give me the cities in virginia", "virginia", preset="paper")
    assert trace.parameters["conclude_at_depth"] is False and not _depth_steps(trace)


def test_answer_among_reached_off_lets_the_model_write_the_item_freely(small_model):
    clear_readings()
    trace = _ask(small_model, "give me the cities in virginia", "virginia", answer_among_reached=False)
    assert not trace.error and trace.parameters["answer_among_reached"] is False
    (step,) = _depth_steps(trace)
    assert "conclude_at_depth" in step.note and "their names' trie" not in step.note
    assert {a.entity for a in trace.answers} >= set(CITIES)
