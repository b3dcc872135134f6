"""One worker process of a parallel evaluation (`kgqa_core.eval.parallel`): ``python -m kgqa_core.eval.worker``.

It reads the evaluation's spec (one JSON line) from stdin, loads the model
once, says ``ready`` and then runs the questions the parent hands it (``{"q":
id}`` lines) until told ``{"stop": true}`` or its stdin closes (the parent has
gone).  It reports on stdout as JSON lines marked with `EVENT_PREFIX`: pairs
started and finished (with its counts so far), steps, phases and measured
activities, ``idle`` when it wants the next question, ``end`` or ``error``.
A stop arriving mid-question stops the method after its current step; that
pair is not recorded (resuming redoes it), as in a single process.
"""

from __future__ import annotations

import json
import os
import queue
import sys
import threading
import time
import traceback
from dataclasses import asdict
from typing import Any

from .parallel import EVENT_PREFIX

ACTIVITY_EVERY = 0.25  # seconds between two progress reports of one activity (a new one is sent at once)


class _Channel:
    """Event lines to the parent on the real stdout; anything else the process prints goes to stderr."""

    def __init__(self) -> None:
        self._out = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8", buffering=1)
        sys.stdout = sys.stderr  # a library's print must not mix into the events
        self._lock = threading.Lock()

    def send(self, event: str, /, **data: Any) -> None:
        line = EVENT_PREFIX + json.dumps({"e": event, **data}, ensure_ascii=False, default=str) + "\n"
        with self._lock:
            try:
                self._out.write(line)
                self._out.flush()
            except (BrokenPipeError, OSError, ValueError):
                pass


class _Relay:
    """A `kgqa_core.progress.Listener` passing phases to the parent (an activity's progress at most every 0.25 s)."""

    def __init__(self, channel: _Channel) -> None:
        self._ch = channel
        self._last: tuple[str, str, float] | None = None  # (kind, label, when sent) of the last activity sent

    def stage(self, label: str) -> None:
        self._ch.send("stage", label=label)

    def activity(self, act: Any) -> None:
        now = time.monotonic()
        if act is not None and self._last is not None and self._last[:2] == (act.kind, act.label) \
                and now - self._last[2] < ACTIVITY_EVERY:
            return
        self._last = (act.kind, act.label, now) if act is not None else None
        self._ch.send("activity", act=asdict(act) if act is not None else None)

    def measured(self, kind: str, units: int, seconds: float) -> None:
        self._ch.send("measured", kind=kind, units=units, seconds=seconds)


def _read_commands(commands: "queue.Queue[str | None]", stop: threading.Event) -> None:
    for line in sys.stdin:
        try:
            cmd = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(cmd, dict) and isinstance(cmd.get("q"), str):
            commands.put(cmd["q"])
        elif isinstance(cmd, dict) and cmd.get("stop"):
            break
    stop.set()  # told to stop, or the parent has gone
    commands.put(None)


def main() -> int:
    channel = _Channel()
    summary = None

    def counts() -> dict[str, int]:
        return {"ran": summary.ran, "skipped": summary.skipped, "failed": summary.failed} if summary else {}

    try:
        spec = json.loads(sys.stdin.readline() or "{}")
        stop = threading.Event()
        commands: "queue.Queue[str | None]" = queue.Queue()
        threading.Thread(target=_read_commands, args=(commands, stop), daemon=True).start()

        from ..models import load_model
        from ..reading.vocabulary import RelationVocabulary
        from .runner import plan_eval, run_pairs

        vocabulary = RelationVocabulary.from_dict(spec["vocabulary"]) if spec.get("vocabulary") else None
        plan = plan_eval(spec["dataset"], spec["methods"], spec["model"], spec["out_dir"], params=spec["params"],
                         seed=int(spec.get("seed", 0)), vocabulary=vocabulary)
        summary = plan.summary
        summary.skipped = 0  # this worker's own counts: the parent adds them up
        pairs: dict[str, list] = {}
        for q, m in plan.pending:
            pairs.setdefault(q.id, []).append((q, m))
        model = load_model(spec["load"], backend=spec.get("backend"))
        channel.send("ready", backend=getattr(model, "backend", ""), pid=os.getpid())
        relay = _Relay(channel)
        while True:
            qid = commands.get()
            if qid is None or stop.is_set():
                break
            run_pairs(
                plan, pairs.get(qid, []), model, listener=relay, should_stop=stop.is_set,
                on_start=lambda i, n, q, m: channel.send("start", qid=q.id, method=m),
                on_progress=lambda i, n, rec: channel.send("done", record=rec, counts=counts()),
                on_step=lambda s: channel.send("step", index=s.index, kind=s.kind, title=s.title),
            )
            if summary.stopped:
                break
            channel.send("idle", counts=counts())
        channel.send("end", counts=counts(), stopped=summary.stopped)
        return 0
    except KeyboardInterrupt:  # Ctrl-C reaches the whole process group: the parent stops everyone
        channel.send("end", counts=counts(), stopped=True)
        return 130
    except Exception as exc:
        traceback.print_exc(file=sys.stderr)
        message = str(exc).splitlines()[0] if str(exc) else ""
        channel.send("error", message=f"{type(exc).__name__}: {message}" if message else type(exc).__name__,
                     counts=counts())
        return 1


if __name__ == "__main__":  # pragma: no cover - run as a process by kgqa_core.eval.parallel
    sys.exit(main())
