"""Stopping a run from outside (the app's Stop button): the partial trace is kept and marked stopped."""

from __future__ import annotations

import pytest

from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.methods.base import MethodRequest, run_method
from kgqa_core.trace.schema import Trace

HEAT = KnowledgeGraph.from_triplets(
    [("Heat", "directed_by", "Michael Mann"), ("Heat", "release_year", "1995"),
     ("Collateral", "directed_by", "Michael Mann"), ("Collateral", "release_year", "2004")],
    name="heat",
)


def _stop_after(n: int):
    """A should_stop hook that says yes once `n` steps have been streamed; it also counts the asks."""
    seen: list[int] = []
    asks = [0]

    def should_stop() -> bool:
        asks[0] += 1
        return len(seen) >= n

    return seen, should_stop, asks


# READS catches every exception inside the method; DoG lets it propagate: both must end stopped.
@pytest.mark.parametrize("method", ["dog", "reads"])
def test_a_stopped_run_keeps_its_steps_and_is_marked_stopped(small_model, method):
    seen, should_stop, asks = _stop_after(1)
    request = MethodRequest(graph=HEAT, question="who directed the movie Heat?", model=small_model,
                            topic_entities=["Heat"],
                            # each method refuses parameters it does not declare (kgqa_core.parameters)
                            params={"max_new_tokens": 48, "max_steps": 3} if method == "dog" else {},
                            on_step=seen.append, should_stop=should_stop)
    trace = run_method(method, request)
    assert trace.stopped
    assert not trace.error, trace.error
    assert len(trace.steps) == 1 == len(seen) and asks[0] == 1, "stopped right after the first step"
    assert trace.method == method and trace.question and trace.model == small_model.name
    assert any("Stopped by the user after 1 step" in n for n in trace.notes)
    again = Trace.from_json(trace.to_json())
    assert again.stopped and len(again.steps) == 1


def test_a_run_nobody_stops_is_not_marked(small_model):
    seen, should_stop, asks = _stop_after(10_000)
    request = MethodRequest(graph=HEAT, question="who directed the movie Heat?", model=small_model,
                            topic_entities=["Heat"], params={"max_new_tokens": 32, "max_steps": 1},
                            on_step=seen.append, should_stop=should_stop)
    trace = run_method("dog", request)
    assert not trace.stopped and asks[0] == len(seen) == len(trace.steps) > 0
    assert not any("Stopped" in n for n in trace.notes)


def test_an_old_trace_without_the_field_reads_as_not_stopped():
    data = Trace(method="dog", question="q").to_dict()
    data.pop("stopped")
    assert Trace.from_dict(data).stopped is False
