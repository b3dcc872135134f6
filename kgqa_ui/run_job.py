"""Work in a worker thread owned by one browser session: method runs (Ask, Compare, Explore) and evaluations.

Why a thread: Streamlit reruns the page on every click, so a run made inside
the script would block the Stop button and freeze the progress panel.  The
page starts a job, keeps it in its session state and polls `progress()` (a
fragment that reruns every second); a job never touches Streamlit, so it can
outlive a page switch, a reload or a closed tab, and its traces are saved
either way.  Stop sets an event that the method checks after every step
(`MethodRequest.should_stop`); the partial trace is saved, marked stopped.

While it works a job listens to the run's phases (`kgqa_core.progress`): the
method's stage ("triplet step 2 of at most 3") and the model's activity
(reading a prompt of N tokens, 45%), and says the time left from the rates
measured on this machine (`kgqa_core.rates`, `kgqa_ui.eta`).  Every finished
activity and run is measured into those rates, so the next ETA is better.
`Job` holds what every job shares; `RunJob` runs method specs;
`kgqa_ui.eval_job.EvalJob` runs an evaluation.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from kgqa_core import progress
from kgqa_core.methods.base import MethodRequest, run_method
from kgqa_core.redact import mask_url_credentials
from kgqa_core.rates import Estimate, RateBook, RateListener, graph_size, shared_book
from kgqa_core.trace.schema import Step, Trace

from . import eta
from .run_store import RunStore


@dataclass(frozen=True)
class RunSpec:
    """One method to run on one question; ``label`` names the run in the progress panel when the
    method alone does not (Explore runs one method on the original and on the edited graph)."""

    method: str
    graph: Any
    question: str
    topics: tuple[str, ...]
    params: dict[str, Any]
    model_name: str
    label: str = ""
    gold: tuple[str, ...] = ()  # the asker's expected answers, saved in the trace (`Trace.gold_answers`)
    vocabulary: Any = None  # the user's RelationVocabulary for the graph (the session's), or None

    @property
    def title(self) -> str:
        return f"{self.method} on the {self.label}" if self.label else self.method


@dataclass
class RunOutcome:
    """What became of one method's run: its saved id, or why there is none."""

    method: str
    trace: Trace | None
    run_id: str | None
    error: str | None
    stopped: bool = False
    title: str = ""  # the spec's title


@dataclass(frozen=True)
class JobProgress:
    """A consistent snapshot of a job for the progress panel."""

    phase: str                # "loading", "running", "saving", "done"
    title: str                # the run going now (or the last one): its method, and label if any
    method_index: int         # 1-based, of `methods_total`
    methods_total: int
    steps: int                # trace steps recorded by the current method
    round_label: str          # e.g. "triplet step 2 of at most 3", "" when unknown
    elapsed: float
    log: tuple[str, ...]
    outcomes: tuple[RunOutcome, ...]
    stop_requested: bool
    done: bool
    stage: str = ""           # the method's own phase, reported as it goes ("PageRank over the paths")
    activity: str = ""        # what the model does now ("reading a prompt of 1,834 tokens · 45%")
    fraction: float | None = None  # of the current activity, when its size is known
    eta: str = ""             # "about 25 s left", or why it is not known
    eta_basis: str = ""       # what the ETA rests on (a tooltip)
    overdue: bool = False     # running longer than the usual time
    eta_seconds: float | None = None  # the time left behind ``eta`` (None when not known)


def progress_round(method: str, params: dict[str, Any], steps: list[Step]) -> str:
    """Where a method is in its own terms from its finished steps, with the total when the parameters fix it."""
    # the question's reading (a ``reading.plan`` step) comes before the method's own steps and counts in none
    kinds = [s.kind for s in steps if not s.kind.startswith("reading.")]
    if method == "dog":
        if kinds and kinds[-1] == "dog.answer":
            return "answering"
        total = _int(params.get("max_steps"))
        current = kinds.count("dog.beam") + 1
        if total:
            return f"triplet step {min(current, total)} of at most {total}"
        return f"triplet step {current}"
    if method == "rok":
        stages = ["rok.cot", "rok.link", "rok.paths", "rok.pagerank", "rok.branches", "rok.answer"]
        done = len({k for k in kinds if k in stages})
        return f"stage {min(done + 1, len(stages))} of {len(stages)}"
    if method == "reads":
        return f"{kinds.count('reads.search')} search step(s) so far" if kinds else "starting the search"
    return ""


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def resolved_params(method: str, raw: dict[str, Any]) -> dict[str, Any]:
    """A method's parameters as its trace records them (declared defaults filled in): what rates are keyed by."""
    from kgqa_core.methods.base import method_spec
    from kgqa_core.parameters import parse_params

    try:
        return parse_params(method_spec(method), raw).as_dict()
    except Exception:  # an unknown method or a bad value: the run itself reports it
        return dict(raw)


class Job:
    """What every worker-thread job shares: log, stop, phase listening, ETA, and the thread itself.

    Subclasses implement `_work` (in the thread) and `_where` / `_time_left` (for the snapshot).
    """

    def __init__(self, rates: RateBook | None = None) -> None:
        self.rates = rates if rates is not None else shared_book()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._log: list[str] = []
        self._outcomes: list[RunOutcome] = []
        self._steps: list[Step] = []
        self._phase = "loading"
        self._stage = ""
        self._act: progress.Activity | None = None
        self._rate_key: tuple[str, str] = ("", "")  # (model, backend) whose rates the current activity uses
        self._first = eta.FirstPrompt()  # the current run's first prompt read (the ETA splits the run there)
        self._first_started = 0.0
        self.started = time.monotonic()
        self._run_started = self.started
        self.finished: float | None = None
        self.first_phase_at: float | None = None  # seconds after the start when a phase was first known
        self.collected = False  # set by the page once it has shown the outcomes
        self._thread = threading.Thread(target=self._run_thread, name="kgqa-job", daemon=True)

    # ------------------------------------------------------------ control
    def start(self) -> "Job":
        self._thread.start()
        return self

    def stop(self) -> None:
        """Ask the running work to stop after its current step (and skip what comes after it)."""
        self._stop.set()

    @property
    def done(self) -> bool:
        return self.finished is not None

    def wait(self, timeout: float | None = None) -> bool:
        self._thread.join(timeout)
        return self.done

    # ------------------------------------------------- progress.Listener
    def stage(self, label: str) -> None:
        with self._lock:
            self._stage = label
            self._mark_phase()

    def activity(self, act: progress.Activity | None) -> None:
        with self._lock:
            self._act = act
            if act is not None and act.kind == progress.PROMPT and self._first.state == "before":
                self._first, self._first_started = eta.FirstPrompt("reading"), act.started
            self._mark_phase()

    def measured(self, kind: str, units: int, seconds: float) -> None:
        """Rates are recorded by the `RateListener` this job is forwarded from; the first prompt read is noted."""
        if kind == progress.PROMPT:
            with self._lock:
                if self._first.state == "reading":
                    self._first = eta.FirstPrompt("done", seconds=time.monotonic() - self._first_started)

    def _new_run(self) -> None:
        """A run (or an evaluation's question) starts: its clock and first prompt read (call with the lock held)."""
        self._run_started = time.monotonic()
        self._first, self._first_started = eta.FirstPrompt(), 0.0

    def _first_now(self, now: float) -> eta.FirstPrompt:
        if self._first.state == "reading":
            return eta.FirstPrompt("reading", spent=now - self._first_started)
        return self._first

    def _mark_phase(self) -> None:
        if self.first_phase_at is None:
            self.first_phase_at = time.monotonic() - self.started

    # ----------------------------------------------------------- snapshot
    def _activity_now(self, now: float) -> tuple[str, float | None, float | None]:
        """(text, fraction, seconds left) of the current activity (call with the lock held)."""
        act = self._act
        if act is None:
            return "", None, None
        model, backend = self._rate_key
        # a load's rate is the model's own: an embedder loading inside a run has none measured
        mine = act.kind != progress.LOAD or self._phase == "loading"
        rate = self.rates.rate(model, backend, act.kind) if model and mine else None
        return eta.activity_text(act, now), act.fraction, eta.activity_left(act, rate, now)

    def _say(self, line: str) -> None:
        with self._lock:
            self._log.append(line)

    def _on_step(self, step: Step) -> None:
        with self._lock:
            self._steps.append(step)
            self._log.append(self._step_text(step))

    def _step_text(self, step: Step) -> str:
        return f"{step.index + 1}. {step.title or step.kind}"

    def _run_thread(self) -> None:
        try:
            self._work()
        finally:
            with self._lock:
                self._phase = "done"
                self._act = None
                self.finished = time.monotonic()
            self.rates.flush()

    def _work(self) -> None:  # pragma: no cover - subclasses
        raise NotImplementedError

    def _load(self, load_model: Callable[..., Any], name: str, title: str, shown: str | None = None) -> Any:
        """Load (or fetch the already loaded) model, with the load shown as a phase and measured.

        ``shown`` is the name as the panel may show it (a model server's URL with its credentials masked).
        """
        shown = shown if shown is not None else mask_url_credentials(name)
        t0 = time.monotonic()
        with self._lock:
            self._phase = "loading"
            self._act = progress.Activity(progress.LOAD, f"loading model {shown}", 0, 1, t0)
            self._rate_key = (name, self._backend_guess)
            self._mark_phase()
        self._say(f"{title}: loading model {shown}…")
        try:
            model = load_model(name, self._say)
        finally:
            with self._lock:
                self._act = None
        seconds = time.monotonic() - t0
        backend = str(getattr(model, "backend", "") or self._backend_guess)
        if seconds > 0.5:  # a real load, not the model this process already holds
            self.rates.observe_rate(name, backend, progress.LOAD, 1, seconds)
        return model

    _backend_guess = ""


class RunJob(Job):
    """Runs `specs` one after another in a daemon thread; every method's trace goes to `store`."""

    def __init__(self, specs: list[RunSpec], store: RunStore,
                 load_model: Callable[[str, Callable[[str], None]], Any],
                 step_line: Callable[[Step], str], backend: str = "", rates: RateBook | None = None) -> None:
        super().__init__(rates)
        self.specs = list(specs)
        self.store = store
        self._load_model = load_model
        self._step_line = step_line
        self._backend_guess = backend  # the backend a model will load on (its rates until it has loaded)
        self._index = 0
        self._expected: list[Estimate | None] = [self._estimate(s, backend) for s in self.specs]

    def _estimate(self, spec: RunSpec, backend: str) -> Estimate | None:
        return self.rates.expected_run(spec.model_name, backend, spec.method, resolved_params(spec.method, spec.params),
                                       graph_size(spec.graph))

    def _step_text(self, step: Step) -> str:
        return self._step_line(step)

    def progress(self) -> JobProgress:
        with self._lock:
            now = time.monotonic()
            i = min(self._index, len(self.specs) - 1)
            spec = self.specs[i]
            end = self.finished if self.finished is not None else now
            act_text, fraction, act_left = self._activity_now(now)
            later = [self._expected[j] for j in range(i + 1, len(self.specs))]
            left = eta.time_left(self._expected[i], now - self._run_started,
                                 sum(e.seconds for e in later if e is not None),
                                 sum(e is None for e in later), act_left, self._first_now(now))
            return JobProgress(
                phase=self._phase, title=spec.title, method_index=min(self._index + 1, len(self.specs)),
                methods_total=len(self.specs), steps=len(self._steps),
                round_label=progress_round(spec.method, spec.params, self._steps),
                elapsed=end - self.started, log=tuple(self._log), outcomes=tuple(self._outcomes),
                stop_requested=self._stop.is_set(), done=self.finished is not None,
                stage=self._stage, activity=act_text, fraction=fraction,
                eta=left.text if self.finished is None else "", eta_basis=left.basis, overdue=left.overdue,
                eta_seconds=left.seconds if self.finished is None else None,
            )

    # ------------------------------------------------------------- worker
    def _work(self) -> None:
        """One outcome per spec, in order (pages pair them with what they asked for)."""
        for i, spec in enumerate(self.specs):
            with self._lock:
                self._index, self._steps, self._phase, self._stage = i, [], "loading", ""
                self._new_run()
            if self._stop.is_set():
                outcome = RunOutcome(spec.method, None, None, "not run: stopped by the user", stopped=True)
            else:
                try:
                    outcome = self._run_one(spec)
                except Exception as exc:  # never let a worker die silently: the page shows the message
                    outcome = RunOutcome(spec.method, None, None, f"The run failed: {type(exc).__name__}: {exc}")
            outcome.title = spec.title
            with self._lock:
                self._outcomes.append(outcome)

    def _run_one(self, spec: RunSpec) -> RunOutcome:
        shown = mask_url_credentials(spec.model_name)  # a model server's key holds its URL as typed
        try:
            model = self._load(self._load_model, spec.model_name, spec.title, shown)
        except Exception as exc:
            return RunOutcome(spec.method, None, None, f"Could not load model {shown}: {mask_url_credentials(exc)}")
        backend = str(getattr(model, "backend", "") or self._backend_guess)
        with self._lock:
            self._phase = "running"
            self._rate_key = (spec.model_name, backend)
            self._new_run()  # the ETA is of the run; loading was its own phase
            if backend != self._backend_guess:
                self._expected[self._index] = self._estimate(spec, backend)
        self._say(f"{spec.title}: reasoning with {shown}…")
        request = MethodRequest(graph=spec.graph, question=spec.question, model=model,
                                topic_entities=list(spec.topics), params=dict(spec.params), seed=0,
                                on_step=self._on_step, should_stop=self._stop.is_set, vocabulary=spec.vocabulary)
        started = time.perf_counter()
        measure = RateListener(self.rates, spec.model_name, backend, forward=self)
        try:
            with progress.listening(measure):
                trace = run_method(spec.method, request)
        except Exception as exc:
            return RunOutcome(spec.method, None, None, f"{spec.method} failed after "
                              f"{time.perf_counter() - started:.1f}s: {type(exc).__name__}: {exc}")
        with self._lock:
            self._act = None
        trace.gold_answers = list(spec.gold)
        if not (trace.stopped or trace.error):  # what the next run's ETA rests on
            self.rates.observe_run(spec.model_name, backend, spec.method, trace.parameters, graph_size(spec.graph),
                                   measure.typical(trace.seconds), measure.first_prompt)
        with self._lock:
            self._phase = "saving"
        try:
            info = self.store.save(trace, spec.graph)
        except OSError as exc:
            return RunOutcome(spec.method, trace, None, f"The run finished but could not be saved: {exc}",
                              stopped=trace.stopped)
        answers = ", ".join(trace.answer_texts) or "no answer"
        self._say(f"{spec.title}: " + ("stopped" if trace.stopped else "done")
                  + f" in {trace.seconds:.1f}s, {len(trace.steps)} steps: {answers}")
        return RunOutcome(spec.method, trace, info.run_id, trace.error or None, stopped=trace.stopped)
