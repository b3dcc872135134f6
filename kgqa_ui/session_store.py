"""A browser session's working state on disk, so F5, a deep link or a second tab loses nothing.

Why: Streamlit's session state lives in one websocket connection.  A reload
opens a new connection with an empty state, and the app used to load the
default sample in place of the user's uploaded graph, silently, and forget
the question, the gold answer and the topic entities.  Each session now has
an id in the URL (``?s=...``); what a person set up is written under the runs
folder::

    runs/sessions/<session id>.json        the record below (small, rewritten when it changes)
    runs/sessions/graphs/<fingerprint>.json an uploaded graph, with its triplet ids (once per graph)

A fresh connection whose URL names a record restores it, then continues under
a new id (so two tabs opened from one link do not overwrite each other).
Uploaded graphs are kept apart from the runs' snapshots: deleting a run must
not take the graph of a session still working on it.

Records come from disk and ids from URLs, so both are checked: an id outside
``[A-Za-z0-9_-]{8,40}`` is refused before touching the disk, and a record
whose fields have the wrong types is ignored (the session starts fresh).
No Streamlit here: the glue is `kgqa_ui.persist`.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kgqa_core.files import JsonProblem, atomic_write_text, loads_json, read_regular_file
from kgqa_core.graph.knowledge_graph import KnowledgeGraph

from .run_store import RunStore

SESSION_ID_RE = re.compile(r"^[A-Za-z0-9_-]{8,40}$")
MAX_RECORD_BYTES = 1_000_000
KEEP_SESSIONS = 300  # records beyond the newest this many are pruned (not their graphs: runs may share them)


def new_session_id() -> str:
    return secrets.token_urlsafe(9)


def valid_session_id(value: object) -> str | None:
    """``value`` when it is a well-formed session id (the whole string), else None."""
    return value if isinstance(value, str) and SESSION_ID_RE.fullmatch(value) else None


@dataclass
class SessionRecord:
    """What a person set up in one browser session (the parts that cannot be rebuilt from runs).

    ``graph`` says where the active graph came from: ``{"kind": "sample", "name": ...}``,
    ``{"kind": "snapshot", "fingerprint": ..., "name": ..., "origin": ...}`` (an upload, or the graph
    saved with a run) or ``{"kind": "sparql", "source": {...}, "origin": ...}``; ``{}`` when none.
    ``last_runs`` are the Ask page's result cards (run ids, never traces).
    """

    graph: dict[str, Any] = field(default_factory=dict)
    source_tab: str = ""
    question: str = ""
    gold_text: str = ""
    topics: list[str] = field(default_factory=list)
    extra_entities: list[str] = field(default_factory=list)
    methods: list[str] = field(default_factory=list)
    model: str = ""
    last_runs: list[dict[str, Any]] = field(default_factory=list)
    session_runs: list[str] = field(default_factory=list)
    vocabulary_text: str = ""  # the Ask page's relation vocabulary, as typed (it belongs to ``graph``)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> "SessionRecord | None":
        """The record, or None when anything has the wrong type (a damaged or foreign file)."""
        if not isinstance(data, dict):
            return None
        kinds = {"graph": dict, "source_tab": str, "question": str, "gold_text": str, "topics": list,
                 "extra_entities": list, "methods": list, "model": str, "last_runs": list, "session_runs": list,
                 "vocabulary_text": str}
        values: dict[str, Any] = {}
        for f in fields(cls):
            if f.name not in data:
                continue
            value = data[f.name]
            if not isinstance(value, kinds[f.name]):
                return None
            if kinds[f.name] is list and f.name != "last_runs" and not all(isinstance(x, str) for x in value):
                return None
            values[f.name] = value
        if not all(isinstance(r, dict) and isinstance(r.get("run_id") or "", str) for r in values.get("last_runs", [])):
            return None
        return cls(**values)


class SessionStore:
    """Session records and uploaded-graph snapshots under ``<runs>/sessions``."""

    def __init__(self, runs_root: str | Path) -> None:
        self.root = Path(runs_root).expanduser() / "sessions"
        self._graphs = RunStore(self.root)  # its graphs/ folder; no traces are ever saved there

    def path(self, session_id: str) -> Path:
        sid = valid_session_id(session_id)
        if sid is None:
            raise ValueError(f"not a valid session id: {session_id!r}")
        return self.root / f"{sid}.json"

    def load(self, session_id: str) -> SessionRecord | None:
        """The record saved under ``session_id``; None when the id is malformed, unknown or the file damaged."""
        if valid_session_id(session_id) is None:
            return None
        try:
            data = loads_json(read_regular_file(self.path(session_id), max_bytes=MAX_RECORD_BYTES).decode("utf-8"))
        except (OSError, ValueError, JsonProblem, UnicodeDecodeError):
            return None
        return SessionRecord.from_dict(data)

    def save(self, session_id: str, record: SessionRecord) -> Path:
        self.root.mkdir(parents=True, exist_ok=True)
        data = {**record.to_dict(), "saved_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        path = atomic_write_text(self.path(session_id), json.dumps(data, ensure_ascii=False))
        return path

    def prune(self, keep: int = KEEP_SESSIONS) -> int:
        """Delete all but the newest ``keep`` records; returns how many went."""
        if not self.root.is_dir():
            return 0
        records = sorted((p for p in self.root.glob("*.json") if valid_session_id(p.stem)),
                         key=lambda p: p.stat().st_mtime, reverse=True)
        for p in records[keep:]:
            p.unlink(missing_ok=True)
        return max(0, len(records) - keep)

    # ------------------------------------------------------------ graphs
    def save_graph(self, graph: KnowledgeGraph) -> str:
        """Keep an uploaded graph (with its triplet ids) for this session's reloads; returns its fingerprint."""
        self._graphs.save_graph(graph)
        return graph.fingerprint

    def load_graph(self, fingerprint: str, runs: RunStore | None = None) -> KnowledgeGraph | None:
        """An uploaded graph saved here, else the snapshot a run saved (``runs``); None when neither has it."""
        for store in (self._graphs, runs):
            if store is None:
                continue
            try:
                graph = store.load_graph(fingerprint)
            except (OSError, ValueError):  # a damaged snapshot (RunStoreError is a ValueError)
                graph = None
            if graph is not None:
                return graph
        return None
