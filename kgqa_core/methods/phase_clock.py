"""Where a run's time goes: a progress listener that keeps a clock per phase and forwards everything.

Why: a DoG question on a whole KB took ~10 s outside reading the prompt
and writing, and nothing said where (linking, ranking the neighbourhood,
building G_q, the trie runs, completing the answers).  `run_method` puts a
`PhaseClock` in front of whoever already listens on the thread (the app's
job, an evaluation, the command line's rate book), so they keep getting
every stage, activity and measurement, and the clock hears the phases too.

Each moment of the run is charged to the innermost thing open then: a
method's phase (`progress.phase`) or a model activity (`progress.activity`:
reading a prompt, writing, scoring options, loading), whichever began
last; time with nothing open is ``other``.  So the seconds of all phases add
up to the time the clock ran, and a model's prompt read inside G_q building
is prompt reading, not G_q.  Threads other than the run's are not seen:
their time is charged to what the run's thread had open meanwhile.
"""

from __future__ import annotations

import time
from typing import Any

from .. import progress


class PhaseClock:
    """A `progress.Listener` with the phase hooks: seconds and entries per phase, prompt tokens read."""

    def __init__(self, forward: Any = None) -> None:
        self.forward = forward  # the listener that was there before (None: nobody)
        self.seconds: dict[str, float] = {}
        self.entries: dict[str, int] = {}
        self.prompt_tokens_read = 0  # prompt tokens the model read beyond a cached prefix (measured PROMPT units)
        self._phases: list[tuple[int, str]] = []  # (opened as n-th, phase) innermost last
        self._acts: list[tuple[int, tuple, str]] = []  # (opened as n-th, identity, phase) innermost last
        self._opened = 0
        self._last = time.perf_counter()

    # ----------------------------------------------------------- the clock
    def _now_phase(self) -> str:
        phase = self._phases[-1] if self._phases else None
        act = self._acts[-1] if self._acts else None
        if act is not None and (phase is None or act[0] > phase[0]):
            return act[2]
        return phase[1] if phase is not None else progress.OTHER

    def tick(self) -> None:
        """Charge the time since the last event to what is open now."""
        now = time.perf_counter()
        key = self._now_phase()
        self.seconds[key] = self.seconds.get(key, 0.0) + (now - self._last)
        self._last = now

    def _enter(self, phase: str) -> int:
        self._opened += 1
        self.entries[phase] = self.entries.get(phase, 0) + 1
        return self._opened

    # ------------------------------------------------------ phase hooks
    def enter_phase(self, name: str) -> None:
        self.tick()
        self._phases.append((self._enter(name), name))
        if hasattr(self.forward, "enter_phase"):
            self.forward.enter_phase(name)

    def exit_phase(self, name: str) -> None:
        self.tick()
        for i in range(len(self._phases) - 1, -1, -1):
            if self._phases[i][1] == name:
                del self._phases[i:]
                break
        if hasattr(self.forward, "exit_phase"):
            self.forward.exit_phase(name)

    # --------------------------------------------------- progress.Listener
    def stage(self, label: str) -> None:
        if self.forward is not None:
            self.forward.stage(label)

    def activity(self, act: progress.Activity | None) -> None:
        """The innermost activity now (None: none): a new one opens, a known one below the top means the top ended."""
        self.tick()
        if act is None:
            self._acts.clear()
        else:
            ident = (act.kind, act.label, act.started)
            at = next((i for i in range(len(self._acts) - 1, -1, -1) if self._acts[i][1] == ident), None)
            if at is not None:
                del self._acts[at + 1:]
            else:
                phase = progress.ACTIVITY_PHASES.get(act.kind, progress.OTHER)
                self._acts.append((self._enter(phase), ident, phase))
        if self.forward is not None:
            self.forward.activity(act)

    def measured(self, kind: str, units: int, seconds: float) -> None:
        if kind == progress.PROMPT:
            self.prompt_tokens_read += max(0, int(units))
        if self.forward is not None:
            self.forward.measured(kind, units, seconds)
