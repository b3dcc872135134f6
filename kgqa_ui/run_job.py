"""A run of one or more methods in a worker thread owned by one browser session.

Why a thread: Streamlit reruns the page on every click, so a run made inside
the script would block the Stop button and freeze the progress panel.  The
page starts a `RunJob`, keeps it in its session state and polls `progress()`
(a fragment that reruns every second); the job never touches Streamlit, so
it can outlive a page switch or a closed tab, and its trace is saved either
way.  Stop sets an event that the method checks after every step
(`MethodRequest.should_stop`); the partial trace is saved, marked stopped.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from kgqa_core.methods.base import MethodRequest, run_method
from kgqa_core.trace.schema import Step, Trace

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


def progress_round(method: str, params: dict[str, Any], steps: list[Step]) -> str:
    """Where a method is in its own terms, with the total when the parameters fix it."""
    kinds = [s.kind for s in steps]
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


class RunJob:
    """Runs `specs` one after another in a daemon thread; every method's trace goes to `store`."""

    def __init__(self, specs: list[RunSpec], store: RunStore,
                 load_model: Callable[[str, Callable[[str], None]], Any],
                 step_line: Callable[[Step], str]) -> None:
        self.specs = list(specs)
        self.store = store
        self._load_model = load_model
        self._step_line = step_line
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._log: list[str] = []
        self._outcomes: list[RunOutcome] = []
        self._steps: list[Step] = []
        self._phase = "loading"
        self._index = 0
        self.started = time.monotonic()
        self.finished: float | None = None
        self.collected = False  # set by the page once it has shown the outcomes
        self._thread = threading.Thread(target=self._work, name="kgqa-run", daemon=True)

    # ------------------------------------------------------------ control
    def start(self) -> "RunJob":
        self._thread.start()
        return self

    def stop(self) -> None:
        """Ask the running method to stop after its current step (and skip the methods after it)."""
        self._stop.set()

    @property
    def done(self) -> bool:
        return self.finished is not None

    def wait(self, timeout: float | None = None) -> bool:
        self._thread.join(timeout)
        return self.done

    def progress(self) -> JobProgress:
        with self._lock:
            spec = self.specs[min(self._index, len(self.specs) - 1)]
            end = self.finished if self.finished is not None else time.monotonic()
            return JobProgress(
                phase=self._phase, title=spec.title, method_index=min(self._index + 1, len(self.specs)),
                methods_total=len(self.specs), steps=len(self._steps),
                round_label=progress_round(spec.method, spec.params, self._steps),
                elapsed=end - self.started, log=tuple(self._log), outcomes=tuple(self._outcomes),
                stop_requested=self._stop.is_set(), done=self.finished is not None,
            )

    # ------------------------------------------------------------- worker
    def _say(self, line: str) -> None:
        with self._lock:
            self._log.append(line)

    def _work(self) -> None:
        """One outcome per spec, in order (pages pair them with what they asked for)."""
        try:
            for i, spec in enumerate(self.specs):
                with self._lock:
                    self._index, self._steps, self._phase = i, [], "loading"
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
        finally:
            with self._lock:
                self._phase = "done"
                self.finished = time.monotonic()

    def _on_step(self, step: Step) -> None:
        with self._lock:
            self._steps.append(step)
            self._log.append(self._step_line(step))

    def _run_one(self, spec: RunSpec) -> RunOutcome:
        self._say(f"{spec.title}: loading model {spec.model_name}…")
        try:
            model = self._load_model(spec.model_name, self._say)
        except Exception as exc:
            return RunOutcome(spec.method, None, None, f"Could not load model {spec.model_name}: {exc}")
        with self._lock:
            self._phase = "running"
        self._say(f"{spec.title}: reasoning with {spec.model_name}…")
        request = MethodRequest(graph=spec.graph, question=spec.question, model=model,
                                topic_entities=list(spec.topics), params=dict(spec.params), seed=0,
                                on_step=self._on_step, should_stop=self._stop.is_set)
        started = time.perf_counter()
        try:
            trace = run_method(spec.method, request)
        except Exception as exc:
            return RunOutcome(spec.method, None, None, f"{spec.method} failed after "
                              f"{time.perf_counter() - started:.1f}s: {type(exc).__name__}: {exc}")
        trace.gold_answers = list(spec.gold)
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
