"""Running methods from the UI: the model loaded once per process, steps shown as they complete.

This is the only UI module that touches a model, and only through
`kgqa_core.methods.base.run_method`; rendering never does.  The Ask page runs
in a worker thread (`run_job.RunJob`) polled by `job_panel`, so the page
stays live and a run can be stopped; `run_with_status` is the simple
blocking form for pages that run inside the script.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import streamlit as st

from kgqa_core.methods.base import MethodRequest, available_methods, run_method
from kgqa_core.trace.schema import Step

from . import state
from .run_job import JobProgress, RunJob, RunOutcome, RunSpec

__all__ = ["RunJob", "RunOutcome", "RunSpec", "get_model", "job_panel", "methods_available",
           "run_with_status", "start_job", "step_line"]

POLL_SECONDS = 1.0
LOG_LINES_SHOWN = 60


def get_model(name: str, progress: Callable[[str], None] | None = None, backend: str | None = None):
    """One loaded model per name and backend per process, shared by all sessions (the model has its own lock).

    Not an ``st.cache_resource``: ``load_model`` already keeps one model per process, and a cached
    function must not touch Streamlit elements (a cache hit replays them into a layout block that no
    longer exists, which broke every run after a process's first).  ``progress`` gets plain strings.
    """
    from kgqa_core.models import load_model

    from . import server_panel

    if server_panel.is_server_key(name):  # the "Model server" choice of the settings
        return server_panel.connect(name)
    return load_model(name, progress=progress, backend=backend)


def chosen_backend() -> str | None:
    """The backend picked in the sidebar's settings (None: the default)."""
    value = st.session_state.get("set_backend")
    return value if value in ("llama.cpp", "transformers") else None


@st.cache_data(show_spinner=False, ttl=30)
def methods_available() -> dict[str, str]:
    """Importable methods (re-checked every 30 s, so a method that lands shows up without a restart)."""
    return available_methods()


def step_line(step: Step) -> str:
    """One plain-text line per completed step for the progress log (shown as text, never as markup)."""
    parts = [f"{step.index + 1}. {step.title or step.kind}"]
    if step.choice and step.choice not in (step.title or ""):
        parts.append(f"→ {step.choice[:80]}")
    if step.candidates:
        n = len(step.candidates)
        parts.append(f"{n} candidate{'' if n == 1 else 's'}")
    if step.seconds:
        parts.append(f"{step.seconds:.1f}s")
    return " · ".join(parts)


# ------------------------------------------------------------------ worker-thread runs
def start_job(specs: list[RunSpec]) -> RunJob:
    """Start running `specs` in a worker thread; traces go to this session's runs folder."""
    backend = chosen_backend()  # read here: the worker thread cannot see the session's settings

    def load(name: str, progress: Callable[[str], None] | None = None):
        model = get_model(name, progress, backend=backend)
        if model.load_note and progress is not None:
            progress(f"Note: {model.load_note}")
        return model

    return RunJob(specs, state.store(), load_model=load, step_line=step_line).start()


def _headline(p: JobProgress) -> str:
    of = f" ({p.method_index} of {p.methods_total})" if p.methods_total > 1 else ""
    clock = f"{p.elapsed:.0f} s"
    if p.done:
        stopped = any(o.stopped for o in p.outcomes)
        failed = [o for o in p.outcomes if o.error and not o.stopped]
        word = "Stopped" if stopped else "Finished with errors" if failed else "Finished"
        return f"{word} after {clock}: " + ", ".join(
            f"{o.method} " + ("stopped" if o.stopped else "failed" if o.error else "done") for o in p.outcomes)
    if p.stop_requested:
        return f"Stopping {p.method} after its current step… ({clock})"
    if p.phase == "loading":
        return f"{p.method}{of}: loading the model… ({clock})"
    where = f" · {p.round_label}" if p.round_label else ""
    return f"{p.method}{of}: running{where} · {p.steps} steps recorded · {clock}"


def job_panel(job: RunJob, key: str) -> None:
    """The job's progress: headline, elapsed time, the step log open, and a Stop button.

    While the job runs the panel is a fragment that redraws itself every second; when the job
    has finished it reruns the whole page once so the page can show the results and enable Run.
    """

    @st.fragment(run_every=None if job.done else POLL_SECONDS)
    def panel() -> None:
        p = job.progress()
        if p.done and not job.collected:  # finished while polling: the page collects it on a full rerun
            st.rerun()
        state_name = "running" if not p.done else (
            "error" if any(o.error and not o.stopped for o in p.outcomes) else "complete")
        with st.status(_headline(p), expanded=not p.done, state=state_name):
            lines = p.log[-LOG_LINES_SHOWN:]
            if len(p.log) > len(lines):
                st.caption(f"{len(p.log) - len(lines)} earlier lines not shown")
            if lines:
                st.text("\n".join(lines))
        if not p.done:
            st.button("Stop", key=f"{key}_stop", on_click=job.stop, disabled=p.stop_requested,
                      icon=":material/stop_circle:", help="Stop after the current step; the steps so far are saved.")

    panel()


def collect(job: RunJob) -> list[dict[str, Any]]:
    """A finished job's outcomes as the page keeps them; its runs are remembered for this session."""
    out = []
    for o in job.progress().outcomes:
        if o.run_id:
            state.remember_run(o.run_id)
        out.append({"method": o.method, "run_id": o.run_id, "error": o.error, "stopped": o.stopped})
    job.collected = True
    return out


# ------------------------------------------------------------------ blocking runs
def run_with_status(
    method: str,
    graph: Any,
    question: str,
    topics: list[str],
    params: dict[str, Any],
    model_name: str,
) -> RunOutcome:
    """Run one method inside the script under an st.status panel; save the trace; never raise."""
    with st.status(f"{method}: loading model {model_name}…", expanded=True) as status:
        try:
            model = get_model(model_name, progress=lambda msg: status.text(str(msg)), backend=chosen_backend())
            if model.load_note:
                status.text(f"Note: {model.load_note}")
        except Exception as exc:
            status.update(label=f"{method}: could not load model {model_name}", state="error")
            return RunOutcome(method, None, None, f"Could not load model {model_name}: {exc}")
        status.update(label=f"{method}: reasoning with {model_name}…")
        count = [0]

        def on_step(step: Step) -> None:
            count[0] += 1
            status.text(step_line(step))
            status.update(label=f"{method}: step {count[0]}")

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
        status.update(label=f"{method}: finished in {trace.seconds:.1f}s, {len(trace.steps)} steps",
                      state="error" if trace.error else "complete", expanded=False)
        return RunOutcome(method, trace, info.run_id, trace.error or None)
