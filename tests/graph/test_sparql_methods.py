"""Every method gives the same answers and chains on a SPARQL endpoint as on the same triplets uploaded.

The store fixture is a Freebase-shaped graph with mediator (CVT) nodes; the
upload is the same data as names, collapsed, in canonical order.  Runs use
the real 135M model with small budgets.
"""

from __future__ import annotations

import pytest

from kgqa_core.graph import KnowledgeGraph
from kgqa_core.graph.sparql import SparqlGraphStore
from kgqa_core.methods.base import MethodRequest, run_method
from kgqa_core.methods.on_store import fetched_graph
from kgqa_core.reading.guidance import clear_readings
from kgqa_core.trace.schema import Trace

from .sparql_data import freebase

PARAMS = {
    "dog": {"max_new_tokens": 24, "max_steps": 2, "beam_size": 2},
    "cot": {"max_new_tokens": 24},
    "direct": {"max_new_tokens": 16},
    "reads": {"max_search_steps": 2},
    "rok": {"cot_max_tokens": 16, "filter_max_tokens": 12, "answer_max_tokens": 12},
    "lpkg": {"max_new_tokens": 40, "patterns": "1p,2p"},
}
QUESTION = "Which actor starred in The Matrix?"


def behaviour(trace: Trace) -> dict:
    """What a user compares between two runs: answers, chains, steps, the prompt, faithfulness."""
    return {
        "error": trace.error,
        "answers": [(a.text, a.entity, a.in_graph) for a in trace.answers],
        "chains": [[(c.head, c.relation, c.tail, c.triplet_id, c.grounded) for c in ch] for ch in trace.chains],
        "steps": [(s.kind, s.choice, [(c.label, c.triplet, c.kept) for c in s.candidates]) for s in trace.steps],
        "prompt": trace.extra.get("prompt"),
        "context": trace.extra.get("context_triplet_ids"),
        "faithfulness": (trace.faithfulness.checked, trace.faithfulness.ill_triplets),
        "fingerprint": trace.graph_fingerprint,
        "topics": trace.topic_entities,
        "model_calls": trace.model_calls,
    }


@pytest.fixture(scope="module")
def uploaded():
    return KnowledgeGraph.from_triplets(freebase()[1], name="films (uploaded)")


@pytest.mark.parametrize("method", list(PARAMS))
def test_same_answers_and_chains_on_the_endpoint_as_uploaded(method, small_model, uploaded, oxigraph_endpoints):
    store = SparqlGraphStore(oxigraph_endpoints["freebase"], "freebase", hops=3)
    runs = []
    for graph in (uploaded, store):
        small_model.clear_prefix_cache()  # a reused prefix changes logits in the last digits: start both cold
        clear_readings()  # the same graph and question: the second run would reuse the first's reading
        request = MethodRequest(graph=graph, question=QUESTION, model=small_model, topic_entities=["The Matrix"],
                                params=dict(PARAMS[method]))
        runs.append(run_method(method, request))
    on_upload, on_store = runs
    assert not on_upload.error, on_upload.error
    assert behaviour(on_store) == behaviour(on_upload)
    assert on_upload.graph_queries == 0 and on_store.graph_queries > 0 and on_store.graph_seconds > 0
    info = on_store.extra["graph_store"]
    assert info["endpoint"] == store.endpoint and info["dialect"] == "freebase" and info["truncated"] is False
    assert any("fetched the 3-hop neighbourhood of The Matrix" in n for n in on_store.notes)
    # the trace carries the fetched subgraph: a replay needs no endpoint
    again = Trace.from_json(on_store.to_json())
    snapshot = fetched_graph(again)
    assert snapshot is not None and snapshot.fingerprint == uploaded.fingerprint
    assert again.graph_queries == on_store.graph_queries


def test_topic_linked_from_the_question_in_the_store(small_model, uploaded, oxigraph_endpoints):
    store = SparqlGraphStore(oxigraph_endpoints["freebase"], "freebase")
    request = MethodRequest(graph=store, question="Who directed [The Matrix]?", model=small_model,
                            params=dict(PARAMS["direct"]))
    trace = run_method("direct", request)
    assert trace.topic_entities == ["The Matrix"] and not trace.error
    assert any("linked 'The Matrix'" in n for n in trace.notes)


def test_store_errors_end_the_run_with_a_message(small_model):
    from kgqa_core.graph.sparql.local_server import free_port

    store = SparqlGraphStore(f"http://127.0.0.1:{free_port()}/query", "freebase", timeout=2)
    trace = run_method("dog", MethodRequest(graph=store, question=QUESTION, model=small_model,
                                            topic_entities=["The Matrix"], params=dict(PARAMS["dog"])))
    assert trace.error.startswith("graph store: cannot reach SPARQL endpoint")
    assert not trace.answers and trace.graph_queries == 1
