"""Reload-proof sessions: restore what a person set up after F5, a deep link or a new tab.

app.py calls `restore` before anything reads the graph, and `save` after the
page has run; every page calls them too (`nav.ensure_app_navigation`,
`panels.page_guard`), because a page may run without app.py (Streamlit's
legacy page mode, which AppTest uses after its first run).  Both are cheap
to repeat: `restore` acts once per connection, `save` writes only a change.  A browser connection's first run looks at its URL:

* ``?s=<id>`` naming a saved record (`session_store`): the graph (sample,
  uploaded snapshot or SPARQL endpoint), the question, the gold answer, the
  topic entities, the relation vocabulary, the chosen methods and model, the
  Ask page's result cards and a run still going in that session come back;
* else ``?run=<id>`` (a Replay or Runs deep link): the run's own graph (its
  sample, or the snapshot saved with it), question, gold and topics;
* else the default sample, as before.

Either way the connection continues under a new id, put back in the URL on
every page (page links drop query parameters), so a reload of any page finds
it.  What was restored is said in the sidebar, and a graph that could not be
restored is said too: nothing is replaced silently.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from kgqa_core.questions import parse_gold

from . import state
from .html_utils import md_text
from .session_store import SessionRecord, SessionStore, new_session_id, valid_session_id

SID_PARAM = "s"
SOURCE_TABS = ("Sample graph", "Upload a file", "SPARQL endpoint")


def sessions() -> SessionStore:
    return SessionStore(state.settings().runs_dir)


def session_id() -> str | None:
    return st.session_state.get("session_id")


def restore() -> None:
    """On a connection's first run, bring its session back from the URL; on every run, keep the id in the URL."""
    ss = st.session_state
    if not ss.get("session_id"):
        old = valid_session_id(state.query_param(SID_PARAM))
        store = sessions()
        record = store.load(old) if old else None
        note = ""
        if record is not None:
            note = apply_record(record, store)
        elif state.query_param("run"):
            note = restore_from_run(str(state.query_param("run")), store)
        elif old:
            note = "warn:The session in this link was not found (deleted, or another runs folder); starting afresh."
        ss["session_id"] = new_session_id()
        if old:
            from .running import adopt_jobs

            adopt_jobs(old, ss["session_id"])
        state.ensure_graph()  # the default sample when nothing was restored (before the note: loading clears it)
        if note:
            ss["restore_note"] = note
        try:
            store.prune()
        except OSError:
            pass
    if st.query_params.get(SID_PARAM) != ss["session_id"]:
        st.query_params[SID_PARAM] = ss["session_id"]


def _load_graph(spec: dict[str, Any], store: SessionStore) -> tuple[bool, str]:
    """Make the graph ``spec`` describes the active one; (done, what to say)."""
    kind = spec.get("kind")
    if kind == "sample" and isinstance(spec.get("name"), str):
        try:
            state.load_sample_into_state(spec["name"])
        except Exception as exc:  # a sample removed since
            return False, f"the sample graph {spec['name']!r} could not be loaded ({exc})"
        return True, f"sample graph {spec['name']}"
    if kind == "snapshot" and isinstance(spec.get("fingerprint"), str):
        graph = store.load_graph(spec["fingerprint"], state.store())
        name = str(spec.get("name") or "graph")
        if graph is None:
            return False, f"the graph {name!r} is no longer saved (its snapshot was deleted)"
        state.set_graph(graph, str(spec.get("origin") or f"restored: {name}"))
        st.session_state["graph_sample"] = None
        return True, f"graph {name} ({len(graph):,} triplets)"
    if kind == "sparql" and isinstance(spec.get("source"), dict):
        from kgqa_core.graph.sparql.options import SparqlSource

        try:
            source = SparqlSource.from_dict(spec["source"])
        except ValueError as exc:
            return False, f"the SPARQL endpoint settings could not be read ({exc})"
        state.set_graph(source.open(), str(spec.get("origin") or f"SPARQL: {source.endpoint}"))
        st.session_state["graph_sample"] = None
        st.session_state["sparql_source"] = source.to_dict()
        return True, f"SPARQL endpoint {source.endpoint}"
    return False, ""


def apply_record(record: SessionRecord, store: SessionStore) -> str:
    """Put a saved record into this session's state; returns the sidebar note ("warn:" first when not whole)."""
    ss = st.session_state
    loaded, what = _load_graph(record.graph, store) if record.graph else (False, "")
    if record.source_tab in SOURCE_TABS:
        ss["ask_source"] = record.source_tab
    if loaded or not record.graph:
        _set_question(record.question, record.gold_text, record.topics)
        ss["ask_extra_entities"] = list(record.extra_entities)
    vocabulary = _set_vocabulary(record.vocabulary_text) if loaded else False
    if record.methods:
        ss["ask_methods"] = list(record.methods)
    if record.model:
        ss["ask_model"] = record.model
    ss["ask_last_runs"] = [dict(r) for r in record.last_runs]
    ss["session_runs"] = list(record.session_runs)
    if record.graph and not loaded:
        return "warn:Restored after the reload, except the graph: " + (what or "unknown kind") + "; the sample is loaded."
    parts = [what] if what else []
    if record.question:
        parts.append("question")
    if record.gold_text:
        parts.append("gold answer")
    if record.topics:
        parts.append("topic entities")
    if vocabulary:
        parts.append("relation vocabulary")
    return "Restored after the reload: " + ", ".join(parts) + "." if parts else ""


def _set_question(question: str, gold_text: str, topics: list[str]) -> None:
    ss = st.session_state
    ss["ask_question"] = question
    ss["ask_gold_text"] = gold_text
    ss["ask_gold"] = parse_gold(gold_text)
    ss["ask_topics"] = list(topics)
    ss["ask_linked_for"] = question.strip()  # the restored topics stand; linking runs again when the question changes


def _set_vocabulary(text: str) -> bool:
    """The restored graph's vocabulary text back in the Ask page's text area, and in force when it reads (a text
    with errors comes back as typed: the Ask page says what is wrong, and runs wait, as before the reload)."""
    from kgqa_core.reading.vocabulary import RelationVocabulary, VocabularyError

    from .vocabulary_panel import TYPED_SOURCE

    if not text.strip():
        return False
    st.session_state[state.VOCABULARY_TEXT_KEY] = text
    try:
        state.set_vocabulary(RelationVocabulary.parse(text, TYPED_SOURCE))
    except VocabularyError:
        pass
    return True


def restore_from_run(run_id: str, store: SessionStore) -> str:
    """A deep link to a run on a fresh connection: that run's graph, question, gold and topics."""
    try:
        trace = state.store().load(run_id)
    except Exception:
        return ""  # Replay says the run is missing; the default sample loads as usual
    sample = _sample_with(trace.graph_fingerprint)
    if sample:
        spec: dict[str, Any] = {"kind": "sample", "name": sample}
    else:
        spec = {"kind": "snapshot", "fingerprint": trace.graph_fingerprint, "name": trace.graph_name,
                "origin": f"saved with run {run_id}"}
    loaded, what = _load_graph(spec, store) if trace.graph_fingerprint else (False, "")
    if not loaded:
        return ("warn:This link's run has no saved graph" + (f" ({what})" if what else "")
                + "; the sample is loaded and the run is drawn from the triplets it repeats.")
    _set_question(trace.question, " | ".join(trace.gold_answers), list(trace.topic_entities))
    return f"Opened from a link to run {run_id}: its {what}, question" + (", gold answer" if trace.gold_answers else "") + \
        " and topic entities are loaded."


def _sample_with(fingerprint: str) -> str | None:
    """The name of the shipped sample whose graph has this fingerprint (so its example questions come too)."""
    if not fingerprint:
        return None
    try:
        from kgqa_core.samples import list_samples

        for s in list_samples():
            graph, _q, _a = state._cached_sample(s.name)
            if graph.fingerprint == fingerprint:
                return s.name
    except Exception:
        return None
    return None


def current_record() -> SessionRecord:
    """This session's state as a record (an uploaded graph is snapshotted once, here)."""
    ss = st.session_state
    graph = state.active_graph()
    spec: dict[str, Any] = {}
    if graph is not None:
        from .sparql_panel import is_store

        origin = str(ss.get("graph_origin") or "")
        if is_store(graph):
            if isinstance(ss.get("sparql_source"), dict):
                spec = {"kind": "sparql", "source": ss["sparql_source"], "origin": origin}
        elif ss.get("graph_sample"):
            spec = {"kind": "sample", "name": ss["graph_sample"]}
        else:
            fp = graph.fingerprint
            if ss.get("_kgqa_snapshot_fp") != fp:
                sessions().save_graph(graph)
                ss["_kgqa_snapshot_fp"] = fp
            spec = {"kind": "snapshot", "fingerprint": fp, "name": graph.name, "origin": origin}
    source = ss.get("ask_source")
    return SessionRecord(
        graph=spec, source_tab=source if source in SOURCE_TABS else "",
        question=str(ss.get("ask_question") or ""), gold_text=str(ss.get("ask_gold_text") or ""),
        topics=[str(t) for t in ss.get("ask_topics") or []],
        extra_entities=[str(t) for t in ss.get("ask_extra_entities") or []],
        methods=[str(m) for m in ss.get("ask_methods") or []], model=str(ss.get("ask_model") or ""),
        last_runs=[{k: r.get(k) for k in ("method", "title", "run_id", "error", "stopped")}
                   for r in ss.get("ask_last_runs") or [] if isinstance(r, dict)],
        session_runs=[str(r) for r in ss.get("session_runs") or []],
        vocabulary_text=str(ss.get(state.VOCABULARY_TEXT_KEY) or "") if spec else "",
    )


def save() -> None:
    """Write this session's record when it changed since the last write (a few hundred bytes)."""
    sid = session_id()
    if not sid:
        return
    try:
        record = current_record()
        data = record.to_dict()
        if st.session_state.get("_kgqa_saved_record") == data:
            return
        sessions().save(sid, record)
        st.session_state["_kgqa_saved_record"] = data
    except OSError as exc:  # a read-only runs folder: the app works, reloads forget
        st.session_state["restore_note"] = f"warn:This session cannot be saved for reloads ({exc})."


def sidebar_note() -> None:
    """What was restored (or could not be), shown as text."""
    note = st.session_state.get("restore_note")
    if not note:
        return
    if note.startswith("warn:"):
        st.warning(md_text(note[5:]), icon=":material/warning:")
    else:
        st.caption(":material/restore: " + md_text(note))
