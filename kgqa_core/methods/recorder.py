"""The one trace recorder every method run writes through.

Why: each method used to build its trace, stream its steps, count its costs
and catch its errors in its own way (READS caught every exception, DoG and
RoK only a too-long prompt).  `run_method` now creates one `TraceRecorder`
per run; a method records steps with `step` (numbered, kept, streamed to
``on_step``), counts model calls no step records with `count_call`, and
fills the answer fields of ``recorder.trace``.  `finish` adds what every
trace shares: costs measured the same way for every method, the wall time,
and, if the method raised, the error with the steps so far kept.

Costs: ``model_calls`` and ``tokens_in`` are the calls the steps record
(their `ModelCall`s) plus the calls counted with `count_call`, so
``tokens_in`` is the prompt tokens sent (a cached prefix included);
``forward_passes`` and ``tokens_out`` come from the model's counter.

Where the time went: `listening` puts the run's `PhaseClock` in front of the
thread's listener while the method runs, and `finish` turns it into
``Trace.costs`` (`CostBreakdown`): seconds per phase summing to
``Trace.seconds`` (``other`` holds what no phase claimed), prompt tokens read
beyond the cached prefix and served from it, tokens written, model calls.
"""

from __future__ import annotations

import contextlib
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from .. import progress
from ..counts import ModelCosts
from ..trace.schema import CostBreakdown, Step, Trace
from .phase_clock import PhaseClock

StepCallback = Callable[[Step], None]


class RunStopped(Exception):
    """The caller asked the run to stop (the app's Stop button); the steps so far are kept."""


@dataclass
class RunCosts(ModelCosts):
    """What a run cost; ``graph_queries`` is counted for graph stores that answer remote queries."""

    graph_queries: int = 0


class TraceRecorder:
    """Records one run: steps, streaming, costs, timing and failure."""

    def __init__(self, trace: Trace, model: Any = None, on_step: StepCallback | None = None,
                 should_stop: Callable[[], bool] | None = None) -> None:
        self.trace = trace
        self.costs = RunCosts()
        self._on_step = on_step
        self._should_stop = should_stop
        self._counter = getattr(model, "counter", None)
        self._counter_start = self._counter.snapshot() if self._counter is not None else None
        self._forced_start = self._forced()
        self._reused_start = self._reused()
        self._inexact_start = self._inexact()
        self.clock = PhaseClock(progress.current())  # a new one per run: a second run starts from zero
        self._started = time.perf_counter()

    def _reused(self) -> int:
        value = getattr(self._counter, "prefix_tokens_reused", 0)
        return value if isinstance(value, int) else 0

    @contextlib.contextmanager
    def listening(self) -> Iterator[PhaseClock]:
        """The method's phases and the model's activities timed by this run's clock (the old listener still hears all)."""
        with progress.listening(self.clock):
            try:
                yield self.clock
            finally:
                self.clock.tick()

    # --------------------------------------------------------- recording
    def step(self, step: Step) -> Step:
        """Number the step, keep it, count the model calls it records, and stream it."""
        self.trace.add_step(step)
        self.costs.model_calls += len(step.model_calls)
        self.costs.tokens_in += sum(c.prompt_tokens for c in step.model_calls)
        if self._on_step is not None:
            self._on_step(step)
        self.check_stop()
        return step

    def count_call(self, prompt_tokens: int) -> None:
        """A model call that no step records as a `ModelCall` (DoG's prefills, CoT's one decode)."""
        self.costs.model_calls += 1
        self.costs.tokens_in += prompt_tokens

    def count_graph_queries(self, n: int = 1) -> None:
        self.costs.graph_queries += n

    def check_stop(self) -> None:
        """Raise `RunStopped` when the caller asked to stop (checked at every recorded step)."""
        if self._should_stop is not None and self._should_stop():
            raise RunStopped(f"stopped by the user after {len(self.trace.steps)} step(s)")

    # ---------------------------------------------------------- finishing
    def fail(self, exc: BaseException) -> None:
        """Record `exc` as the trace's error; the steps so far stay.

        A `ValueError` (bad parameters, no topic entity, a prompt too long, a
        plan that cannot run) is input the user can change: its message is
        shown as it is.  Anything else is a fault: its type is named and a
        short traceback kept in ``extra["traceback"]``.
        """
        from ..models.interface import BackendCapabilityError
        from ..models.server_http import ServerError

        # a model server that failed or lacks a capability: one line the user can act on, not a fault
        if isinstance(exc, (ValueError, RunStopped, ServerError, BackendCapabilityError)):
            message = str(exc)
        else:
            message = f"{type(exc).__name__}: {exc}"
            self.trace.extra["traceback"] = "".join(traceback.format_exception(exc, limit=8))
        if self.trace.steps and not isinstance(exc, RunStopped):
            message += f" (stopped at step {len(self.trace.steps) + 1})"
        self.trace.error = f"{self.trace.error}; {message}" if self.trace.error else message

    def finish(self) -> Trace:
        """Costs and wall time onto the trace."""
        costs = self.costs
        if self._counter is not None and self._counter_start is not None:
            now = self._counter.snapshot()
            costs.forward_passes = now[0] - self._counter_start[0]
            costs.tokens_out = now[2] - self._counter_start[2]
        costs.seconds = time.perf_counter() - self._started
        t = self.trace
        t.model_calls, t.tokens_in, t.seconds = costs.model_calls, costs.tokens_in, costs.seconds
        if self._counter is not None:
            t.forward_passes, t.tokens_out = costs.forward_passes, costs.tokens_out
        if costs.graph_queries:
            t.graph_queries += costs.graph_queries  # the typed cost field (Trace.graph_queries)
        t.costs = self._breakdown(costs)
        inexact = self._inexact() - self._inexact_start
        if inexact:
            t.notes.append(
                f"inexact reads: {inexact} prompt(s) of this run were read while another run's sequences were in the "
                "model's cache (e.g. a second tab asking at the same time), so its numbers may differ slightly from "
                "a new process's and a near tie may go the other way (docs/benchmarks.md, \"The same answer "
                "whatever ran before\")")
        return t

    def _inexact(self) -> int:
        """The model's count of prompts read beside other live sequences (llama.cpp's exact reuse; 0 elsewhere)."""
        value = getattr(self._counter, "inexact_reads", 0)
        return value if isinstance(value, int) else 0

    def _breakdown(self, costs: RunCosts) -> CostBreakdown:
        """The clock's phases, rounded, with ``other`` taking the rest so they sum to the run's seconds."""
        clock = self.clock
        seconds = {k: round(v, 4) for k, v in clock.seconds.items() if k != progress.OTHER and v > 0}
        seconds[progress.OTHER] = round(max(0.0, costs.seconds - sum(seconds.values())), 4)
        return CostBreakdown(
            seconds=seconds, entries=dict(clock.entries), prompt_tokens_read=clock.prompt_tokens_read,
            prompt_tokens_cached=max(0, self._reused() - self._reused_start),
            tokens_written=costs.tokens_out, tokens_forced=max(0, self._forced() - self._forced_start),
            model_calls=costs.model_calls,
        )

    def _forced(self) -> int:
        """The model's count of forced tokens so far (0 for a backend that does not count them)."""
        return int(getattr(self._counter, "tokens_forced", 0) or 0) if self._counter is not None else 0
