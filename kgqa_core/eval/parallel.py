"""Both cores in one evaluation: worker processes that take an evaluation's questions one at a time.

Why worker processes: decoding on a small CPU is memory-bound and a DoG
question is mostly a chain of short sequential model calls, so one process
with two threads leaves a core waiting between calls; two processes with one
thread each keep both busy (``benchmarks/parallel_eval.py`` measures it).
llama.cpp maps the GGUF file, so the workers share the weights' pages: a
worker costs its own KV cache and Python, not a second copy of the model.
The alternatives were weighed and left: parallel sequences in one llama.cpp
context would need every method's decoding to batch across questions, and
``llama_cpp.server`` serves one request at a time (no parallel slots).

How: the parent checks the run (`runner.plan_eval`) and starts ``n`` worker
processes (``python -m kgqa_core.eval.worker``) with ``KGQA_THREADS`` = cores
/ ``n``.  Each loads the model once and then asks for work: the parent hands
out the pending questions one at a time in dataset order (a question's methods
run in one worker and share its prompt cache), so a worker that drew short
questions takes more of them.  Workers append to the same ``results.jsonl``
under its lock (the ``--shard`` machinery), so nothing is recorded twice and
a stopped or crashed run resumes like any other; the parent writes the one
summary, its records in dataset order.

The parent hears every worker on a pipe of JSON lines: pairs started and
finished (``on_start``, ``on_progress`` with the counts of all workers) and
the phases of the first worker still running (``listener``, ``on_step``), so
the CLI's bar and the app's job panel work as for one process.  Stop (the
caller's ``should_stop``) is passed to every worker, which stops after its
current step; Ctrl-C stops them all and a worker still running after a grace
period is killed.  A worker that fails is reported with its message and the
others go on with the remaining questions.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from .runner import EvalPlan, EvalQuestion, ProgressFn

EVENT_PREFIX = "@kgqa-worker "  # marks the worker's event lines on its stdout (anything else printed is ignored)
MAX_WORKERS = 64
STOP_GRACE_SECONDS = 10.0  # after Ctrl-C, how long workers get to stop before they are killed


class WorkersError(ValueError):
    """A ``--workers`` value that is not ``auto`` or a whole number in range."""


class WorkerFailure(RuntimeError):
    """Every worker of a parallel evaluation failed before recording anything (e.g. the model would not load)."""


def parse_workers(value: Any) -> int | None:
    """``auto`` (None) or a whole number of workers from 1 to `MAX_WORKERS`; anything else is refused by name."""
    text = str(value).strip().lower()
    if text == "auto":
        return None
    try:
        n = int(text)
    except ValueError:
        n = 0
    if isinstance(value, bool) or not 1 <= n <= MAX_WORKERS or str(n) != text.lstrip("+"):
        raise WorkersError(f"--workers must be 'auto' or a whole number from 1 to {MAX_WORKERS}, got {value!r}")
    return n


def explicit_threads() -> int | None:
    """``$KGQA_THREADS`` when it is set to a positive whole number: the threads a worker should use."""
    text = os.environ.get("KGQA_THREADS", "").strip()
    return int(text) if text.isdigit() and int(text) > 0 else None


def cores() -> int:
    """Physical cores this process may use (llama.cpp's own count: hyper-threads do not speed it up)."""
    from ..models.llama_model import physical_cores

    return physical_cores()


CORES_PER_WORKER = 4  # physical cores a worker process must have to itself before ``auto`` starts a second


def auto_workers(backend: str, server: bool = False) -> int:
    """How many workers ``auto`` means: one per `CORES_PER_WORKER` physical cores, for an in-process llama.cpp model.

    Measured on the idle 2-core machine (benchmarks/parallel_eval.py, docs/benchmarks.md): two one-thread
    workers answered 0.88x the questions per minute of one two-thread process; llama.cpp already keeps both
    cores busy (decoding is memory-bound: a second process shares the same memory bandwidth), and each
    worker loads its own context.  So ``auto`` runs one process below `CORES_PER_WORKER` * 2 cores, where a
    process's threads stop scaling.  A model server has its own parallelism (one worker feeds it), and the
    transformers backend already spreads one forward pass over every core, so both get one worker.
    """
    if server or backend != "llama.cpp":
        return 1
    return max(1, cores() // max(CORES_PER_WORKER, explicit_threads() or 1))


def threads_per_worker(workers: int) -> int:
    """``$KGQA_THREADS`` when set, else an even share of the physical cores (at least one)."""
    return explicit_threads() or max(1, cores() // max(1, workers))


def resolve_workers(value: Any, backend: str | None = None, server: bool = False) -> int:
    """The number of worker processes for ``value`` (``auto`` or a number; see `parse_workers`, `auto_workers`)."""
    n = parse_workers(value)
    if n is not None:
        return n
    if backend is None:
        from ..models.backends import default_backend

        backend = default_backend()
    return auto_workers(backend, server)


def importable_methods(methods: Sequence[str]) -> bool:
    """Whether a new process can import every method's module (one registered at run time from no file cannot)."""
    from ..methods.base import METHODS

    for m in methods:
        module = sys.modules.get(METHODS.get(m, ""))
        if module is not None and getattr(module, "__file__", None) is None:
            return False
    return True


@dataclass
class _Worker:
    """One worker process and what the parent knows of it."""

    number: int
    proc: subprocess.Popen
    stderr: Any  # the temporary file its stderr goes to (read back when it fails)
    ready: bool = False
    ended: bool = False  # it said goodbye ("end" or "error")
    exited: bool = False
    error: str = ""
    counts: dict[str, int] = field(default_factory=lambda: {"ran": 0, "skipped": 0, "failed": 0})

    def send(self, command: dict[str, Any]) -> None:
        try:
            self.proc.stdin.write(json.dumps(command) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):  # it has gone; its exit is reported by the reader
            pass

    def stderr_tail(self, lines: int = 3) -> str:
        try:
            self.stderr.seek(0)
            text = self.stderr.read().decode("utf-8", errors="replace")
        except (OSError, ValueError):
            return ""
        kept = [ln for ln in text.splitlines() if ln.strip()]
        return " | ".join(kept[-lines:])


def _worker_command() -> list[str]:
    return [sys.executable, "-m", "kgqa_core.eval.worker"]


def _worker_env(threads: int) -> dict[str, str]:
    env = dict(os.environ)
    env["KGQA_THREADS"] = str(threads)
    env["OMP_NUM_THREADS"] = str(threads)
    root = str(Path(__file__).resolve().parents[2])  # the folder holding kgqa_core, wherever the parent runs
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _read_events(worker: _Worker, events: "queue.Queue[tuple[int, dict[str, Any]]]") -> None:
    """Pass a worker's event lines to the parent's queue; its end of output says it exited."""
    try:
        for line in worker.proc.stdout:
            if line.startswith(EVENT_PREFIX):
                try:
                    events.put((worker.number, json.loads(line[len(EVENT_PREFIX):])))
                except json.JSONDecodeError:
                    pass
    except (OSError, ValueError):
        pass
    events.put((worker.number, {"e": "exit"}))


def run_workers(
    plan: EvalPlan, workers: int, *, backend: str | None = None, progress: bool = False,
    on_progress: ProgressFn | None = None, on_start: Callable[[int, int, EvalQuestion, str], None] | None = None,
    should_stop: Callable[[], bool] | None = None, on_step: Callable[[Any], None] | None = None,
    listener: Any = None, threads: int | None = None, load_name: str | None = None,
) -> None:
    """Run ``plan``'s pending pairs on ``workers`` processes; counts, ``stopped`` and failures go to ``plan.summary``.

    Each worker loads ``load_name`` (default: the plan's model label) on ``backend`` with ``threads``
    threads (default: `threads_per_worker`).  Raises `WorkerFailure` when every worker failed and
    nothing was recorded (the first worker's message), and re-raises KeyboardInterrupt after
    stopping them all.
    """
    from tqdm.auto import tqdm

    summary = plan.summary
    qids = list(dict.fromkeys(q.id for q, _ in plan.pending))
    by_id = {q.id: q for q, _ in plan.pending}
    n = max(1, min(workers, len(qids)))
    threads = threads or threads_per_worker(n)
    spec = {
        "dataset": str(plan.dataset_path.resolve()),
        "methods": plan.methods,
        "model": summary.model,
        "load": load_name or plan.model_label,
        "backend": backend,
        "out_dir": str(plan.out_dir.resolve()),
        "params": plan.params,
        "seed": plan.seed,
        "vocabulary": plan.vocabulary.to_dict() if plan.vocabulary else None,
    }
    events: "queue.Queue[tuple[int, dict[str, Any]]]" = queue.Queue()
    pool: list[_Worker] = []
    todo = list(qids)
    total = len(plan.pending)
    started = finished = 0
    stopping = False
    bar = tqdm(total=total, disable=not progress, unit="run", desc=f"eval ({n} workers)", dynamic_ncols=True)

    def stop_all() -> None:
        for w in pool:
            if not w.exited:
                w.send({"stop": True})

    def followed() -> int | None:
        alive = [w.number for w in pool if not w.exited and not w.ended]
        return min(alive) if alive else None

    def give_work(w: _Worker) -> None:
        if todo and not stopping:
            w.send({"q": todo.pop(0)})
        else:
            w.send({"stop": True})

    try:
        for k in range(1, n + 1):
            err = tempfile.TemporaryFile()
            proc = subprocess.Popen(
                _worker_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True,
                encoding="utf-8", errors="replace", bufsize=1, env=_worker_env(threads),
                start_new_session=False,
            )
            w = _Worker(k, proc, err)
            pool.append(w)
            w.send(spec)
            threading.Thread(target=_read_events, args=(w, events), name=f"kgqa-eval-worker-{k}", daemon=True).start()
        while not all(w.exited for w in pool):
            if not stopping and should_stop is not None and should_stop():
                stopping = True
                summary.stopped = True
                stop_all()
            try:
                k, ev = events.get(timeout=0.2)
            except queue.Empty:
                continue
            w = pool[k - 1]
            kind = ev.get("e")
            lead = followed() == k
            if kind == "ready":
                w.ready = True
                summary.backend = summary.backend or str(ev.get("backend") or "")
                give_work(w)
            elif kind == "idle":
                w.counts = ev.get("counts", w.counts)
                give_work(w)
            elif kind == "start":
                started += 1
                q = by_id.get(ev.get("qid"))
                if on_start is not None and q is not None:
                    on_start(started, total, q, str(ev.get("method")))
            elif kind == "done":
                finished += 1
                w.counts = ev.get("counts", w.counts)
                bar.update(1)
                if on_progress is not None:
                    on_progress(finished, total, ev["record"])
            elif kind == "step" and lead and on_step is not None:
                from ..trace.schema import Step

                on_step(Step(index=int(ev.get("index", 0)), kind=str(ev.get("kind", "")),
                             title=str(ev.get("title", ""))))
            elif kind in ("stage", "activity", "measured") and lead and listener is not None:
                _forward(listener, ev)
            elif kind == "end":
                w.ended = True
                w.counts = ev.get("counts", w.counts)
                summary.stopped = summary.stopped or bool(ev.get("stopped"))
            elif kind == "error":
                w.ended = True
                w.counts = ev.get("counts", w.counts)
                w.error = str(ev.get("message") or "failed")
            elif kind == "exit":
                w.exited = True
                code = w.proc.wait()
                if not w.error and code != 0 and not (stopping and code in (130, -signal.SIGINT, -signal.SIGTERM)):
                    tail = w.stderr_tail()
                    w.error = f"ended with exit code {code}" + (f": {tail}" if tail else "")
                if listener is not None and followed() is not None and lead:
                    listener.activity(None)  # the panel follows the next worker from its next phase
    except BaseException:
        stopping = True
        stop_all()
        _wait_or_kill(pool, STOP_GRACE_SECONDS)
        raise
    finally:
        bar.close()
        _wait_or_kill(pool, 0.0)
        for w in pool:
            w.stderr.close()
    for w in pool:
        summary.ran += w.counts.get("ran", 0)
        summary.skipped += w.counts.get("skipped", 0)
        summary.failed += w.counts.get("failed", 0)
        if w.error:
            summary.worker_errors.append(f"worker {w.number} of {n}: {w.error}")
    if summary.worker_errors and len(summary.worker_errors) == n and finished == 0 and not stopping:
        raise WorkerFailure(summary.worker_errors[0])


def _forward(listener: Any, ev: dict[str, Any]) -> None:
    from .. import progress as phases

    kind = ev["e"]
    if kind == "stage":
        listener.stage(str(ev.get("label", "")))
    elif kind == "activity":
        act = ev.get("act")
        listener.activity(phases.Activity(**act) if isinstance(act, dict) else None)
    else:
        listener.measured(str(ev.get("kind", "")), int(ev.get("units", 0)), float(ev.get("seconds", 0.0)))


def _wait_or_kill(pool: Sequence[_Worker], grace: float) -> None:
    """Wait up to ``grace`` seconds for the workers to end, then kill the rest (they never outlive the parent)."""
    deadline = time.monotonic() + grace
    for w in pool:
        try:
            w.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            w.proc.kill()
            w.proc.wait()
        for stream in (w.proc.stdin,):
            try:
                stream.close()
            except (OSError, ValueError):
                pass
