"""Running methods from the UI: the model loaded once per process, steps shown as they complete.

This is the only UI module that touches a model, and only through
`kgqa_core.methods.base.run_method`; rendering never does.  Every page that
starts runs (Ask, Explore's re-ask, Compare) does it through `run_controls`:
the runs go in a worker thread (`run_job.RunJob`) polled by `job_panel`, so
the page stays live, shows its progress and a run can be stopped.
"""

from __future__ import annotations

from typing import Any, Callable

import streamlit as st

from kgqa_core.methods.base import available_methods
from kgqa_core.trace.schema import Step

from . import state
from .html_utils import md_text
from .run_job import Job, JobProgress, RunJob, RunOutcome, RunSpec

__all__ = ["RunJob", "RunOutcome", "RunSpec", "collect", "get_model", "job_panel", "methods_available",
           "outcome_notice", "outcome_trace", "run_controls", "start_job", "step_line"]

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
# Every page that starts runs keeps its job under "<key>_job"; one job at a time per session.
JOB_PAGES = {"ask": "Ask", "edit": "Explore", "cmp": "Compare", "eval": "Evaluate"}


def backend_guess(model_name: str = "") -> str:
    """The backend a run will use (its rates give the ETA until the model has loaded and says)."""
    from kgqa_core.models.backends import default_backend

    from . import server_panel

    if model_name and server_panel.is_server_key(model_name):
        return "server"
    return chosen_backend() or default_backend()


def start_job(specs: list[RunSpec]) -> RunJob:
    """Start running `specs` in a worker thread; traces go to this session's runs folder."""
    backend = chosen_backend()  # read here: the worker thread cannot see the session's settings

    def load(name: str, progress: Callable[[str], None] | None = None):
        model = get_model(name, progress, backend=backend)
        if model.load_note and progress is not None:
            progress(f"Note: {model.load_note}")
        return model

    guess = backend_guess(specs[0].model_name if specs else "")
    return RunJob(specs, state.store(), load_model=load, step_line=step_line, backend=guess).start()


# Jobs by browser session id (process-wide): a reload opens a new connection with an empty session
# state, and `kgqa_ui.persist` hands it the jobs of the session it restores, so a run going on
# during F5 is still shown, stoppable, and its results collected.
_SESSION_JOBS: dict[str, dict[str, Any]] = {}
_SESSION_JOBS_MAX = 500


def register_job(key: str, job: Any) -> None:
    """Remember `job` as this session's ``<key>_job`` beyond this connection."""
    sid = st.session_state.get("session_id")
    if not sid:
        return
    if sid not in _SESSION_JOBS and len(_SESSION_JOBS) >= _SESSION_JOBS_MAX:
        for old in [k for k, jobs in _SESSION_JOBS.items() if all(j.done for j in jobs.values())][:100]:
            del _SESSION_JOBS[old]
    _SESSION_JOBS.setdefault(sid, {})[key] = job


def adopt_jobs(old_sid: str, new_sid: str) -> None:
    """Give this (new) connection the jobs of the session it restored, under its new id too."""
    jobs = _SESSION_JOBS.get(old_sid) or {}
    for key, job in jobs.items():
        st.session_state[f"{key}_job"] = job
    if jobs:
        _SESSION_JOBS[new_sid] = dict(jobs)


def make_eval_job(spec: Any) -> Job:
    """An evaluation (`eval_job.EvalSpec`) as a job of this session, not started yet (`run_controls` starts it)."""
    from .eval_job import EvalJob

    backend = chosen_backend()

    def load(name: str, progress: Callable[[str], None] | None = None):
        return get_model(name, progress, backend=backend)

    return EvalJob(spec, load, backend=backend_guess(spec.model_name))


def running_job_page() -> str | None:
    """The page whose run is going in this session (None when none is)."""
    for key, page in JOB_PAGES.items():
        job = st.session_state.get(f"{key}_job")
        if isinstance(job, Job) and not job.done:
            return page
    return None


def run_controls(
    key: str,
    label: str,
    make_specs: Callable[[], list[RunSpec]],
    on_finished: Callable[[list[dict[str, Any]]], None],
    *,
    blocked: str = "",
    help: str | None = None,
    make_job: Callable[[], Job] | None = None,
) -> None:
    """A Run button and its job's progress panel, the same on every page that starts work.

    The button (key ``<key>_run``) starts `make_specs()` in the session's worker thread
    (or ``make_job()``: the Evaluate page's evaluation) and is disabled while any job of
    this session is going (its help says where); the panel shows the job's phase, its
    time left, the step log and a Stop button (``<key>_job_stop``).  When the job has
    finished, `on_finished` gets its outcomes once (see `collect`).  ``blocked`` is why
    the button cannot run yet ("" when it can).
    """
    job: Job | None = st.session_state.get(f"{key}_job")
    if job is not None and job.done and not job.collected:
        on_finished(collect(job))
    busy_page = running_job_page()
    # the click is read before the button is drawn, so this very run starts the job and draws the button
    # disabled with the progress panel under it (a second run of the page would delay the first phase shown)
    if st.session_state.get(f"{key}_run") and not (busy_page or blocked):
        job = make_job().start() if make_job is not None else start_job(make_specs())
        st.session_state[f"{key}_job"] = job
        register_job(key, job)
        on_finished([])
        busy_page = JOB_PAGES[key]
    hint = blocked
    if busy_page == JOB_PAGES[key]:
        hint = "A run is going: wait for it, or press Stop"
    elif busy_page:
        hint = f"A run started on the {busy_page} page is going: wait for it, or stop it there"
    st.button(label, type="primary", disabled=bool(busy_page or blocked), key=f"{key}_run",
              icon=":material/play_arrow:", help=hint or help)
    if hint:
        st.caption(hint + ("." if busy_page else " to run."))
    if job is not None:
        job_panel(job, key=f"{key}_job")


def _headline(p: JobProgress) -> str:
    """One line: what runs, where it is (the method's stage, else its finished steps), the clock and the time left."""
    of = f" ({p.method_index} of {p.methods_total})" if p.methods_total > 1 else ""
    clock = f"{p.elapsed:.0f} s"
    if p.done:
        stopped = any(o.stopped for o in p.outcomes)
        failed = [o for o in p.outcomes if o.error and not o.stopped]
        word = "Stopped" if stopped else "Finished with errors" if failed else "Finished"
        return f"{word} after {clock}: " + ", ".join(
            f"{o.title or o.method} " + ("stopped" if o.stopped else "failed" if o.error else "done") for o in p.outcomes)
    if p.stop_requested:
        return f"Stopping {p.title} after its current step… ({clock})"
    if p.phase == "loading":
        where = "loading the model"
    else:
        where = "running · " + (p.stage or p.round_label or "starting")
    left = f" · {p.eta}" if p.eta else ""
    return f"{p.title}{of}: {where} · {clock}{left}"


def job_panel(job: Job, key: str) -> None:
    """The job's progress: headline, the model's current activity (with a bar when its size is known), Stop, the log.

    While the job runs the panel is a fragment that redraws itself every second; when the job
    has finished it reruns the whole page once so the page can show the results and enable Run.
    The status box is never used as a context manager while running: leaving its ``with`` block
    marks it complete, which flashed a check mark on a run still going.
    """

    @st.fragment(run_every=None if job.done else POLL_SECONDS)
    def panel() -> None:
        p = job.progress()
        if p.done and not job.collected:  # finished while polling: the page collects it on a full rerun
            st.rerun()
        state_name = "running" if not p.done else (
            "error" if any(o.error and not o.stopped for o in p.outcomes) else "complete")
        # no `with` (see above); the headline holds method names, stages and numbers only (no outside text)
        box = st.status(_headline(p), expanded=not p.done, state=state_name)
        if not p.done:
            if p.activity:
                box.caption(md_text(p.activity))
            if p.fraction is not None:
                box.progress(min(1.0, max(0.0, p.fraction)))
            if p.eta_basis:
                box.caption(md_text(("Running longer than usual. " if p.overdue else "") + "Time left: " + p.eta_basis
                                    + "."))
        lines = p.log[-LOG_LINES_SHOWN:]
        if len(p.log) > len(lines):
            box.caption(f"{len(p.log) - len(lines)} earlier lines not shown")
        if lines:
            box.text("\n".join(lines))
        if not p.done:
            st.button("Stop", key=f"{key}_stop", on_click=job.stop, disabled=p.stop_requested,
                      icon=":material/stop_circle:", help="Stop after the current step; the steps so far are saved.")

    panel()


def collect(job: Job) -> list[dict[str, Any]]:
    """A finished job's outcomes as the page keeps them; its runs are remembered for this session."""
    out = []
    for o in job.progress().outcomes:
        if o.run_id:
            state.remember_run(o.run_id)
        out.append({"method": o.method, "title": o.title or o.method, "run_id": o.run_id, "error": o.error,
                    "stopped": o.stopped})
    job.collected = True
    return out


def outcome_trace(item: dict[str, Any]):
    """One collected outcome's notice (stopped, not run, failed) and its saved trace, or None when there is none."""
    if not outcome_notice(item):
        return None
    try:
        return state.load_run(item["run_id"])
    except Exception as exc:  # a run deleted or damaged since: say so, the page goes on
        st.error(f"Could not reload run {md_text(item['run_id'])}: {md_text(exc)}")
        return None


def outcome_notice(item: dict[str, Any]) -> bool:
    """The notice for one collected outcome (stopped, not run, failed); True when it has a run to show."""
    if item.get("stopped") and not item.get("run_id"):
        st.info("Not run: the run was stopped before this one started.", icon=":material/stop_circle:")
        return False
    if item.get("stopped"):
        st.warning("Stopped by you: the steps so far are saved and can be replayed.", icon=":material/stop_circle:")
    if item.get("error") and not item.get("run_id"):
        st.error(md_text(item["error"]))
        return False
    return bool(item.get("run_id"))
