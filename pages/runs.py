"""Runs: every saved trace; open in Replay, download (trace JSON, graph HTML, scores CSV), delete, import."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from kgqa_core.trace.schema import TraceFormatError
from kgqa_ui import panels, state
from kgqa_ui.html_utils import md_text
from kgqa_ui.nav import ensure_app_navigation
from kgqa_ui.trace_scene import step_scene
from kgqa_ui.trace_tables import scores_csv
from kgqa_ui.vis_html import render_html

ensure_app_navigation()


def import_box() -> None:
    with st.expander("Import a trace JSON", icon=":material/upload:"):
        up = st.file_uploader("Trace file", type=["json"], key="runs_import")
        if up is not None and st.session_state.get("runs_imported") != f"{up.name}:{up.size}":
            try:
                text = up.getvalue().decode("utf-8")
                info = state.store().import_trace(text, name=up.name)
            except UnicodeDecodeError:
                st.error(md_text(up.name) + ": not UTF-8 text, so not a trace file.")
                return
            except TraceFormatError as exc:
                st.error(md_text(exc))
                return
            st.session_state["runs_imported"] = f"{up.name}:{up.size}"
            state.remember_run(info.run_id)
            st.success("Imported as run " + md_text(info.run_id) + ".")


def damaged_box(store) -> None:
    """Files in the runs folder that are not valid traces: why, and a Delete button each."""
    if not store.damaged:
        return
    with st.expander(f"{len(store.damaged)} damaged file(s) in the runs folder: not shown", expanded=True,
                     icon=":material/warning:"):
        for d in store.damaged:
            c = st.columns([8, 2])
            c[0].text(f"{d.path.name}: {d.problem}")
            if c[1].button("Delete", key=f"runs_delete_damaged::{d.run_id}", icon=":material/delete:",
                           help="Delete " + md_text(d.path.name) + " from disk"):
                try:
                    store.delete(d.run_id)
                except Exception as exc:
                    st.error(f"Could not delete {md_text(d.path.name)}: {md_text(exc)}")
                else:
                    st.toast("Deleted " + md_text(d.path.name))
                    st.rerun()


def main() -> None:
    st.title("Runs")
    store = state.store()
    st.caption(f"Every run is saved to {md_text(store.root)} (change it in the sidebar settings or with KGQA_RUNS_DIR).")
    import_box()
    infos = store.list()
    damaged_box(store)
    if not infos:
        st.info("No saved runs yet. Ask a question on the **Ask** page; its trace appears here.",
                icon=":material/info:")
        return
    mine = set(state.session_runs())
    df = pd.DataFrame([{
        "run": i.run_id, "this session": i.run_id in mine, "created": (i.created_at or "")[:19].replace("T", " "),
        "method": i.method, "question": i.question, "answers": ", ".join(i.answers),
        "gold": " | ".join(i.gold_answers), "correct": i.correct, "model": i.model,
        "steps": i.n_steps, "seconds": round(i.seconds, 2), "graph": i.graph_name,
        "graph saved": i.has_graph, "error": i.error,
    } for i in infos])
    st.dataframe(df, hide_index=True, width="stretch")

    ids = [i.run_id for i in infos]
    by_id = {i.run_id: i for i in infos}
    wanted = state.query_param("run")
    if st.session_state.get("runs_pick") not in ids:
        st.session_state["runs_pick"] = wanted if wanted in ids else ids[0]
    run_id = st.selectbox("Selected run", ids, key="runs_pick",
                          format_func=lambda r: f"{by_id[r].method} · {by_id[r].question[:70]} · {r}")
    info = by_id[run_id]
    try:
        trace = store.load(run_id)
    except Exception as exc:
        st.error(f"Could not read run {md_text(run_id)}: {md_text(exc)}")
        return
    c = st.columns(5)
    c[0].page_link("pages/replay.py", label="Open in Replay", icon=":material/slow_motion_video:",
                   query_params={"run": run_id})
    c[1].download_button("Trace JSON", trace.to_json(), file_name=f"{run_id}.json", mime="application/json",
                         key="runs_dl_json", icon=":material/download:")
    graph, _where = state.graph_for_trace(trace)
    cfg = state.settings()
    html = render_html(step_scene(trace, len(trace.steps), graph, cfg.max_nodes, cfg.context),
                       height=700, title=f"{trace.method}: {trace.question}")
    c[2].download_button("Graph HTML", html, file_name=f"{run_id}.html", mime="text/html", key="runs_dl_html",
                         icon=":material/download:", help="A self-contained page of the final chain; opens offline.")
    c[3].download_button("Scores CSV", scores_csv(trace), file_name=f"{run_id}-scores.csv", mime="text/csv",
                         key="runs_dl_csv", icon=":material/download:")
    with c[4]:
        sure = st.checkbox("confirm", key=f"runs_confirm::{run_id}", help=f"Tick, then delete run {md_text(run_id)} from disk.")
        if st.button("Delete", key="runs_delete", icon=":material/delete:", disabled=not sure):
            try:
                store.delete(run_id)
            except Exception as exc:
                st.error(f"Could not delete {md_text(run_id)}: {md_text(exc)}")
            else:
                st.session_state.pop("runs_pick", None)
                if st.query_params.get("run") == run_id:
                    st.query_params.pop("run", None)
                st.toast("Deleted run " + md_text(run_id))
                st.rerun()
    with st.container(border=True):
        panels.trace_summary(trace)


with panels.page_guard("Runs"):
    main()
