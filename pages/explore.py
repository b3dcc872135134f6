"""Explore: search entities, expand neighbourhoods, relation statistics, and edit-then-re-ask (counterfactuals)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_ui import charts, panels, sparql_panel, state
from kgqa_ui.counterfactual import Edit, edit_effect
from kgqa_ui.html_utils import md_text
from kgqa_ui.nav import ensure_app_navigation
from kgqa_ui.params_form import ask_params
from kgqa_ui.running import RunSpec, methods_available, outcome_trace, run_controls
from kgqa_ui.trace_scene import explore_scene

ensure_app_navigation()


def working_graph() -> KnowledgeGraph:
    """The edited copy if there is one, else the loaded graph (edits never touch the original)."""
    return st.session_state.get("edited_graph") or sparql_panel.explorer_graph(state.active_graph())


def search_tab(graph: KnowledgeGraph) -> None:
    expanded: list[str] = st.session_state.setdefault("explore_expanded", [])
    c1, c2 = st.columns([3, 2])
    with c1:
        q = st.text_input("Search entities", key="explore_q", placeholder="a name, or part of one")
    hits = graph.search_entities(q, limit=15) if q.strip() else []
    with c2:
        if q.strip() and not hits:
            st.caption("No entity matches.")
        pick = st.selectbox("Entity", [h for h, _ in hits], key="explore_pick",
                            format_func=lambda e: f"{e}  (degree {graph.degree(e)})") if hits else None
    b = st.columns([1, 1, 4])
    if b[0].button("Expand", key="explore_expand", disabled=pick is None, icon=":material/add_circle:"):
        if pick not in expanded:
            expanded.append(pick)
    if b[1].button("Clear", key="explore_clear", disabled=not expanded):
        expanded.clear()
    if not expanded:
        seeds = st.session_state.get("ask_topics") or []
        seeds = [s for s in seeds if graph.has_entity(s)]
        if seeds:
            expanded.extend(seeds[:2])
            st.caption("Starting from the Ask page's topic entities; search to expand others.")
        else:
            st.info("Search an entity and press **Expand** to draw its neighbourhood.")
            return
    st.caption("Expanded: " + ", ".join(md_text(e) for e in expanded))
    cfg = state.settings()
    highlight = [t.id for t in graph if t.id in set(st.session_state.get("edit_added_ids", []))]
    scene = explore_scene(graph, expanded, selected=pick, highlight=highlight, max_nodes=cfg.max_nodes)
    panels.show_graph(scene, height=520, alt="explored neighbourhoods")
    focus = pick or expanded[-1]
    trips = graph.neighbours(focus)
    st.markdown(f"**Triplets of {md_text(focus)}** ({len(trips)}; showing up to 500)")
    st.dataframe(pd.DataFrame([{"id": t.id, "head": t.head, "relation": t.relation, "tail": t.tail}
                               for t in trips[:500]]), hide_index=True, width="stretch")
    neighbours = sorted({t.other(focus) for t in trips[:500]} - set(expanded))
    if neighbours:
        nxt = st.selectbox("Expand a neighbour", neighbours, index=None, key="explore_next",
                           placeholder="pick a neighbour to expand…")
        if nxt and st.button("Expand neighbour", key="explore_expand_next"):
            expanded.append(nxt)
            st.rerun()


def stats_tab(graph: KnowledgeGraph) -> None:
    m = st.columns(3)
    m[0].metric("triplets", f"{len(graph):,}")
    m[1].metric("entities", f"{len(graph.entities):,}")
    m[2].metric("relations", f"{len(graph.relations):,}")
    c1, c2 = st.columns(2)
    fig = charts.relation_stats_figure(graph)
    if fig is not None:
        c1.plotly_chart(fig, width="stretch", key="explore_rel")
    fig = charts.degree_figure(graph)
    if fig is not None:
        c2.plotly_chart(fig, width="stretch", key="explore_deg")


def edit_tab(original: KnowledgeGraph) -> None:
    st.markdown("Edit a **copy** of the graph (triplet ids are kept, so traces stay comparable), then ask the same "
                "question of both graphs: does the answer follow the evidence?")
    log: list[str] = st.session_state.setdefault("edit_log", [])
    changes: list[dict] = st.session_state.setdefault("edit_changes", [])  # the same edits, structured
    edited: KnowledgeGraph | None = st.session_state.get("edited_graph")

    def copy() -> KnowledgeGraph:
        g = st.session_state.get("edited_graph")
        if g is None:
            g = original.copy(name=f"{original.name} (edited)")
            st.session_state["edited_graph"] = g
        return g

    def remove(tid: int) -> None:
        """Button callback: runs before the page, so the tab stays open and the picker refreshes."""
        g2 = copy()
        if g2.has_triplet_id(int(tid)):
            t = g2.remove(int(tid))
            log.append(f"removed #{t.id}: {t.linearized()}")
            changes.append(Edit("removed", t.id, t.head, t.relation, t.tail).to_dict())
            st.session_state["edit_msg"] = ("success", f"Removed #{t.id}.")
        else:
            st.session_state["edit_msg"] = ("error", f"No triplet with id {int(tid)} in the edited graph.")

    def add() -> None:
        """Button callback: adds the triplet, then clears the three fields for the next one."""
        h, r, t = (st.session_state.get(k, "").strip() for k in ("edit_h", "edit_r", "edit_t"))
        if not (h and r and t):
            st.session_state["edit_msg"] = ("error", "Head, relation and tail must all be non-empty.")
            return
        g2 = copy()
        if g2.find(h, r, t):
            st.session_state["edit_msg"] = ("warning", "That triplet is already in the graph.")
            return
        trip = g2.add(h, r, t)
        log.append(f"added #{trip.id}: {trip.linearized()}")
        changes.append(Edit("added", trip.id, trip.head, trip.relation, trip.tail).to_dict())
        st.session_state.setdefault("edit_added_ids", []).append(trip.id)
        for k in ("edit_h", "edit_r", "edit_t"):
            st.session_state[k] = ""
        st.session_state["edit_msg"] = ("success", f"Added #{trip.id}.")

    msg = st.session_state.pop("edit_msg", None)
    if msg:
        getattr(st, msg[0])(md_text(msg[1]))
    c1, c2 = st.columns(2)
    with c1, st.container(border=True):
        st.markdown("**Remove a triplet**")
        g = edited or original
        focus = st.session_state.get("explore_pick") or next(iter(st.session_state.get("explore_expanded") or []), None)
        pool = g.neighbours(focus)[:300] if focus and g.has_entity(focus) else []
        if pool:
            tid = st.selectbox("Triplet", [t.id for t in pool], key="edit_rm_pick",
                               format_func=lambda i: f"#{i}  {g.triplet(i).linearized()}" if g.has_triplet_id(i) else f"#{i}")
        else:
            st.caption("Expand an entity on the Search tab to pick from its triplets, or give an id.")
            tid = st.number_input("Triplet id", min_value=0, step=1, key="edit_rm_id")
        st.button("Remove", key="edit_rm", icon=":material/remove_circle:", on_click=remove, args=(tid,),
                  disabled=tid is None)
    # a form: the three fields go with the click that adds them, so typing reruns nothing (a click during a
    # field's rerun could be lost) and Enter in a field never adds a half-typed triplet
    with c2, st.form("edit_add_form", border=True, enter_to_submit=False):
        st.markdown("**Add a triplet**")
        st.text_input("Head", key="edit_h")
        st.text_input("Relation", key="edit_r")
        st.text_input("Tail", key="edit_t")
        st.form_submit_button("Add", key="edit_add", icon=":material/add_circle:", on_click=add)
    if log:
        st.markdown("**Edits so far**")
        st.code("\n".join(log), language=None)
        def discard() -> None:
            st.session_state.pop("edited_graph", None)
            st.session_state["edit_log"] = []
            st.session_state["edit_changes"] = []
            st.session_state["edit_added_ids"] = []

        st.button("Discard edits", key="edit_reset", on_click=discard)
    reask(original)


def reask(original: KnowledgeGraph) -> None:
    edited = st.session_state.get("edited_graph")
    st.markdown("#### Re-ask on both graphs")
    if edited is None:
        st.caption("Make an edit first.")
        return
    methods = methods_available()
    if not methods:
        st.info("No reasoning method is installed yet, so the counterfactual run is not available.")
        return
    from kgqa_core.methods.base import method_specs
    from kgqa_core.models.registry import PACKAGED_MODELS, is_installed

    models = [n for n, spec in PACKAGED_MODELS.items() if is_installed(spec)]
    question = st.text_input("Question", value=st.session_state.get("ask_question", ""), key="edit_q").strip()
    topics = [t for t in (st.session_state.get("ask_topics") or []) if edited.has_entity(t)]
    topics = st.multiselect("Topic entities", sorted(set(topics) | set(st.session_state.get("explore_expanded") or [])),
                            default=topics, key="edit_topics")
    c = st.columns(2)
    method = c[0].selectbox("Method", list(methods), key="edit_method")
    ask_model = st.session_state.get("ask_model")
    model = c[1].selectbox("Model", models, key="edit_model",
                           index=models.index(ask_model) if ask_model in models else 0) if models else None
    blocked = ("Enter a question" if not question else "Choose at least one topic entity" if not topics
               else "Install a model on the Ask page" if not model else "")

    def specs() -> list[RunSpec]:
        # the Ask page's parameters for this method; the edited copy frozen as it is now (edits may go on)
        params = ask_params(method_specs()[method], st.session_state)
        vocabulary = state.graph_vocabulary()  # the Ask page's words for the graph's relations (an edit keeps them)
        same = question == (st.session_state.get("ask_question") or "").strip()
        gold = tuple(st.session_state.get("ask_gold") or ()) if same else ()  # the Ask page's gold, for its question
        st.session_state["edit_run_changes"] = list(st.session_state.get("edit_changes") or [])  # as frozen below
        return [RunSpec(method, g, question, tuple(topics), params, model, label=f"{label} graph",
                        vocabulary=vocabulary, gold=gold) for label, g in (("original", original), ("edited", edited.copy()))]

    def keep(outcomes: list[dict]) -> None:
        st.session_state["edit_results"] = outcomes
        # the edits these runs were made with (more may follow while they run)
        st.session_state["edit_results_changes"] = list(st.session_state.get("edit_run_changes") or [])

    run_controls("edit", "Run on original and edited graph", specs, keep, blocked=blocked,
                 help="Runs the method on both graphs, one after the other, with the Ask page's parameters.")
    res = st.session_state.get("edit_results") or []
    if len(res) != 2:
        return
    cols = st.columns(2)
    finished = {}
    for col, label, item in zip(cols, ("original", "edited"), res):
        with col.container(border=True):
            st.markdown(f"**{label} graph**")
            tr = outcome_trace(item)
            if tr is None:
                continue
            if not (tr.stopped or tr.error):
                finished[label] = tr
            panels.trace_summary(tr, compact=True, graph=original if label == "original" else edited)
            st.page_link("pages/replay.py", label="Replay", query_params={"run": item["run_id"]})
    if len(finished) == 2:
        edits = [Edit.from_dict(d) for d in st.session_state.get("edit_results_changes") or []]
        effect = edit_effect(finished["original"], finished["edited"], edits, edited)
        show = {"success": st.success, "warning": st.warning, "info": st.info}[effect.level]
        show(md_text(effect.headline))
        lines = effect.details()
        if lines:
            st.text("\n".join(lines))  # graph and model text: shown as text
    else:
        st.caption("The answers are compared once both runs have finished (not stopped, no error).")


def main() -> None:
    st.title("Explore the graph")
    original = state.active_graph()
    if original is None:
        st.info("Load a graph on the **Ask** page first.")
        return
    graph = working_graph()
    sparql_panel.explorer_caption(graph)
    if st.session_state.get("edited_graph") is not None:
        st.caption(f"Showing the **edited copy** ({len(st.session_state.get('edit_log', []))} edits); "
                   "the loaded graph is unchanged.")
    # keyed tabs keep the open tab across reruns (an edit used to jump back to the first tab)
    t1, t2, t3 = st.tabs(["Search & expand", "Relation statistics", "Edit & re-ask"], key="explore_tab",
                         on_change="rerun")
    with t1:
        search_tab(graph)
    with t2:
        stats_tab(graph)
    with t3:
        edit_tab(sparql_panel.explorer_graph(original))


with panels.page_guard("Explore"):
    main()
