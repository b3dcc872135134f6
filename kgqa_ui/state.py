"""Session state shared by the pages: the active graph, settings, the run store.

Pages never keep the only copy of anything valuable in session state: traces
are written to the run store as soon as a run finishes, and the selected run
is in the URL (``?run=...``), so a browser refresh loses nothing.  What
session state holds (the loaded graph, an edited copy) can be rebuilt: the
default sample is loaded on a fresh session and graph snapshots are on disk.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st

from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.trace.schema import Trace

from .run_store import RunStore, RunStoreError, default_runs_dir

DEFAULT_SAMPLE = "metaqa_movies"
DEFAULT_MAX_NODES = 300
DEFAULT_CONTEXT = 30


DEFAULT_UPLOAD_MB = 50.0
MAX_UPLOAD_MB = 100_000.0


def upload_limit_mb() -> float:
    """Largest graph upload the Ask page accepts: $KGQA_MAX_UPLOAD_MB, default 50 MB.

    The graph uploader passes this limit to Streamlit (``max_upload_size``), so the
    number the upload box shows is the one the app applies; ``server.maxUploadSize``
    in .streamlit/config.toml is set to the same default for the other upload boxes.
    """
    raw = os.environ.get("KGQA_MAX_UPLOAD_MB", "")
    try:
        value = float(raw) if raw.strip() else DEFAULT_UPLOAD_MB
    except ValueError:
        return DEFAULT_UPLOAD_MB
    # nan, inf and absurd sizes fall back to the default (inf would break the uploader's own limit)
    return value if math.isfinite(value) and 0 < value <= MAX_UPLOAD_MB else DEFAULT_UPLOAD_MB


def parse_gold(text: str) -> list[str]:
    """Gold answers typed as ``a | b | c`` (names may hold commas, so ``|`` separates them); as ``ask --gold``."""
    from kgqa_core.questions import parse_gold as parse

    return parse(text)


@dataclass
class Settings:
    runs_dir: Path
    max_nodes: int
    context: int


def settings() -> Settings:
    ss = st.session_state
    return Settings(
        runs_dir=Path(ss.get("set_runs_dir") or default_runs_dir()).expanduser(),
        max_nodes=int(ss.get("set_max_nodes") or DEFAULT_MAX_NODES),
        context=int(ss.get("set_context", DEFAULT_CONTEXT)),
    )


def store() -> RunStore:
    return RunStore(settings().runs_dir)


# ------------------------------------------------------------ active graph
def active_graph() -> KnowledgeGraph | None:
    return st.session_state.get("graph")


def set_graph(graph: KnowledgeGraph, origin: str, questions: list | None = None, attribution: str = "") -> None:
    ss = st.session_state
    _drop_vocabulary_of_another_graph(graph)
    ss["graph"] = graph
    ss["graph_origin"] = origin
    ss["sample_questions"] = list(questions or [])
    ss["graph_attribution"] = attribution
    ss.pop("edited_graph", None)
    ss["edit_log"] = []
    ss["edit_changes"] = []
    ss.pop("explore_expanded", None)
    ss.pop("restore_note", None)  # the note named the graph this one replaces
    ss.pop("sparql_source", None)


# ------------------------------------------------------- relation vocabulary
VOCABULARY_KEY = "graph_vocabulary"  # the RelationVocabulary in force for the loaded graph (None: none)
VOCABULARY_GRAPH_KEY = "graph_vocabulary_of"  # the fingerprint of the graph it was given for
VOCABULARY_TEXT_KEY = "ask_vocab_text"  # the Ask page's text area
VOCABULARY_NOTE_KEY = "graph_vocabulary_note"  # why a vocabulary was cleared (shown once on the Ask page)


def graph_vocabulary() -> Any:
    """The user's relation vocabulary for the loaded graph, or None (passed to every run)."""
    vocab = st.session_state.get(VOCABULARY_KEY)
    return vocab if vocab else None


def set_vocabulary(vocabulary: Any) -> None:
    """Keep `vocabulary` (a `RelationVocabulary`, or None to clear it) with the loaded graph."""
    graph = active_graph()
    st.session_state[VOCABULARY_KEY] = vocabulary if vocabulary else None
    st.session_state[VOCABULARY_GRAPH_KEY] = getattr(graph, "fingerprint", None) if vocabulary else None


def _drop_vocabulary_of_another_graph(graph: Any) -> None:
    """A vocabulary belongs to its graph: loading another graph clears it (and its text), with a note."""
    ss = st.session_state
    owner = ss.get(VOCABULARY_GRAPH_KEY)
    if owner is not None and owner == getattr(graph, "fingerprint", None):
        return
    had = ss.get(VOCABULARY_KEY) or (ss.get(VOCABULARY_TEXT_KEY) or "").strip()
    old = active_graph()
    for key in (VOCABULARY_KEY, VOCABULARY_GRAPH_KEY, VOCABULARY_TEXT_KEY, "ask_vocab_upload_done"):
        ss.pop(key, None)
    if had and old is not None:
        ss[VOCABULARY_NOTE_KEY] = (f"The relation vocabulary was cleared: it belonged to the graph {old.name}, "
                                   f"and {getattr(graph, 'name', 'the new graph')} is loaded now.")


def ensure_graph() -> KnowledgeGraph | None:
    """The active graph, loading the default sample on a fresh session."""
    graph = active_graph()
    if graph is not None or st.session_state.get("graph_autoload_failed"):
        return graph
    try:
        load_sample_into_state(DEFAULT_SAMPLE)
    except Exception as exc:  # a missing sample folder must not break every page
        st.session_state["graph_autoload_failed"] = str(exc)
        return None
    return active_graph()


@st.cache_resource(show_spinner=False, max_entries=6)
def _cached_sample(name: str) -> tuple[KnowledgeGraph, list, str]:
    from kgqa_core.samples import get_sample, load_sample

    graph, questions = load_sample(name)
    return graph, questions, get_sample(name).attribution


def load_sample_into_state(name: str) -> KnowledgeGraph:
    graph, questions, attribution = _cached_sample(name)
    set_graph(graph, f"sample: {name}", questions, attribution)
    st.session_state["graph_sample"] = name
    return graph


# ------------------------------------------------------------------- runs
def remember_run(run_id: str) -> None:
    runs = st.session_state.setdefault("session_runs", [])
    if run_id not in runs:
        runs.append(run_id)


def session_runs() -> list[str]:
    return list(st.session_state.get("session_runs", []))


@st.cache_resource(show_spinner=False, max_entries=8)
def _stored_graph(root: str, fingerprint: str) -> KnowledgeGraph | None:
    return RunStore(root).load_graph(fingerprint)


def graph_for_trace(trace: Trace) -> tuple[KnowledgeGraph | None, str]:
    """The graph a trace ran on, and where it came from (for a caption)."""
    fp = trace.graph_fingerprint
    for key, where in (("graph", "the loaded graph"), ("edited_graph", "the edited graph (Explore)")):
        g = st.session_state.get(key)
        if g is not None and fp and g.fingerprint == fp:
            return g, where
    if fp:
        try:
            g = _stored_graph(str(settings().runs_dir), fp)
        except (OSError, ValueError, KeyError, RunStoreError):
            g = None
        if g is not None:
            return g, "the graph snapshot saved with the run"
    from kgqa_core.methods.on_store import fetched_graph

    fetched = fetched_graph(trace)
    if fetched is not None:
        return fetched, "the subgraph the run fetched from its SPARQL endpoint (saved in the trace)"
    return None, "no graph: drawing only the triplets the trace repeats"


def load_run(run_id: str) -> Trace:
    return store().load(run_id)


def query_param(name: str) -> str | None:
    value: Any = st.query_params.get(name)
    return str(value) if value else None
