"""Replay: step through a saved trace; the model is never re-run and stepping reruns only the player."""

from __future__ import annotations

import re

import streamlit as st

from kgqa_core.trace.schema import Trace
from kgqa_ui import panels, state
from kgqa_ui.html_utils import md_text
from kgqa_ui.nav import ensure_app_navigation
from kgqa_ui.trace_scene import step_name
from kgqa_ui.trace_tables import trace_gold, trace_label

PLAY_INTERVAL = 1.6  # seconds per step while playing

ensure_app_navigation()


def pick_run() -> str | None:
    store = state.store()
    infos = store.list()
    if store.problems:
        with st.expander(f"{len(store.problems)} file(s) in the runs directory could not be read"):
            for p in store.problems:
                st.text(p)  # file text, shown as text
    if not infos:
        st.info("No runs yet. Ask a question on the **Ask** page (every run is saved to "
                f"{md_text(store.root)}), or import a trace JSON on the **Runs** page.", icon=":material/info:")
        return None
    mine = set(state.session_runs())
    ids = [i.run_id for i in infos]
    labels = {i.run_id: ("● " if i.run_id in mine else "") + f"{i.method} · {i.question[:70]} · "
              f"{(i.created_at or '')[:19].replace('T', ' ')}" for i in infos}
    wanted = state.query_param("run")
    if wanted and wanted not in ids:
        st.warning(f"Run {md_text(wanted)} is not in {md_text(store.root)}; showing the newest run instead.")
        wanted = None
    if st.session_state.get("replay_pick") not in ids or (wanted and st.session_state.get("replay_url_seen") != wanted):
        st.session_state["replay_pick"] = wanted or ids[0]
        st.session_state["replay_url_seen"] = wanted
    run_id = st.selectbox("Run", ids, key="replay_pick", format_func=lambda r: labels[r],
                          help="● = run in this session. Newest first.")
    if st.query_params.get("run") != run_id:
        st.query_params["run"] = run_id
        st.query_params.pop("step", None)
    return run_id


@st.cache_data(show_spinner=False, max_entries=32)
def _load(root: str, run_id: str, mtime: float) -> Trace:
    from kgqa_ui.run_store import RunStore

    return RunStore(root).load(run_id)


def url_step(text: str | None, n: int) -> int:
    """The step a ``?step=`` value names: ASCII digits in 0..n, anything else (``²``, ``-1``, 5,000 digits) is 0."""
    if not text or not re.fullmatch(r"[0-9]{1,9}", text):
        return 0
    value = int(text)
    return value if value <= n else 0


def player(run_id: str, trace: Trace, was_playing: bool) -> None:
    graph, where = state.graph_for_trace(trace)
    cfg = state.settings()
    n = len(trace.steps)
    key = f"replay_step::{run_id}"
    if key not in st.session_state:
        st.session_state[key] = url_step(state.query_param("step"), n)
    playing = st.session_state.get("replay_playing") == run_id
    if playing != was_playing:
        st.rerun()  # play/pause changes the fragment's timer, which needs one whole-page run
    if playing:
        if st.session_state[key] >= n:
            st.session_state["replay_playing"] = None
            st.rerun()
        elif st.session_state.get("replay_tick_seen"):
            st.session_state[key] = min(n, st.session_state[key] + 1)
        st.session_state["replay_tick_seen"] = True

    def move(delta: int) -> None:
        st.session_state[key] = max(0, min(n, st.session_state[key] + delta))

    def toggle() -> None:
        if st.session_state.get("replay_playing") == run_id:
            st.session_state["replay_playing"] = None
        else:
            if st.session_state[key] >= n:
                st.session_state[key] = 0
            st.session_state["replay_playing"] = run_id
            st.session_state["replay_tick_seen"] = False

    c = st.columns([2, 2, 2, 9])
    c[0].button("Back", key="replay_prev", on_click=move, args=(-1,), help="Previous step", disabled=playing,
                icon=":material/skip_previous:", width="stretch")
    c[1].button("Pause" if playing else "Play", key="replay_play", on_click=toggle,
                icon=":material/pause:" if playing else ":material/play_arrow:", width="stretch",
                help="Pause" if playing else "Play through the steps")
    c[2].button("Next", key="replay_next", on_click=move, args=(1,), help="Next step", disabled=playing,
                icon=":material/skip_next:", width="stretch")
    options = list(range(n + 1))
    names = [step_name(trace, i) for i in range(n)]

    def fmt(i: int) -> str:
        # the slider's value label is rendered as Markdown: step names come from the trace
        return "final result" if i == n else md_text(f"{i + 1} of {n} · {names[i]}")

    with c[3]:
        idx = st.select_slider("Step", options, key=key, format_func=fmt, label_visibility="collapsed",
                               help="Drag, or use the Back / Next buttons")
    if state.query_param("step") != str(idx):
        st.query_params["step"] = str(idx)
    if graph is None or where.startswith("no graph"):
        st.caption("Graph: " + md_text(where) + ".")
    panels.step_view(trace, idx, graph, cfg.max_nodes, cfg.context)


def main() -> None:
    st.title("Replay")
    st.caption("Step through what a method did: the subgraph it grew, candidates and their scores, the chosen "
               "chain and the model's own text. Nothing is re-run.")
    run_id = pick_run()
    if run_id is None:
        return
    store = state.store()
    try:
        path = store.path(run_id)
        trace = _load(str(store.root), run_id, path.stat().st_mtime)
    except Exception as exc:
        st.error(f"Could not load run {md_text(run_id)}: {md_text(exc)}")
        return
    with st.container(border=True):
        st.markdown("**" + md_text(trace.question) + "**")
        # the gold saved with the run; an older trace without one borrows the Ask page's, for its own question only
        asked = (st.session_state.get("ask_question") or "").strip() == trace.question
        gold = trace_gold(trace, (st.session_state.get("ask_gold") or []) if asked else [])
        if gold:
            st.caption("Gold answer: " + md_text(" | ".join(gold))
                       + (" (saved with the run)" if trace.gold_answers else " (typed on the Ask page for this question)"))
        graph, _where = state.graph_for_trace(trace)
        panels.trace_summary(trace, gold=gold, compact=True, graph=graph, show_chain=False, inline=True)
        has_reading = any(k in trace.extra for k in ("reading", "vocabulary"))
        with st.expander("Chains, question reading, cost and parameters" if has_reading else "Chains, cost and parameters"):
            panels.trace_summary(trace, gold=gold, graph=graph)
    if not trace.steps:
        st.info("This trace has no steps to replay; the final result is shown below.")
    playing = st.session_state.get("replay_playing") == run_id
    fragment = st.fragment(player, run_every=PLAY_INTERVAL if playing else None)
    with panels.page_guard("Replay"):
        fragment(run_id, trace, playing)
    st.caption("Run " + md_text(run_id) + " · " + md_text(trace_label(trace)))


with panels.page_guard("Replay"):
    main()
