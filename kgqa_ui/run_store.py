"""Every run's trace on disk, so a browser refresh or a restart loses nothing.

Layout of the runs directory::

    runs/<run_id>.json                 one trace per run (kgqa_core trace JSON)
    runs/graphs/<fingerprint>.json     the graph each trace ran on, once per fingerprint

The graph snapshot keeps triplet ids (an edited graph from the Explore page has
gaps where triplets were removed), because traces cite triplets by id.  Run ids
come from URLs (``?run=...``), so they are validated before touching the disk
(the whole id: a trailing newline or any character outside ``[A-Za-z0-9._-]``
is refused).

Safe under concurrency: two processes (eval shards, two browser tabs) may save
at once; every file is written to a unique temp name and renamed into place.
Safe to read: every trace is validated against the schema on load; a file
that fails is listed in ``damaged`` (with the reason and the field) and can be
deleted, while every other run still lists and opens.  Runs carry no absolute
paths of this machine (see `kgqa_core.files.scrub_machine_paths`).
"""

from __future__ import annotations

import json
import os
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from kgqa_core.files import JsonProblem, atomic_write_text, loads_json, read_regular_file, trace_without_machine_paths
from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.trace.schema import Trace, TraceFormatError, load_trace, save_trace

RUN_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,120}$")
_GAP = "\x00kgqa-gap"


def default_runs_dir() -> Path:
    """$KGQA_RUNS_DIR, else ``runs/`` beside app.py."""
    env = os.environ.get("KGQA_RUNS_DIR")
    return Path(env).expanduser() if env else Path(__file__).resolve().parent.parent / "runs"


@dataclass(frozen=True)
class TraceListing:
    """What the list needs from one trace file (kept so an unchanged file is not re-read at every page run)."""

    method: str
    question: str
    model: str
    answer_texts: tuple[str, ...]
    created_at: str
    seconds: float
    graph_name: str
    graph_fingerprint: str
    n_steps: int
    error: str
    gold_answers: tuple[str, ...]  # saved with the run (empty for a run without gold, or an older trace)
    correct: str                   # the gold verdict in words ("" without gold)
    stopped: bool

    @classmethod
    def of(cls, trace: Trace) -> "TraceListing":
        from kgqa_core.trace.gold import grade

        verdict = grade(trace.answers, trace.gold_answers)
        return cls(
            method=trace.method, question=trace.question, model=trace.model,
            answer_texts=tuple(trace.answer_texts), created_at=trace.created_at, seconds=trace.seconds,
            graph_name=trace.graph_name, graph_fingerprint=trace.graph_fingerprint,
            n_steps=len(trace.steps), error=trace.error, gold_answers=tuple(trace.gold_answers),
            correct=verdict.text if verdict is not None else "", stopped=trace.stopped,
        )


@dataclass(frozen=True)
class RunInfo(TraceListing):
    """What the Runs page lists: a trace file's listing, where it is, and whether its graph is saved."""

    run_id: str
    path: Path
    has_graph: bool

    @property
    def answers(self) -> list[str]:
        return list(self.answer_texts)


@dataclass
class DamagedRun:
    """A file in the runs folder that is not a valid trace: listed so it can be deleted."""

    run_id: str
    path: Path
    problem: str


class RunStoreError(ValueError):
    """A run id that is malformed or does not exist."""


def check_run_id(run_id: object) -> str:
    """``run_id`` if it is a valid run id (the whole string), else `RunStoreError`."""
    if not isinstance(run_id, str) or not RUN_ID_RE.fullmatch(run_id) or ".." in run_id:
        raise RunStoreError(f"not a valid run id: {run_id!r} (letters, digits, '.', '_' and '-' only)")
    return run_id


class RunStore:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).expanduser()
        self.problems: list[str] = []
        self.damaged: list[DamagedRun] = []

    # ------------------------------------------------------------- paths
    @property
    def graphs_dir(self) -> Path:
        return self.root / "graphs"

    def path(self, run_id: str) -> Path:
        return self.root / f"{check_run_id(run_id)}.json"

    def graph_path(self, fingerprint: str) -> Path:
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", fingerprint or ""):
            raise RunStoreError(f"not a valid graph fingerprint: {fingerprint!r}")
        return self.graphs_dir / f"{fingerprint}.json"

    # ------------------------------------------------------------ saving
    def new_run_id(self, trace: Trace) -> str:
        stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
        method = re.sub(r"[^A-Za-z0-9]+", "", trace.method or "run")[:16] or "run"
        return f"{stamp}-{method}-{secrets.token_hex(3)}"

    def save(self, trace: Trace, graph: KnowledgeGraph | None = None, run_id: str | None = None) -> RunInfo:
        """Save a trace (and its graph, once per fingerprint); returns its listing."""
        if not trace.created_at:
            trace.created_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
        if graph is not None and not getattr(graph, "is_local", True):
            from kgqa_core.methods.on_store import fetched_graph

            graph = fetched_graph(trace)  # a store: save the subgraph the run fetched, not the endpoint
        if graph is not None:
            if not trace.graph_fingerprint:
                trace.graph_fingerprint = graph.fingerprint
            self.save_graph(graph)
        run_id = check_run_id(run_id) if run_id is not None else self.new_run_id(trace)
        trace = trace_without_machine_paths(trace)
        path = save_trace(trace, self.path(run_id))
        return self._info(run_id, path, TraceListing.of(trace))

    def save_graph(self, graph: KnowledgeGraph) -> Path:
        path = self.graph_path(graph.fingerprint)
        if path.exists():
            return path
        data = {
            "name": graph.name,
            "source": Path(getattr(graph, "source", "") or "").name,  # a file name, never a machine path
            "fingerprint": graph.fingerprint,
            "triplets": [[t.id, t.head, t.relation, t.tail] for t in sorted(graph, key=lambda t: t.id)],
        }
        atomic_write_text(path, json.dumps(data, ensure_ascii=False))
        return path

    # ----------------------------------------------------------- reading
    def list(self) -> list[RunInfo]:
        """All valid runs, newest first; damaged files go to ``damaged`` (and ``problems``)."""
        self.problems = []
        self.damaged = []
        if not self.root.is_dir():
            return []
        out = []
        for path in self.root.glob("*.json"):
            run_id = path.stem
            if not RUN_ID_RE.fullmatch(run_id):
                continue
            listed = _listing(path)
            if isinstance(listed, str):
                self.damaged.append(DamagedRun(run_id, path, listed))
                self.problems.append(f"{path.name}: {listed}")
                continue
            out.append(self._info(run_id, path, listed))
        out.sort(key=lambda r: (r.created_at, r.run_id), reverse=True)
        self.damaged.sort(key=lambda d: d.run_id)
        return out

    def load(self, run_id: str) -> Trace:
        path = self.path(run_id)
        if not path.is_file():
            raise RunStoreError(f"no saved run {run_id!r} in {self.root}")
        return load_trace(path)

    def load_graph(self, fingerprint: str) -> KnowledgeGraph | None:
        """The graph a trace ran on, with its original triplet ids; None if not saved."""
        try:
            path = self.graph_path(fingerprint)
        except RunStoreError:
            return None
        if not path.is_file():
            return None
        data = _read_snapshot(path)
        graph = KnowledgeGraph(name=data.get("name") or "graph")
        # Ids are assigned in insertion order and never reused, so filling gaps with
        # placeholder triplets and removing them reproduces the original ids.
        gaps = []
        next_id = 0
        for tid, h, r, t in sorted(data["triplets"], key=lambda row: row[0]):  # rows checked on read
            while next_id < tid:
                gaps.append(graph.add(_GAP, _GAP, str(next_id)).id)
                next_id += 1
            graph.add(h, r, t)
            next_id += 1
        for gid in gaps:
            graph.remove(gid)
        graph.source = data.get("source", "")
        return graph

    def delete(self, run_id: str) -> None:
        """Delete a run; its graph snapshot goes too once no other run uses it."""
        path = self.path(run_id)
        if not path.is_file():
            raise RunStoreError(f"no saved run {run_id!r} in {self.root}")
        try:
            fingerprint = load_trace(path).graph_fingerprint
        except (TraceFormatError, OSError, ValueError):  # a damaged run is deleted all the same
            fingerprint = ""
        path.unlink()
        if fingerprint and not any(r.graph_fingerprint == fingerprint for r in self.list()):
            try:
                self.graph_path(fingerprint).unlink(missing_ok=True)
            except RunStoreError:
                pass

    def import_trace(self, text: str, name: str = "uploaded") -> RunInfo:
        """Save an uploaded trace JSON as a new run (raises TraceFormatError with the reason)."""
        try:
            trace = Trace.from_json(text)
        except TraceFormatError as exc:
            raise TraceFormatError(f"{name}: {exc}") from None
        return self.save(trace)

    def _info(self, run_id: str, path: Path, listing: "TraceListing") -> RunInfo:
        has_graph = False
        if listing.graph_fingerprint:
            try:
                has_graph = self.graph_path(listing.graph_fingerprint).is_file()
            except RunStoreError:
                has_graph = False
        return RunInfo(**vars(listing), run_id=run_id, path=path, has_graph=has_graph)


_LISTINGS: dict[tuple[str, int, int], "TraceListing | str"] = {}
_LISTINGS_MAX = 20_000


def _listing(path: Path) -> "TraceListing | str":
    """The listing of a trace file, or the reason it is damaged; cached by (path, mtime, size)."""
    try:
        st = path.stat()
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}"
    key = (str(path), st.st_mtime_ns, st.st_size)
    cached = _LISTINGS.get(key)
    if cached is not None:
        return cached
    try:
        trace = load_trace(path)
    except (TraceFormatError, OSError, ValueError) as exc:
        result: TraceListing | str = str(exc)
        prefix = f"{path}: "
        if result.startswith(prefix):
            result = result[len(prefix):]
    else:
        result = TraceListing.of(trace)
    if len(_LISTINGS) >= _LISTINGS_MAX:
        _LISTINGS.clear()
    _LISTINGS[key] = result
    return result


def _read_snapshot(path: Path) -> dict:
    """A graph snapshot's JSON, checked: {"name", "source", "triplets": [[id, h, r, t], ...]}."""
    try:
        data = loads_json(read_regular_file(path).decode("utf-8"))
    except (JsonProblem, UnicodeDecodeError, ValueError) as exc:
        raise RunStoreError(f"graph snapshot {path.name} is damaged: {exc}") from None
    rows = data.get("triplets") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        raise RunStoreError(f"graph snapshot {path.name} is damaged: no 'triplets' list")
    for i, row in enumerate(rows):
        if not (isinstance(row, list) and len(row) == 4 and isinstance(row[0], int) and not isinstance(row[0], bool)
                and row[0] >= 0 and all(isinstance(x, str) for x in row[1:])):
            raise RunStoreError(f"graph snapshot {path.name} is damaged: triplets[{i}] is not [id, head, relation, tail]")
        if row[0] > 4 * len(rows) + 1_000_000:  # ids are dense up to removed gaps; refuse absurd ones
            raise RunStoreError(f"graph snapshot {path.name} is damaged: triplets[{i}] has id {row[0]}")
    if not isinstance(data.get("name", ""), str) or not isinstance(data.get("source", ""), str):
        raise RunStoreError(f"graph snapshot {path.name} is damaged: 'name' and 'source' must be strings")
    return data
