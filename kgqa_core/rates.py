"""How fast this machine is, measured: prompt reading, writing and whole runs, per model and backend.

Why: a progress panel that says "about a minute per question" when a run
takes three, or an evaluation estimate that reuses 307 s per question from a
run on a 4,000-triplet graph for MetaQA questions that take 60-81 s, is worse
than none.  Every run the app or the evaluation makes leaves its measurements
here, and estimates come only from them, with the basis said in words:

* rates (units per second, recent measurements weigh more): prompt tokens
  read, tokens written, options scored, and the seconds a model takes to load;
  they give the time left of the activity going on now (`kgqa_core.progress`);
* whole runs: seconds per run of a method, keyed by its parameters and the
  size of the graph (half-decades of triplets: 200, 700, 4,000 and 130,000
  triplets are different sizes); the expected time of the next run is the
  median of the most similar recent runs, never of a graph ten times bigger.

The book is one JSON file per machine (``$KGQA_RATES_FILE``, else
``rates.json`` in the cache folder), shared by processes: observations are
kept in memory and merged into the file under a lock (`flush`).  A damaged or
foreign file is ignored (estimates start again), never fatal.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import statistics
import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .files import JsonProblem, atomic_write_text, cache_root, file_lock, loads_json
from .redact import mask_url_credentials

DECAY = 0.8          # weight of the older measurements at each new one (a rate follows the machine's load)
KEEP_RUNS = 400      # whole-run records kept per model and backend
SIMILAR_RUNS = 15    # the most recent similar runs an estimate takes the median of
MAX_BYTES = 4_000_000


def rates_path() -> Path:
    env = os.environ.get("KGQA_RATES_FILE")
    return Path(env).expanduser() if env else cache_root() / "rates.json"


def params_key(params: dict[str, Any] | None) -> str:
    """A short stable key of a run's parameters (two runs with the same values share it)."""
    text = json.dumps(params or {}, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def size_bucket(triplets: int | None) -> float | None:
    """Graph size in half-decades of triplets (673 -> 3.0, 3,977 -> 3.5, 133,582 -> 5.0); None when unknown."""
    if triplets is None or triplets < 0:
        return None
    return round(math.log10(max(int(triplets), 1)) * 2) / 2


def model_key(model: str, backend: str) -> str:
    """The book's key of a model on a backend (a model server's URL is kept without its credentials)."""
    return f"{mask_url_credentials(model or '?')}|{backend or '?'}"


@dataclass(frozen=True)
class Estimate:
    """An expected duration and what it rests on (said to the user)."""

    seconds: float
    basis: str
    runs: int = 0
    # the run split at its first prompt read (the big, cold one: a cached prefix makes it vary the most):
    # median seconds of that read, and of everything else; None when the runs did not record it
    first_prompt: float | None = None
    rest: float | None = None


@dataclass
class _Pending:
    rates: list[tuple[str, str, float, float]] = field(default_factory=list)  # (model key, kind, units, seconds)
    runs: list[tuple[str, dict[str, Any]]] = field(default_factory=list)       # (model key, record)


class RateBook:
    """The measurements of this machine; thread-safe; `flush` merges them into the shared file."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else rates_path()
        self._lock = threading.Lock()
        self._data = self._read()
        self._pending = _Pending()

    # ------------------------------------------------------------- storage
    def _read(self) -> dict[str, Any]:
        try:
            if not self.path.is_file() or self.path.stat().st_size > MAX_BYTES:
                return {"version": 1, "models": {}}
            data = loads_json(self.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, JsonProblem):
            return {"version": 1, "models": {}}
        if not isinstance(data, dict) or not isinstance(data.get("models"), dict):
            return {"version": 1, "models": {}}
        return data

    def reload(self) -> None:
        """Read what other processes flushed (keeps this process's unflushed observations)."""
        with self._lock:
            data = self._read()
            _apply(data, self._pending)
            self._data = data

    def flush(self) -> None:
        """Merge this process's new observations into the file (under a lock); errors cost only the rates."""
        with self._lock:
            pending, self._pending = self._pending, _Pending()
        if not pending.rates and not pending.runs:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with file_lock(self.path, timeout=30):
                data = self._read()
                _apply(data, pending)
                data["updated_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
                atomic_write_text(self.path, json.dumps(data, ensure_ascii=False))
        except Exception:  # noqa: BLE001 - a read-only cache folder, a lock timeout: only the rates are lost
            return
        with self._lock:
            fresh = self._read()
            _apply(fresh, self._pending)
            self._data = fresh

    # ------------------------------------------------------------ observing
    def observe_rate(self, model: str, backend: str, kind: str, units: float, seconds: float) -> None:
        """``units`` of ``kind`` done in ``seconds`` (a prompt read, a generation, a model load)."""
        if seconds <= 0 or units <= 0:
            return
        obs = (model_key(model, backend), kind, float(units), float(seconds))
        with self._lock:
            self._pending.rates.append(obs)
            _apply(self._data, _Pending(rates=[obs]))

    def observe_run(self, model: str, backend: str, method: str, params: dict[str, Any] | None,
                    graph_triplets: int | None, seconds: float, first_prompt: float | None = None) -> None:
        """A whole run that finished (not stopped, no error): what the next one's estimate rests on.

        ``first_prompt``: the seconds of its first prompt read, when measured (`kgqa_core.progress`).
        """
        if seconds <= 0:
            return
        record = {"method": method, "params": params_key(params), "size": graph_triplets,
                  "seconds": round(float(seconds), 3),
                  "at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        if first_prompt is not None and 0 <= first_prompt <= seconds:
            record["prompt"] = round(float(first_prompt), 3)
        obs = (model_key(model, backend), record)
        with self._lock:
            self._pending.runs.append(obs)
            _apply(self._data, _Pending(runs=[obs]))

    # ------------------------------------------------------------- reading
    def rate(self, model: str, backend: str, kind: str) -> float | None:
        """Units per second of ``kind`` (recent measurements weigh more); None before any was measured."""
        with self._lock:
            entry = self._data["models"].get(model_key(model, backend), {}).get("rates", {}).get(kind)
        if not isinstance(entry, dict):
            return None
        units, seconds = entry.get("units"), entry.get("seconds")
        if not isinstance(units, (int, float)) or not isinstance(seconds, (int, float)) or seconds <= 0:
            return None
        return units / seconds

    def runs(self, model: str, backend: str, method: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            rows = list(self._data["models"].get(model_key(model, backend), {}).get("runs", []))
        return [r for r in rows if isinstance(r, dict) and (method is None or r.get("method") == method)]

    def expected_run(self, model: str, backend: str, method: str, params: dict[str, Any] | None,
                     graph_triplets: int | None) -> Estimate | None:
        """The median seconds of the most similar recent runs of ``method``, or None when none is similar.

        Similar, best first: the same parameters on a graph of the same size (half-decade), then of
        the next size, then other parameters at the same size, then at the next size.  Runs on
        graphs further apart in size are never used: a big graph's run says nothing of a small one's.
        """
        rows = [r for r in self.runs(model, backend, method)
                if isinstance(r.get("seconds"), (int, float)) and r["seconds"] > 0]
        if not rows:
            return None
        want_params, want_size = params_key(params), size_bucket(graph_triplets)

        def size_gap(r: dict[str, Any]) -> float | None:
            have = size_bucket(r.get("size")) if isinstance(r.get("size"), int) else None
            if want_size is None or have is None:
                return 0.0 if want_size is None and have is None else None
            return abs(have - want_size)

        tiers = [(True, 0.0, "with these settings on graphs of this size"),
                 (True, 0.5, "with these settings on graphs of a similar size"),
                 (False, 0.0, "with other settings on graphs of this size"),
                 (False, 0.5, "with other settings on graphs of a similar size")]
        for same_params, max_gap, words in tiers:
            picked = [r for r in rows if (not same_params or r.get("params") == want_params)
                      and (gap := size_gap(r)) is not None and gap <= max_gap]
            if picked:
                recent = picked[-SIMILAR_RUNS:]
                secs = statistics.median(r["seconds"] for r in recent)
                split = [r for r in recent if isinstance(r.get("prompt"), (int, float))]
                first = rest = None
                if len(split) == len(recent):
                    first = statistics.median(r["prompt"] for r in split)
                    rest = statistics.median(r["seconds"] - r["prompt"] for r in split)
                return Estimate(secs, f"median of {len(recent)} run(s) of {method} here {words}", len(recent),
                                first, rest)
        return None


def _apply(data: dict[str, Any], pending: _Pending) -> None:
    """Fold observations into the book's data (decayed sums for rates; a bounded list of runs)."""
    models = data.setdefault("models", {})
    for key, kind, units, seconds in pending.rates:
        entry = models.setdefault(key, {})
        rates = entry.setdefault("rates", {}) if isinstance(entry, dict) else {}
        old = rates.get(kind) if isinstance(rates.get(kind), dict) else {}
        ou = old.get("units", 0.0) if isinstance(old.get("units"), (int, float)) else 0.0
        os_ = old.get("seconds", 0.0) if isinstance(old.get("seconds"), (int, float)) else 0.0
        n = old.get("n", 0) if isinstance(old.get("n"), int) else 0
        rates[kind] = {"units": DECAY * ou + units, "seconds": DECAY * os_ + seconds, "n": n + 1}
    for key, record in pending.runs:
        entry = models.setdefault(key, {})
        runs = entry.setdefault("runs", [])
        if not isinstance(runs, list):
            runs = entry["runs"] = []
        runs.append(record)
        del runs[:-KEEP_RUNS]


class RateListener:
    """A `kgqa_core.progress` listener that measures: finished activities become rates in ``book``.

    ``forward`` (the app's job panel) also hears every stage and activity; without it (the
    command line, a batch evaluation) nothing is shown and the rates are still kept.  A model
    load is measured by whoever loads it (`observe_rate` with ``LOAD``), not here.
    """

    def __init__(self, book: RateBook, model: str, backend: str, forward: Any = None) -> None:
        self.book, self.model, self.backend, self.forward = book, model, backend, forward
        self.first_prompt: float | None = None  # seconds of the run's first prompt read (`observe_run`)
        self.load_seconds = 0.0  # one-off loads inside the run (the entity-similarity model, once per process)

    def reset(self) -> None:
        """A new run starts (an evaluation's next question)."""
        self.first_prompt = None
        self.load_seconds = 0.0

    def typical(self, seconds: float) -> float:
        """A run's seconds without its one-off loads: what the next run like it will take."""
        return max(0.0, seconds - self.load_seconds)

    def stage(self, label: str) -> None:
        if self.forward is not None:
            self.forward.stage(label)

    def activity(self, act: Any) -> None:
        if self.forward is not None:
            self.forward.activity(act)

    def measured(self, kind: str, units: int, seconds: float) -> None:
        if kind == "prompt" and self.first_prompt is None:
            self.first_prompt = seconds
        if kind == "load":
            self.load_seconds += seconds
        else:
            self.book.observe_rate(self.model, self.backend, kind, units, seconds)
        if self.forward is not None:
            self.forward.measured(kind, units, seconds)


def graph_size(graph: Any) -> int | None:
    """Triplets of a local graph (what an estimate is keyed by); None for a remote store or anything else."""
    if graph is None or not getattr(graph, "is_local", True):
        return None
    try:
        return len(graph)
    except TypeError:
        return None


_BOOK: RateBook | None = None
_BOOK_LOCK = threading.Lock()


def shared_book() -> RateBook:
    """This process's book (one per rates file), re-read when the file names another place."""
    global _BOOK
    with _BOOK_LOCK:
        if _BOOK is None or _BOOK.path != rates_path():
            _BOOK = RateBook()
        return _BOOK
