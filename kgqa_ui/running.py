"""Running methods from the UI: the model loaded once per process, steps streamed into st.status.

This is the only UI module that touches a model, and only through
`kgqa_core.methods.base.run_method`; rendering never does.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

import streamlit as st

from kgqa_core.methods.base import MethodRequest, available_methods, run_method
from kgqa_core.trace.schema import Step, Trace

from . import state


def get_model(name: str, progress: Callable[[str], None] | None = None):
    """One loaded model per name per process, shared by all sessions (the model has its own lock).

    Not an ``st.cache_resource``: ``load_model`` already keeps one model per process, and a cached
    function must not touch Streamlit elements (a cache hit replays them into a layout block that no
    longer exists, which broke every run after a process's first).  ``progress`` gets plain strings.
    """
    from kgqa_core.models import load_model

    return load_model(name, progress=progress)


@st.cache_data(show_spinner=False, ttl=30)
def methods_available() -> dict[str, str]:
    """Importable methods (re-checked every 30 s, so a method that lands shows up without a restart)."""
    return available_methods()


@dataclass
class RunOutcome:
    method: str
    trace: Trace | None
    run_id: str | None
    error: str | None


def step_line(step: Step) -> str:
    """One line per completed step for the progress panel."""
    parts = [f"**{step.index + 1}. {step.title or step.kind}**", f"`{step.kind}`"]
    if step.beam is not None:
        parts.append(f"beam {step.beam}")
    if step.choice:
        parts.append(f"→ {step.choice[:80]}")
    elif step.chosen_triplet_id is not None:
        chosen = next((c for c in step.candidates if c.triplet_id == step.chosen_triplet_id), None)
        if chosen is not None:
            parts.append(f"→ {chosen.label[:80]}")
    if step.candidates:
        parts.append(f"({len(step.candidates)} candidates)")
    if step.seconds:
        parts.append(f"{step.seconds:.1f}s")
    return " · ".join(parts).replace("<", "&lt;")


def run_with_status(
    method: str,
    graph: Any,
    question: str,
    topics: list[str],
    params: dict[str, Any],
    model_name: str,
) -> RunOutcome:
    """Run one method under an st.status panel; save the trace; never raise."""
    with st.status(f"{method}: loading model {model_name}…", expanded=True) as status:
        try:
            model = get_model(model_name, progress=lambda msg: status.write(str(msg)))
        except Exception as exc:
            status.update(label=f"{method}: could not load model {model_name}", state="error")
            return RunOutcome(method, None, None, f"Could not load model {model_name}: {exc}")
        status.update(label=f"{method}: reasoning with {model_name}…")
        count = [0]

        def on_step(step: Step) -> None:
            count[0] += 1
            status.write(step_line(step))
            status.update(label=f"{method}: step {count[0]} — {step.title or step.kind}")

        started = time.perf_counter()
        try:
            request = MethodRequest(graph=graph, question=question, model=model, topic_entities=list(topics),
                                    params=dict(params), seed=0, on_step=on_step)
            trace = run_method(method, request)
        except Exception as exc:
            status.update(label=f"{method}: failed after {time.perf_counter() - started:.1f}s", state="error")
            return RunOutcome(method, None, None, f"{method} failed: {type(exc).__name__}: {exc}")
        try:
            info = state.store().save(trace, graph)
        except OSError as exc:
            status.update(label=f"{method}: done, but the trace could not be saved", state="error")
            return RunOutcome(method, trace, None, f"The run finished but could not be saved: {exc}")
        state.remember_run(info.run_id)
        answers = ", ".join(trace.answer_texts) or "no answer"
        status.update(label=f"{method}: {answers} ({trace.seconds:.1f}s, {len(trace.steps)} steps)",
                      state="error" if trace.error else "complete", expanded=False)
        return RunOutcome(method, trace, info.run_id, trace.error or None)
