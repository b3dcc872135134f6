"""Every method on a graph with 5,000-neighbour hubs: bounded model calls, bounded trie, caps in the trace."""

from __future__ import annotations

import pytest

from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.methods.base import MethodRequest, run_method

HUB = 5000


@pytest.fixture(scope="module")
def hub_graph() -> KnowledgeGraph:
    """Film 0 sits on three hubs (a genre, a year, an actor) of 5,000 films each."""
    trips = []
    for i in range(HUB):
        film = f"Film {i}"
        trips += [(film, "has_genre", "Drama"), (film, "release_year", "1995"), (film, "starred_actors", "Hub Actor")]
    trips += [("Film 0", "directed_by", "Ann Lee"), ("Film 0", "has_tags", "noir"), ("Film 7", "directed_by", "Ann Lee"),
              ("Film 7", "has_tags", "heist")]
    return KnowledgeGraph.from_triplets(trips, name="hubs")


SMALL = {
    "dog": {"max_new_tokens": 40, "max_prompt_triplets": 40},
    "cot": {"max_new_tokens": 40, "max_prompt_triplets": 40},
    "direct": {"max_new_tokens": 16, "max_prompt_triplets": 40},
    # the paper's pools: with question_relations the named relations leave one option per decision here,
    # and READS answers without a model call (tested in test_reads_min_steps.py)
    "reads": {"max_search_steps": 2, "max_prune_steps": 1, "permutations": 1, "question_relations": "false"},
    "rok": {"use_embedder": "false", "cot_max_tokens": 24, "filter_max_tokens": 16, "answer_max_tokens": 16},
    "lpkg": {"max_new_tokens": 24},
}
# the question's reading: the quick look, the listed choice in two orders when it is unsure and then the question
# read back from its likeliest walks (none when an earlier run read it)
READING = 4
MAX_CALLS = {"dog": 1 + READING, "cot": 1, "direct": 1, "reads": 8 + READING, "rok": 3 + READING, "lpkg": 12}


@pytest.mark.parametrize("method", sorted(SMALL))
def test_method_is_bounded_on_hubs_and_notes_its_caps(small_model, hub_graph, method):
    req = MethodRequest(graph=hub_graph, question="which movies did the director of Film 0 also direct?",
                        model=small_model, topic_entities=["Film 0"], params=SMALL[method])
    trace = run_method(method, req)
    assert not trace.error, trace.error
    assert 1 <= trace.model_calls <= MAX_CALLS[method]
    text = " ".join(trace.notes + [s.note for s in trace.steps])
    if method in ("dog", "cot", "direct"):
        # the prompt's candidate pool read at most 200 triplets of each hub, and says so
        assert "hub entities cut to 200 triplets each" in text and "of its 5000 triplets" in text
        assert len(trace.extra["context_triplet_ids"]) <= 40
    if method == "dog":
        nodes = [s.extra["trie_nodes"] for s in trace.steps if s.kind == "dog.triplet" and "trie_nodes" in s.extra]
        # the trie covers G_q (it grows over the whole graph, each hub cut to 200 triplets), both readings:
        # bounded by the cuts, not by the 5,000-triplet hubs
        assert nodes and max(nodes) < 8000
        # the step budget is two per hop of the question's reading (one hop more when the reading is as long as
        # the reader plans: open-ended), never under 4, and a raise is noted
        reading = trace.extra["reading"]
        budget = 2 * (reading["hops"] + int(reading.get("open_ended", False)))
        raised = [n for n in trace.notes if n.startswith("max_steps ")]
        assert bool(raised) == (budget > 4) and all(n.startswith(f"max_steps {budget} ") for n in raised)
    if method == "reads":
        assert any(len(s.subgraph_after) <= 1000 + 10 for s in trace.steps)
    if method == "rok":
        assert "path cap hit" in text or trace.parameters["hops"] == 2
    if method == "lpkg":
        searches = [s for s in trace.steps if s.kind == "lpkg.search"]
        assert searches and all(len(s.subgraph_after) <= 60 * 20 for s in searches)
