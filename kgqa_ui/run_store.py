"""Every run's trace on disk, so a browser refresh or a restart loses nothing.

Layout of the runs directory::

    runs/<run_id>.json                 one trace per run (kgqa_core trace JSON)
    runs/graphs/<fingerprint>.json     the graph each trace ran on, once per fingerprint

The graph snapshot keeps triplet ids (an edited graph from the Explore page has
gaps where triplets were removed), because traces cite triplets by id.  Run ids
come from URLs (``?run=...``), so they are validated before touching the disk.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.trace.schema import Trace, TraceFormatError, load_trace, save_trace

RUN_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,120}$")
_GAP = "\x00kgqa-gap"


def default_runs_dir() -> Path:
    """$KGQA_RUNS_DIR, else ``runs/`` beside app.py."""
    env = os.environ.get("KGQA_RUNS_DIR")
    return Path(env).expanduser() if env else Path(__file__).resolve().parent.parent / "runs"


@dataclass
class RunInfo:
    """What the Runs page lists, read from the trace file."""

    run_id: str
    path: Path
    method: str
    question: str
    model: str
    answers: list[str]
    created_at: str
    seconds: float
    graph_name: str
    graph_fingerprint: str
    n_steps: int
    error: str
    has_graph: bool


class RunStoreError(ValueError):
    """A run id that is malformed or does not exist."""


class RunStore:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root).expanduser()
        self.problems: list[str] = []

    # ------------------------------------------------------------- paths
    @property
    def graphs_dir(self) -> Path:
        return self.root / "graphs"

    def path(self, run_id: str) -> Path:
        if not isinstance(run_id, str) or not RUN_ID_RE.match(run_id) or ".." in run_id:
            raise RunStoreError(f"not a valid run id: {run_id!r}")
        return self.root / f"{run_id}.json"

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
        run_id = run_id or self.new_run_id(trace)
        path = save_trace(trace, self.path(run_id))
        return self._info(run_id, path, trace)

    def save_graph(self, graph: KnowledgeGraph) -> Path:
        path = self.graph_path(graph.fingerprint)
        if path.exists():
            return path
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {
            "name": graph.name,
            "source": getattr(graph, "source", ""),
            "fingerprint": graph.fingerprint,
            "triplets": [[t.id, t.head, t.relation, t.tail] for t in sorted(graph, key=lambda t: t.id)],
        }
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        tmp.replace(path)
        return path

    # ----------------------------------------------------------- reading
    def list(self) -> list[RunInfo]:
        """All saved runs, newest first; unreadable files are skipped and noted in ``problems``."""
        self.problems = []
        if not self.root.is_dir():
            return []
        out = []
        for path in self.root.glob("*.json"):
            run_id = path.stem
            if not RUN_ID_RE.match(run_id):
                continue
            try:
                trace = load_trace(path)
            except (TraceFormatError, OSError, TypeError, KeyError, ValueError) as exc:
                self.problems.append(f"{path.name}: {exc}")
                continue
            out.append(self._info(run_id, path, trace))
        out.sort(key=lambda r: (r.created_at, r.run_id), reverse=True)
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
        data = json.loads(path.read_text(encoding="utf-8"))
        graph = KnowledgeGraph(name=data.get("name") or "graph")
        # Ids are assigned in insertion order and never reused, so filling gaps with
        # placeholder triplets and removing them reproduces the original ids.
        gaps = []
        next_id = 0
        for tid, h, r, t in sorted(data["triplets"], key=lambda row: row[0]):
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
        except TraceFormatError:
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
        except (TypeError, KeyError, ValueError) as exc:
            raise TraceFormatError(f"{name}: not a trace this workbench can read ({exc})") from None
        return self.save(trace)

    def _info(self, run_id: str, path: Path, trace: Trace) -> RunInfo:
        has_graph = False
        if trace.graph_fingerprint:
            try:
                has_graph = self.graph_path(trace.graph_fingerprint).is_file()
            except RunStoreError:
                has_graph = False
        return RunInfo(
            run_id=run_id, path=path, method=trace.method, question=trace.question, model=trace.model,
            answers=trace.answer_texts, created_at=trace.created_at, seconds=trace.seconds,
            graph_name=trace.graph_name, graph_fingerprint=trace.graph_fingerprint,
            n_steps=len(trace.steps), error=trace.error, has_graph=has_graph,
        )
