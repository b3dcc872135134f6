"""An evaluation in the session's worker thread: the same job machinery as Ask (progress, phases, ETA, Stop).

Why: the Evaluate page used to run `run_eval` inside the page script, so the
page froze for the whole evaluation, had no Stop, and its estimate was a
single number computed before the start.  `EvalJob` runs `run_eval` in a
`kgqa_ui.run_job.Job`: the page polls it like an Ask run (`running.job_panel`),
Stop ends it after the current step (the question going on is not recorded,
so running again redoes it), and the time left is this evaluation's own
measured seconds per question, else this machine's rates for graphs of the
same size (`kgqa_core.rates`).

With ``workers`` > 1 the questions run in worker processes that each load the
model (`kgqa_core.eval.parallel`): the job does not load it here, follows the
phases of the first worker still running, lists every question going on in
its title, and divides the time of the questions still queued by the workers.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from kgqa_core.rates import Estimate, RateBook

from . import eta
from .eval_view import method_seconds
from .run_job import Job, JobProgress, RunOutcome, progress_round, resolved_params


@dataclass(frozen=True)
class EvalSpec:
    """What to evaluate: the dataset, methods, model and where the results go (as the CLI's ``eval``)."""

    dataset: Path
    methods: tuple[str, ...]
    model_name: str
    out_dir: Path
    limit: int
    params: dict[str, Any] = field(default_factory=dict)
    types: tuple[str, ...] | None = None
    graph_size: int | None = None  # the questions' typical graph size (what the rates are looked up by)
    vocabulary: Any = None  # the user's RelationVocabulary for every question (the Ask page's), or None
    workers: int = 1  # worker processes running questions at once (`kgqa_core.eval.parallel`); 1: in this process


def method_params(method: str, shared: dict[str, Any]) -> dict[str, Any]:
    """The shared values ``method`` declares, with its defaults filled in (as its traces record them)."""
    try:
        from kgqa_core.methods.base import applicable_params, method_spec

        return resolved_params(method, applicable_params(method_spec(method), shared))
    except Exception:
        return dict(shared)


class EvalJob(Job):
    """Runs one evaluation (`kgqa_core.eval.runner.run_eval`) in a daemon thread."""

    def __init__(self, spec: EvalSpec, load_model: Callable[[str, Callable[[str], None]], Any],
                 backend: str = "", rates: RateBook | None = None) -> None:
        super().__init__(rates)
        self.spec = spec
        self._load_model = load_model
        self._backend_guess = backend
        self._backend = backend
        self._pair: tuple[int, int, str, str] | None = None  # (i, pending pairs, question id, method)
        self._going: dict[tuple[str, str], int] = {}  # (question id, method) of every pair going on -> its start index
        self._records: list[dict[str, Any]] = _existing_records(spec.out_dir)
        self.summary: Any = None

    # ----------------------------------------------------------- snapshot
    def _expected(self, method: str) -> Estimate | None:
        """Seconds per question of ``method``: this evaluation's own median, else similar runs on this machine."""
        own = method_seconds(method, self._records)
        if own:
            return Estimate(statistics.median(own), f"median of {len(own)} question(s) of this evaluation", len(own))
        return self.rates.expected_run(self.spec.model_name, self._backend, method,
                                       method_params(method, self.spec.params), self.spec.graph_size)

    def progress(self) -> JobProgress:
        with self._lock:
            now = time.monotonic()
            end = self.finished if self.finished is not None else now
            act_text, fraction, act_left = self._activity_now(now)
            if self._pair is None:
                title, index, total, method = "evaluation", 0, 0, ""
            else:
                i, total, qid, method = self._pair
                title, index = f"evaluation · {method} on question {qid}", i
                workers = max(1, self.spec.workers)
                if workers > 1:
                    going = ", ".join(f"{m} on {q}" for q, m in self._going) or f"{method} on {qid}"
                    title = f"evaluation · {workers} workers · {going}"
            left = eta.TimeLeft(None, "")
            if method and self.finished is None:
                methods = list(self.spec.methods)
                workers = max(1, self.spec.workers)
                remaining = max(0, total - index)  # pairs after this one, question by question, methods in order
                later_methods = [methods[(methods.index(method) + k + 1) % len(methods)] for k in range(remaining)] \
                    if method in methods else []
                expected = {m: self._expected(m) for m in set(later_methods) | {method}}
                later = [e.seconds if (e := expected[m]) is not None else None for m in later_methods]
                # the queued pairs are shared by the workers: each takes the next one when it is free
                left = eta.time_left(expected[method], now - self._run_started,
                                     sum(x for x in later if x is not None) / workers,
                                     sum(x is None for x in later), act_left, self._first_now(now))
            return JobProgress(
                phase=self._phase, title=title, method_index=index, methods_total=total, steps=len(self._steps),
                round_label=progress_round(method, self.spec.params, self._steps) if method else "",
                elapsed=end - self.started, log=tuple(self._log), outcomes=tuple(self._outcomes),
                stop_requested=self._stop.is_set(), done=self.finished is not None,
                stage=self._stage, activity=act_text, fraction=fraction,
                eta=left.text, eta_basis=left.basis, overdue=left.overdue, eta_seconds=left.seconds,
            )

    # ------------------------------------------------------------- worker
    def _on_start(self, i: int, total: int, question: Any, method: str) -> None:
        with self._lock:
            self._pair = (i, total, str(question.id), method)
            self._going[(str(question.id), method)] = i
            self._new_run()
            self._steps, self._stage, self._phase = [], "", "running"

    def _on_pair(self, done: int, total: int, record: dict[str, Any]) -> None:
        mark = "error" if record.get("error") else ("✓" if record["metrics"].get("hits1") else "✗")
        secs = record["metrics"].get("seconds") or 0.0
        with self._lock:
            self._going.pop((str(record.get("id")), str(record.get("method"))), None)
            self._records.append(record)
            self._log.append(f"{done}/{total} · {record['method']} · {record['id']} · {mark} · {secs:.1f} s")

    def _work(self) -> None:
        from kgqa_core.eval.runner import run_eval

        from kgqa_core.eval.parallel import importable_methods

        spec = self.spec
        model = None
        workers = spec.workers if spec.workers > 1 and importable_methods(spec.methods) else 1
        if workers <= 1:  # workers load their own model (its pages are shared through the mapped file)
            try:
                model = self._load(self._load_model, spec.model_name, "evaluation")
            except Exception as exc:
                with self._lock:
                    self._outcomes.append(RunOutcome("evaluation", None, None, f"Could not load model "
                                                     f"{spec.model_name}: {exc}", title="evaluation"))
                return
        with self._lock:
            self._backend = str(getattr(model, "backend", "") or self._backend_guess)
            self._rate_key = (spec.model_name, self._backend)
            self._phase = "running"
        error: str | None = None
        try:
            self.summary = run_eval(
                spec.dataset, list(spec.methods), spec.model_name, spec.out_dir, limit=spec.limit,
                params=dict(spec.params), progress=False, model=model, types=list(spec.types) if spec.types else None,
                on_progress=self._on_pair, on_start=self._on_start, should_stop=self._stop.is_set,
                on_step=self._on_step, listener=self, vocabulary=spec.vocabulary,
                on_warning=lambda msg: self._say(f"note: {msg}"),  # shown in the panel's log, as text
                workers=workers, backend=self._backend_guess or None,
            )
        except Exception as exc:  # a bad dataset, a config clash: the page shows the message
            error = f"The evaluation stopped: {exc}"
        stopped = bool(getattr(self.summary, "stopped", False))
        if self.summary is not None:
            s = self.summary
            self._say(f"evaluation: ran {s.ran}, resumed {s.skipped}, errors {s.failed}"
                      + ("; stopped by you (the question going on is not recorded)" if stopped else ""))
            for problem in s.worker_errors:  # the other workers' questions are recorded; running again does the rest
                self._say(f"note: {problem}")
            if s.worker_errors and error is None:
                error = ("A worker of the evaluation failed (" + "; ".join(s.worker_errors) + "). The other "
                         "workers' questions are recorded: Run evaluation does the rest.")
        with self._lock:
            self._outcomes.append(RunOutcome("evaluation", None, None, error, stopped=stopped, title="evaluation"))

    def _on_step(self, step: Any) -> None:
        """Steps count for the phase line; the log keeps one line per finished question."""
        with self._lock:
            self._steps.append(step)


def _existing_records(out_dir: Path) -> list[dict[str, Any]]:
    try:
        from kgqa_core.eval.runner import load_results

        return load_results(out_dir)
    except Exception:
        return []
