"""One trace recorder for every method: steps streamed in order, costs counted one way, failures alike."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable

import pytest

from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.methods.base import METHODS, MethodRequest, MethodSpec, run_method
from kgqa_core.models.local_model import ForwardCounter
from kgqa_core.parameters import MethodParams, param
from kgqa_core.trace.schema import ModelCall, Step, Trace

GRAPH = KnowledgeGraph.from_triplets([("Heat", "directed_by", "Michael Mann"), ("Heat", "release_year", "1995")],
                                     name="heat")


class CountingModel:
    """Not a language model: a counter the recorder reads, moved by the test's method body."""

    name, revision = "counting", "r1"

    def __init__(self) -> None:
        self.counter = ForwardCounter()


@dataclass(frozen=True)
class NoParams(MethodParams):
    steps: int = param(2, "steps to record", min=0, max=10)


def _spec(body: Callable) -> MethodSpec:
    return MethodSpec("probe", body, NoParams, "a probe")


def _request(model=None, **kw) -> MethodRequest:
    return MethodRequest(graph=GRAPH, question="who directed Heat", model=model or CountingModel(),
                         topic_entities=["Heat"], **kw)


def test_steps_are_numbered_streamed_in_order_and_costs_counted_once():
    seen: list[Step] = []

    def body(request, params, rec):
        for i in range(params.steps):
            request.model.counter.forward_passes += 3
            request.model.counter.tokens_out += 2
            rec.step(Step(index=99, kind="probe.step", model_calls=[ModelCall("probe", 10 + i, 2, 3, 0.1)]))
        rec.count_call(100)  # a call no step records (a prefill)
        rec.trace.answers = []

    trace = run_method(_spec(body), _request(on_step=seen.append, params={"steps": "3"}))
    assert not trace.error
    assert [s.index for s in trace.steps] == [0, 1, 2] and seen == trace.steps
    assert trace.model_calls == 4 and trace.tokens_in == 10 + 11 + 12 + 100
    assert trace.forward_passes == 9 and trace.tokens_out == 6
    assert trace.parameters == {"steps": 3} and trace.method == "probe" and trace.model == "counting"
    assert trace.graph_name == "heat" and trace.topic_entities == ["Heat"] and trace.created_at and trace.seconds > 0


@pytest.mark.parametrize("exc, says, traceback", [
    (RuntimeError("the index broke"), "RuntimeError: the index broke (stopped at step 3)", True),
    (ValueError("no topic entity of the question is in the graph"),
     "no topic entity of the question is in the graph (stopped at step 3)", False),
])
def test_a_failure_keeps_the_steps_so_far_and_says_what_stopped_the_run(exc, says, traceback):
    def body(request, params, rec):
        rec.step(Step(index=0, kind="probe.a"))
        rec.step(Step(index=0, kind="probe.b"))
        raise exc

    trace = run_method(_spec(body), _request())
    assert trace.error == says and [s.kind for s in trace.steps] == ["probe.a", "probe.b"]
    assert ("traceback" in trace.extra) is traceback
    assert Trace.from_json(trace.to_json()) == trace


def test_a_caller_can_stop_a_run_at_its_next_step():
    @dataclass
    class StoppableRequest(MethodRequest):
        should_stop: Callable[[], bool] | None = None

    stop = threading.Event()

    def body(request, params, rec):
        for _ in range(5):
            rec.step(Step(index=0, kind="probe.step"))
            if len(rec.trace.steps) == 2:
                stop.set()  # the Stop button, pressed after step 2: step 3 (already computed) is kept

    trace = run_method(_spec(body), StoppableRequest(graph=GRAPH, question="q", model=CountingModel(),
                                                     should_stop=stop.is_set))
    # a stopped run is marked stopped, not failed (the Ask page's Stop button; tests/methods/test_stop.py)
    assert len(trace.steps) == 3 and trace.stopped and not trace.error
    assert any("Stopped by the user after 3 step(s)" in n for n in trace.notes)


class ExplodingModel:
    """A model whose every use fails, as a broken backend would."""

    name, revision = "exploding", ""

    def __init__(self) -> None:
        self.counter = ForwardCounter()
        self.lock = threading.RLock()

    def __getattr__(self, name):
        raise RuntimeError(f"the model broke at {name}")


@pytest.mark.parametrize("method", list(METHODS))
def test_every_method_turns_a_fault_into_the_trace_error(method):
    trace = run_method(method, _request(ExplodingModel(), params={"use_embedder": False} if method == "rok" else {}))
    assert trace.error.startswith("RuntimeError: the model broke at"), trace.error
    assert trace.extra["traceback"] and trace.method == method and trace.model == "exploding"
