"""What every method receives and how methods are found by name.

Each method is one module with one entry point ``run(request) -> Trace``.  The
request carries the graph view, the question, the confirmed topic entities,
the loaded model and the method's parameters; ``on_step`` lets a caller (the
UI's progress panel, the CLI's verbose mode) see each step as it completes.
"""

from __future__ import annotations

import importlib
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable

from ..trace.schema import Step, Trace

if TYPE_CHECKING:  # pragma: no cover
    from ..graph.knowledge_graph import KnowledgeGraph
    from ..models.local_model import LocalModel

StepCallback = Callable[[Step], None]


@dataclass
class MethodRequest:
    """One question for one method.

    ``params`` holds method parameters (``beam_size``, ``max_steps``,
    ``hops``, ``max_prompt_triplets``, ...); each method documents its own and
    records the values it used in ``Trace.parameters``.
    """

    graph: "KnowledgeGraph"
    question: str
    model: "LocalModel"
    topic_entities: list[str] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    on_step: StepCallback | None = None

    def param(self, name: str, default: Any) -> Any:
        value = self.params.get(name)
        return default if value is None else value

    def emit(self, step: Step) -> None:
        if self.on_step is not None:
            self.on_step(step)


# name -> (module, one-line description)
METHODS: dict[str, tuple[str, str]] = {
    "dog": ("kgqa_core.methods.dog", "Decoding on Graphs: graph-constrained chains with triplet-level beam search"),
    "cot": ("kgqa_core.methods.cot", "Chain-of-thought with the DoG prompt, unconstrained (triplets checked afterwards)"),
    "direct": ("kgqa_core.methods.direct", "Direct answer with the DoG prompt, no reasoning chain"),
    "reads": ("kgqa_core.methods.reads", "READS: discriminative search / prune / answer scored by log-probabilities"),
    "rok": ("kgqa_core.methods.rok", "RoK: CoT key-entity expansion, n-hop paths, PageRank, branch filtering"),
    "lpkg": ("kgqa_core.methods.lpkg", "LPKG: in-context planning with KG patterns, plan executed on the graph"),
}


def parse_param_pairs(pairs: "list[str] | None") -> dict[str, Any]:
    """``KEY=VALUE`` strings (command-line ``--param``) to a params dict; values parse as JSON when they can."""
    import json

    params: dict[str, Any] = {}
    for pair in pairs or ():
        if "=" not in pair:
            raise ValueError(f"--param {pair!r}: expected KEY=VALUE")
        key, raw = pair.split("=", 1)
        try:
            params[key.strip()] = json.loads(raw)
        except json.JSONDecodeError:
            params[key.strip()] = raw
    return params


class UnknownMethodError(ValueError):
    pass


def available_methods() -> dict[str, str]:
    """Methods whose module is importable, with their descriptions."""
    out = {}
    for name, (module, desc) in METHODS.items():
        try:
            importlib.import_module(module)
        except ImportError:
            continue
        out[name] = desc
    return out


def get_method(name: str) -> Callable[[MethodRequest], Trace]:
    if name not in METHODS:
        raise UnknownMethodError(
            f"unknown method {name!r}; choose one of: {', '.join(METHODS)}"
        )
    module = importlib.import_module(METHODS[name][0])
    return module.run


def run_method(name: str, request: MethodRequest) -> Trace:
    """Run a method and fill the fields every trace shares."""
    from ..graph.store import is_local_graph

    if not is_local_graph(request.graph):  # a store: fetch the question's neighbourhood, run on it
        from .on_store import run_on_store

        return run_on_store(name, request, run_method)
    started = time.perf_counter()
    trace = get_method(name)(request)
    trace.method = trace.method or name
    trace.question = trace.question or request.question
    trace.graph_fingerprint = trace.graph_fingerprint or request.graph.fingerprint
    trace.graph_name = trace.graph_name or request.graph.name
    trace.model = trace.model or request.model.name
    trace.model_revision = trace.model_revision or request.model.revision
    trace.seed = request.seed if trace.seed is None else trace.seed
    if not trace.topic_entities:
        trace.topic_entities = list(request.topic_entities)
    if not trace.seconds:
        trace.seconds = time.perf_counter() - started
    if not trace.created_at:
        trace.created_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    return trace
