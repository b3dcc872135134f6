"""Time left of a run, from the rates measured on this machine, in words a waiting person reads.

Pure functions (no Streamlit): the job panel's phase line and ETA, the Ask
page's "measured here" caption and the Evaluate page's estimate all come
from here, so they say the same thing and are unit-tested.

Two sources, combined: the expected duration of the whole run (the median of
similar earlier runs, `kgqa_core.rates.RateBook.expected_run`) and the time
left of what the model is doing now (a prompt of N tokens read at the
measured tokens per second).  Nothing is made up: without a measurement the
line says so ("no run of dog measured here yet") instead of a guess, and a
run that outlasts the usual time says that, not a negative ETA.
"""

from __future__ import annotations

from dataclasses import dataclass

from kgqa_core.progress import LOAD, PROMPT, SCORE, WRITE, Activity
from kgqa_core.rates import Estimate


def duration(seconds: float) -> str:
    """``7 s``, ``3 min``, ``1.5 h``: rounded as a person says it."""
    seconds = max(0.0, float(seconds))
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def activity_text(act: Activity | None, now: float) -> str:
    """``reading a prompt of 1,834 tokens · 45%`` / ``writing · 37 tokens so far`` (plain text)."""
    if act is None:
        return ""
    parts = [act.label]
    if act.kind == WRITE:
        parts.append(f"{act.done} token{'s' if act.done != 1 else ''} so far")
    elif act.fraction is not None and act.kind in (PROMPT, SCORE):
        parts.append(f"{act.fraction:.0%}")
    spent = now - act.started if act.started else 0.0
    if spent >= 3:
        parts.append(f"for {duration(spent)}")
    return " · ".join(parts)


def activity_left(act: Activity | None, rate: float | None, now: float) -> float | None:
    """Seconds left of the current activity at the measured rate (units/s); None when it cannot be said.

    A prompt read or a scoring batch has a known size; a generation stops when the model
    ends it, so its maximum length would only give an upper bound (not used as an ETA).
    A model load's "rate" is loads per second: the time left is one load less the time spent.
    """
    if act is None or not rate or rate <= 0:
        return None
    if act.kind in (PROMPT, SCORE) and act.total > 0:
        return max(0.0, (act.total - act.done) / rate)
    if act.kind == LOAD:
        return max(0.0, 1.0 / rate - (now - act.started))
    return None


@dataclass(frozen=True)
class TimeLeft:
    """What the panel says about time: ``text`` (empty when nothing is known) and its basis (a tooltip)."""

    seconds: float | None
    text: str
    basis: str = ""
    overdue: bool = False


@dataclass(frozen=True)
class FirstPrompt:
    """Where a run is with its first prompt read: not begun, going on (for ``spent`` s), or done in ``seconds``."""

    state: str = "before"  # "before" | "reading" | "done"
    spent: float = 0.0
    seconds: float = 0.0


def time_left(expected: Estimate | None, elapsed: float, later: float = 0.0, later_unknown: int = 0,
              act_left: float | None = None, first: FirstPrompt | None = None) -> TimeLeft:
    """The time left of a job: this run's (expected less elapsed, at least the current activity's) plus later runs'.

    When the similar runs recorded their first prompt read (``expected.rest``), the run is split
    there: that read is the part a cached prompt prefix makes short or long, so it is timed live
    (its size at the measured rate) and the rest is the median of the rest.  ``later`` is the
    expected seconds of the runs queued after this one, ``later_unknown`` how many of them have no
    measurement.  A run past its usual time says so, with what is still known.
    """
    more = f" (+ {later_unknown} run(s) not measured yet)" if later_unknown else ""
    if expected is None:
        if act_left is not None:
            return TimeLeft(act_left + later, f"about {duration(act_left + later)} left{more}",
                            "this step's size at the rate measured here; the rest of the run is not measured yet")
        return TimeLeft(None, "no run like this one measured here yet: the time left is not known",
                        "ETAs come from earlier runs on this machine (same model and backend)")
    if expected.rest is not None and first is not None and first.state != "before":
        if first.state == "reading":
            reading_left = act_left if act_left is not None else max(0.0, (expected.first_prompt or 0.0) - first.spent)
            left = reading_left + expected.rest
            return TimeLeft(left + later, f"about {duration(left + later)} left{more}", expected.basis)
        left = expected.rest - (elapsed - first.seconds)
        if left >= 0:
            return TimeLeft(left + later, f"about {duration(left + later)} left{more}", expected.basis)
        return TimeLeft(None, f"longer than the usual {duration(expected.seconds)}{more}", expected.basis, True)
    left = expected.seconds - elapsed
    overdue = left < 0
    if act_left is not None:
        left = max(left, act_left)
    if overdue and act_left is None:
        return TimeLeft(None, f"longer than the usual {duration(expected.seconds)}{more}", expected.basis, True)
    total = max(0.0, left) + later
    text = f"about {duration(total)} left" + (f" (usually {duration(expected.seconds)})" if overdue else "") + more
    return TimeLeft(total, text, expected.basis, overdue)


def estimate_text(est: Estimate | None, method: str) -> str:
    """One method's expected time before it starts: ``dog: about 8 s here (median of 5 runs ...)``."""
    if est is None:
        return f"{method}: not measured here yet"
    return f"{method}: about {duration(est.seconds)} ({est.basis})"


def measured_caption(estimates: dict[str, Estimate | None], model: str, backend: str) -> str:
    """The Ask page's line under the model: each chosen method's measured time here, or that it is not measured."""
    if not estimates:
        return ""
    known = {m: e for m, e in estimates.items() if e is not None}
    parts = [f"{m} about {duration(e.seconds)} ({e.basis.replace(f'run(s) of {m} here ', 'run(s) ')})"
             for m, e in known.items()]
    unknown = [m for m in estimates if m not in known]
    text = f"Measured on this machine with {model} ({backend}): " + "; ".join(parts) if parts else \
        f"No run with {model} ({backend}) measured on this machine yet for graphs of this size"
    if unknown and parts:
        text += f"; not measured yet: {', '.join(unknown)}"
    return text + ". The progress panel gives the time left as a run goes."
