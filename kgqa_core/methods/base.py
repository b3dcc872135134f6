"""What every method receives, how methods are registered, and `run_method`.

A method is one module that defines ``SPEC = MethodSpec(name, run, params,
summary)``: ``params`` is a frozen dataclass of its declared parameters
(`kgqa_core.parameters`), and ``run(request, params, recorder)`` answers
the question, recording its steps and filling ``recorder.trace``.
`run_method` is the only caller: it reads the parameters, creates the
`TraceRecorder`, and turns whatever the method raises into the trace's
error, so every method fails the same way (unless the method's ``strict``
switch is on: then the exception reaches the caller).
"""

from __future__ import annotations

import dataclasses
import importlib
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from ..parameters import MethodParams, ParameterError, normalise_name, parse_params, unknown_message
from ..trace.schema import Step, Trace
from .recorder import RunStopped, StepCallback, TraceRecorder

if TYPE_CHECKING:  # pragma: no cover
    from ..graph.knowledge_graph import KnowledgeGraph
    from ..models.interface import LanguageModel
    from ..reading.vocabulary import RelationVocabulary

__all__ = [
    "METHODS", "MethodRequest", "MethodSpec", "ParameterError", "RunStopped", "Step", "StepCallback",
    "TraceRecorder", "UnknownMethodError", "applicable_params", "available_methods", "read_shared_params",
    "method_spec", "method_specs", "run_method",
]


@dataclass
class MethodRequest:
    """One question for one method.

    ``params`` holds the raw parameter values (text from the CLI or a form,
    or JSON values); `run_method` reads them by the method's declarations and
    records the values it used in ``Trace.parameters``.  ``vocabulary`` is the
    user's own words for the graph's relations (`RelationVocabulary`, from
    ``--vocabulary FILE`` or the Ask page); the question readers use it and
    record it in ``Trace.extra["vocabulary"]``.
    """

    graph: "KnowledgeGraph"
    question: str
    model: "LanguageModel"
    topic_entities: list[str] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    on_step: StepCallback | None = None
    # The caller's cancellation hook (the app's Stop button): asked after every emitted step.
    should_stop: Callable[[], bool] | None = None
    vocabulary: "RelationVocabulary | None" = None


@dataclass(frozen=True)
class MethodSpec:
    """A registered method: its name, entry point, declared parameters and one-line summary."""

    name: str
    run: Callable[[MethodRequest, Any, TraceRecorder], None]
    params: type[MethodParams]
    summary: str


# name -> module that defines SPEC (imported on first use: the methods pull in the model stack)
METHODS: dict[str, str] = {
    "dog": "kgqa_core.methods.dog",
    "cot": "kgqa_core.methods.cot",
    "direct": "kgqa_core.methods.direct",
    "reads": "kgqa_core.methods.reads",
    "rok": "kgqa_core.methods.rok",
    "lpkg": "kgqa_core.methods.lpkg",
}


class UnknownMethodError(ValueError):
    pass


def method_spec(name: str) -> MethodSpec:
    """The spec of a registered method (raises `UnknownMethodError`, or `ImportError` if it cannot load)."""
    if name not in METHODS:
        raise UnknownMethodError(f"unknown method {name!r}; choose one of: {', '.join(METHODS)}")
    return importlib.import_module(METHODS[name]).SPEC


def method_specs() -> dict[str, MethodSpec]:
    """Specs of the registered methods whose module imports, in registry order."""
    out = {}
    for name in METHODS:
        try:
            out[name] = method_spec(name)
        except ImportError:
            continue
    return out


def available_methods() -> dict[str, str]:
    """Methods whose module is importable, with their summaries."""
    return {name: spec.summary for name, spec in method_specs().items()}


def applicable_params(spec: MethodSpec, raw: Mapping[str, Any]) -> dict[str, Any]:
    """The entries of `raw` that `spec` declares (one set of values shared by several methods)."""
    names = {f.name for f in dataclasses.fields(spec.params)}  # declared parameters (not PRESETS)
    return {k: v for k, v in raw.items() if normalise_name(k) in names}


def read_shared_params(methods: Iterable[str], raw: Mapping[str, Any]) -> dict[str, Any]:
    """One set of parameters for several methods, checked and read by their declarations.

    For ``eval --methods dog,reads --beam-size 3``: each name must be declared
    by at least one of the methods, and each method must accept the values it
    declares.  Returns the values read by type (``"3"`` -> 3), under their
    declared names, so equal settings compare equal however they were typed.
    """
    specs = [method_spec(m) for m in methods]
    declared = {f.name for s in specs for f in dataclasses.fields(s.params)}
    out: dict[str, Any] = {}
    for key, value in raw.items():
        name = normalise_name(key)
        if name not in declared:
            owner = "/".join(s.name for s in specs) or "the chosen methods"
            raise ParameterError(name, unknown_message(name, owner, sorted(declared)))
        out[name] = value
    for spec in specs:
        typed = parse_params(spec, applicable_params(spec, out)).as_dict()
        out.update({k: typed[k] for k in applicable_params(spec, out)})
    return out


def run_method(method: "str | MethodSpec", request: MethodRequest) -> Trace:
    """Run a method: parameters read, steps recorded, costs measured, any failure on the trace."""
    from ..graph.store import is_local_graph

    if not is_local_graph(request.graph):  # a store: fetch the question's neighbourhood, run on it
        from .on_store import run_on_store

        return run_on_store(method if isinstance(method, str) else method.name, request, run_method)
    spec = method if isinstance(method, MethodSpec) else method_spec(method)
    graph, model = request.graph, request.model
    trace = Trace(
        method=spec.name, question=request.question,
        model=_model_attr(model, "name"), model_revision=_model_attr(model, "revision"),
        backend=_model_attr(model, "backend"),
        parameters=dict(request.params), seed=request.seed,
        graph_fingerprint=graph.fingerprint, graph_name=graph.name,
        topic_entities=list(request.topic_entities),
        created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
    )
    recorder = TraceRecorder(trace, model, request.on_step, getattr(request, "should_stop", None))
    params = None
    try:
        params = parse_params(spec, request.params)
        trace.parameters = params.as_dict()
        with recorder.listening():  # every method's phases timed the same way (Trace.costs)
            spec.run(request, params, recorder)
    except RunStopped:  # the user's Stop: not a failure; the steps so far are the partial run
        _mark_stopped(trace, len(trace.steps))
    except Exception as exc:  # every method fails the same way: the error on the trace, its steps kept
        if getattr(params, "strict", False):
            raise  # a method's `strict` switch asks for the exception itself (debugging)
        recorder.fail(exc)
    if "stopped by the user" in trace.error:  # a method that caught RunStopped itself and recorded it
        _mark_stopped(trace, len(trace.steps))
    trace = recorder.finish()
    describe = _model_attr(model, "describe", None)
    if callable(describe):  # a model server: URL, model, capabilities (never an API key)
        try:
            trace.extra.setdefault("server", describe())
        except Exception as exc:  # a broken server must not turn a recorded failure into a crash
            trace.notes.append(f"the model server could not describe itself: {type(exc).__name__}")
    return trace


def _model_attr(model: Any, name: str, default: Any = "") -> Any:
    """An attribute of the model that the trace records, or `default` when reading it fails.

    A broken backend may raise anything on attribute access; the run's failure is then recorded on
    the trace by the method's own error handling, not raised out of `run_method` while the trace is set up.
    """
    try:
        value = getattr(model, name, default)
    except Exception:
        return default
    return default if value is None or value == "" else value


def _mark_stopped(trace: Trace, n_steps: int) -> None:
    """A stopped run is not a failure: flag it, drop the `RunStopped` text a method may have caught, add a note."""
    trace.stopped = True
    if "stopped by the user" in trace.error:
        trace.error = ""
    note = f"Stopped by the user after {n_steps} step(s); the answer, if any, is from the partial run."
    if note not in trace.notes:
        trace.notes.append(note)
