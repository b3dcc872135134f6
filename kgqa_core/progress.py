"""Where a run is while it runs: phases that methods and models report to whoever listens on this thread.

Why: a DoG run on a large graph showed "0 steps recorded" for three minutes
and RoK "stage 1 of 6" for five: the trace only grows when a step ends, and
the longest waits (reading a long prompt, writing a chain of thought) are
inside one step.  Now a method says which stage it is in (`stage`: "triplet
step 2", "PageRank over the paths") and a model says what it is doing inside
it (`activity`: reading a prompt of N tokens, with the tokens read so far;
writing; scoring K options).  The app's job panel and the evaluation listen
and turn this into a phase line and an ETA; nobody listening costs nothing.

Listening is per thread (`listening`), because the app runs each job in its
own worker thread and one loaded model serves several sessions: a prompt read
reports to the job whose thread reads it.  Activities nest (a generation
reads its prompt first); a listener always sees the innermost one, and the
outer one again when the inner ends.  Finished activities are reported with
their size and seconds (`Listener.measured`), which is what the rates of
this machine are measured from (`kgqa_core.rates`).

Phases (`phase`): where the time of a run goes, for the trace's cost
breakdown (`Trace.costs`).  A method or a graph routine wraps a piece of
work in ``with phase(LINKING):``; a listener that keeps a clock
(`kgqa_core.methods.phase_clock.PhaseClock`, which `run_method` puts in
front of whoever already listens) charges the time to the innermost open
phase or model activity.  Listeners without the hooks ignore phases.

This module imports nothing from kgqa_core (layer -1): models and methods
report through it without knowing who listens.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterator, Protocol, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

PROMPT = "prompt"  # reading a prompt: units are prompt tokens
WRITE = "write"    # generating text: units are tokens written
SCORE = "score"    # scoring options: units are options
LOAD = "load"      # loading a model: one unit

# The phases of a run's cost breakdown (`Trace.costs`); model activities map onto four of them.
QUESTION_READING = "question_reading"  # the question's reading (reading.plan), outside its model calls
LINKING = "linking"                    # topic entities linked from the question
CONTEXT_RANKING = "context_ranking"    # ranking triplets for the prompt / a hub's neighbourhood / RoK's paths
SUBGRAPH = "subgraph"                  # DoG's G_q, its step offers and the tries over them
PROMPT_READING = "prompt_reading"      # the model reading prompt tokens beyond a cached prefix
WRITING = "writing"                    # the model writing text (free text, answer lines)
FORCED_RUNS = "forced_runs"            # DoG's triplets under the trie: choices and forced runs fed to the model
OPTION_SCORING = "option_scoring"      # the model scoring options (READS, the question's reading)
ANSWERS = "answers"                    # answers mapped to entities, completed from the graph, checked
LOADING = "loading"                    # one-off model loads inside a run (the entity-similarity model)
GRAPH_FETCH = "graph_fetch"            # a graph store's neighbourhood fetched before the method ran
OTHER = "other"                        # everything no phase claimed
ACTIVITY_PHASES = {PROMPT: PROMPT_READING, WRITE: WRITING, SCORE: OPTION_SCORING, LOAD: LOADING}


@dataclass(frozen=True)
class Activity:
    """What the model is doing now: ``done`` of ``total`` units (``total`` 0 when open-ended)."""

    kind: str
    label: str
    done: int = 0
    total: int = 0
    started: float = 0.0  # time.monotonic() when it began

    @property
    def fraction(self) -> float | None:
        return min(1.0, self.done / self.total) if self.total > 0 else None


class Listener(Protocol):
    """What a job implements to follow a run (every call comes from the working thread)."""

    def stage(self, label: str) -> None: ...

    def activity(self, act: Activity | None) -> None: ...

    def measured(self, kind: str, units: int, seconds: float) -> None: ...


_local = threading.local()


def _listener() -> Listener | None:
    return getattr(_local, "listener", None)


def current() -> Listener | None:
    """This thread's listener (None when nobody listens): a listener put in front of it forwards to it."""
    return _listener()


@contextlib.contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """Report this thread's stages and activities to ``listener`` inside the block."""
    old, old_stack = _listener(), getattr(_local, "stack", None)
    _local.listener, _local.stack = listener, []
    try:
        yield
    finally:
        _local.listener, _local.stack = old, old_stack


def stage(label: str) -> None:
    """A method's own phase ("triplet step 2", "PageRank over 14 paths"); cheap when nobody listens."""
    lst = _listener()
    if lst is not None:
        lst.stage(label)


@contextlib.contextmanager
def phase(name: str) -> Iterator[None]:
    """Charge the time inside the block to phase ``name`` (innermost wins); free when no clock listens."""
    lst = _listener()
    enter = getattr(lst, "enter_phase", None) if lst is not None else None
    if enter is None:
        yield
        return
    enter(name)
    try:
        yield
    finally:
        lst.exit_phase(name)  # type: ignore[union-attr]


def in_phase(name: str) -> Callable[[F], F]:
    """A function whose every call is charged to phase ``name`` (`phase` around its body)."""

    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            with phase(name):
                return fn(*args, **kwargs)

        return timed  # type: ignore[return-value]

    return wrap


class Tracker:
    """The handle of one activity: `advance` as units get done."""

    def __init__(self, listener: Listener | None, act: Activity) -> None:
        self._listener = listener
        self.act = act
        self.nested_seconds = 0.0  # spent in activities inside this one (a generation's prompt read)

    def advance(self, units: int = 1) -> None:
        if self._listener is None or units <= 0:
            return
        self.act = replace(self.act, done=self.act.done + units)
        if _local.stack and _local.stack[-1] is self:
            self._listener.activity(self.act)


_NOBODY = Tracker(None, Activity("", ""))


@contextlib.contextmanager
def activity(kind: str, label: str, total: int = 0) -> Iterator[Tracker]:
    """A model activity of ``total`` units (0: unknown); reported while it lasts and measured when it ends."""
    lst = _listener()
    if lst is None:
        yield _NOBODY
        return
    tracker = Tracker(lst, Activity(kind, label, 0, max(0, int(total)), time.monotonic()))
    stack: list[Tracker] = _local.stack
    stack.append(tracker)
    lst.activity(tracker.act)
    ok = False
    try:
        yield tracker
        ok = True
    finally:
        if stack and stack[-1] is tracker:
            stack.pop()
        lst.activity(stack[-1].act if stack else None)
        spent = time.monotonic() - tracker.act.started
        if stack:
            stack[-1].nested_seconds += spent
        if ok:  # its own time: a generation's rate leaves out the prompt it read first
            units = tracker.act.done or tracker.act.total
            lst.measured(kind, units, max(0.0, spent - tracker.nested_seconds))
