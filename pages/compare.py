"""Compare: several methods on the same question, side by side, with their chains on one graph."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st
from plotly.subplots import make_subplots

from kgqa_ui import panels, state
from kgqa_ui.colors import categorical
from kgqa_ui.html_utils import esc, md_text, plotly_text
from kgqa_ui.nav import ensure_app_navigation
from kgqa_ui.params_form import ask_params
from kgqa_ui.running import RunSpec, methods_available, outcome_notice, run_controls
from kgqa_ui.trace_scene import compare_scene
from kgqa_ui.trace_tables import summary_row

ensure_app_navigation()


def run_more(question: str) -> None:
    """Run methods on the Ask page's question, topic entities and parameters; new runs join the comparison."""
    graph = state.active_graph()
    topics = st.session_state.get("ask_topics") or []
    methods = methods_available()
    expanded = not state.session_runs() or st.session_state.get("cmp_job") is not None
    with st.expander("Run methods on the current question", icon=":material/play_arrow:", expanded=expanded):
        if not methods:
            st.info("No reasoning method is installed yet; compare saved runs instead.")
            return
        if graph is None or not question or not topics:
            st.info("Set the graph, question and topic entities on the **Ask** page first.")
            return
        st.caption("Question: " + md_text(question) + " · topic: " + md_text(", ".join(topics)) + " · graph "
                   + md_text(graph.name) + " · preset, parameters and relation vocabulary as on the Ask page")
        chosen = st.multiselect("Methods", list(methods), default=list(methods)[:3], key="cmp_methods")
        from kgqa_core.methods.base import method_specs
        from kgqa_core.models.registry import PACKAGED_MODELS, is_installed

        models = [n for n, spec in PACKAGED_MODELS.items() if is_installed(spec)]
        if not models:
            st.warning("No model is installed; install one on the Ask page.")
            return
        default = st.session_state.get("ask_model")
        model = st.selectbox("Model", models, index=models.index(default) if default in models else 0, key="cmp_model")

        def specs() -> list[RunSpec]:
            all_specs = method_specs()
            gold = tuple(st.session_state.get("ask_gold") or ())  # the Ask page's question, so its gold
            return [RunSpec(m, graph, question, tuple(topics), ask_params(all_specs[m], st.session_state), model,
                            vocabulary=state.graph_vocabulary(), gold=gold) for m in chosen]

        def keep(outcomes: list[dict]) -> None:
            st.session_state["cmp_outcomes"] = outcomes
            new = [o["run_id"] for o in outcomes if o["run_id"]]
            if new:  # the runs just made join the comparison, with the question
                st.session_state["cmp_pick_next"] = list(st.session_state.get("cmp_pick") or []) + new

        run_controls("cmp", "Run all", specs, keep, blocked="" if chosen else "Choose a method")
        for item in st.session_state.get("cmp_outcomes") or []:
            if item.get("stopped") or not item.get("run_id"):
                st.markdown(f"**{md_text(item['title'])}**")
                outcome_notice(item)


def compare_gold(question: str, traces: list) -> list[str]:
    """The gold the compared runs were asked with (saved in their traces), else the sample's, else the Ask page's."""
    for t in traces:
        if t.gold_answers:
            return list(t.gold_answers)
    for sq in st.session_state.get("sample_questions") or []:
        if sq.question.strip() == question:
            return list(sq.answers)
    if (st.session_state.get("ask_question") or "").strip() == question:
        return list(st.session_state.get("ask_gold") or [])
    return []


TABLE_COLUMNS = ["run", "model", "answers", "correct", "ill triplets", "answers where the chain ends", "model calls", "tokens in",
                 "tokens out", "wall time (s)", "steps", "error"]
TABLE_STYLE = """<style>
.kg-cmp { overflow-x:auto; } .kg-cmp table { border-collapse:collapse; font-size:13px; width:100%; }
.kg-cmp th, .kg-cmp td { border:1px solid rgba(128,128,128,.35); padding:4px 8px; text-align:left; vertical-align:top;
  white-space:normal; overflow-wrap:break-word; word-break:normal; } .kg-cmp th { font-weight:600; }
.kg-cmp td.num { white-space:nowrap; text-align:right; } .kg-cmp td.long { min-width:16em; }
.kg-cmp .swatch { display:inline-block; width:10px; height:10px; border-radius:2px; margin-right:6px; }
</style>"""


def summary_table_html(rows: list[dict]) -> str:
    """The side-by-side table as escaped HTML that wraps: no cell is cut."""
    head = "".join(f"<th>{esc(c)}</th>" for c in TABLE_COLUMNS)
    body = []
    for k, row in enumerate(rows):
        cells = []
        for c in TABLE_COLUMNS:
            value = row.get(c)
            text = "" if value in (None, "") else str(value)
            if c == "run":
                text = f'<span class="swatch" style="background:{categorical(k)}"></span>{esc(text)}'
            else:
                text = esc(text)
            # words wrap whole (no "smo|llm2"); numbers never wrap; the answers get room
            kind = " class='num'" if isinstance(value, (int, float)) else " class='long'" if c == "answers" else ""
            cells.append(f"<td{kind}>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return TABLE_STYLE + '<div class="kg-cmp"><table><tr>' + head + "</tr>" + "".join(body) + "</table></div>"


def cost_figure(rows: list[dict]) -> go.Figure:
    """Seconds, model calls and tokens each on its own scale, one colour per run."""
    panels_ = [("wall time (s)", "seconds"), ("model calls", "model calls"), ("tokens out", "tokens out")]
    fig = make_subplots(rows=1, cols=3, subplot_titles=[t for _, t in panels_], horizontal_spacing=0.1)
    for k, row in enumerate(rows):
        for j, (col, _title) in enumerate(panels_, start=1):
            fig.add_bar(x=[plotly_text(row["run"])], y=[row[col] or 0], marker_color=categorical(k),
                        name=plotly_text(row["run"]), showlegend=j == 1, legendgroup=str(k),
                        hovertext=[plotly_text(f"{row['run']}: {row[col]} {_title}")], hoverinfo="text",
                        row=1, col=j)
    fig.update_xaxes(showticklabels=False)
    fig.update_layout(height=280, margin={"l": 10, "r": 10, "t": 40, "b": 10}, barmode="group",
                      paper_bgcolor="rgba(0,0,0,0)", plot_bgcolor="rgba(0,0,0,0)",
                      legend={"orientation": "h", "y": -0.08})
    return fig


def main() -> None:
    st.title("Compare")
    st.caption("Answers, correctness, faithfulness and cost side by side; every chain on one graph.")
    store = state.store()
    infos = store.list()
    question = (st.session_state.get("ask_question") or "").strip()
    run_more(question)
    if not infos:
        st.info("No saved runs to compare yet.", icon=":material/info:")
        return
    questions = list(dict.fromkeys(i.question for i in infos))
    if "cmp_question" not in st.session_state or st.session_state["cmp_question"] not in questions:
        st.session_state["cmp_question"] = question if question in questions else questions[0]
    if "cmp_pick_next" in st.session_state:  # runs just made: select them with the question
        nxt = st.session_state.pop("cmp_pick_next")
        if question in questions:
            st.session_state["cmp_question"] = question
        st.session_state["cmp_pick"] = nxt
    q = st.selectbox("Question", questions, key="cmp_question")
    same = [i for i in infos if i.question == q]
    ids = [i.run_id for i in same]
    by_id = {i.run_id: i for i in same}
    if st.session_state.get("cmp_last_q") != q or not set(st.session_state.get("cmp_pick") or []) <= set(ids):
        latest: dict[tuple[str, str], str] = {}
        for i in same:  # newest first: each method's latest run on each graph (an edited copy is another graph)
            latest.setdefault((i.method, i.graph_fingerprint), i.run_id)
        keep = [r for r in (st.session_state.get("cmp_pick") or []) if r in ids]
        st.session_state["cmp_pick"] = keep or list(latest.values())
        st.session_state["cmp_last_q"] = q
    picked = st.multiselect("Runs", ids, key="cmp_pick",
                            format_func=lambda r: f"{by_id[r].method} · {by_id[r].model} · {(by_id[r].created_at or '')[:19]}")
    if not picked:
        st.info("Pick at least one run.")
        return
    traces = []
    for r in picked:
        try:
            traces.append((r, store.load(r)))
        except Exception as exc:
            st.warning(f"Skipped run {md_text(r)}: {md_text(exc)}")
    if not traces:
        return
    gold_text = st.text_input("Gold answers (separate with |)", value=" | ".join(compare_gold(q, [t for _, t in traces])),
                              key=f"cmp_gold::{q}",
                              help="For any graph: the answers you expect. Filled from the gold saved with these runs "
                                   "(typed on the Ask page or given with ask --gold), else the sample's questions.")
    gold = state.parse_gold(gold_text)
    labels = [f"{t.method} ({r[-6:]})" if sum(x.method == t.method for _, x in traces) > 1 else t.method
              for r, t in traces]
    rows = [summary_row(t, gold, label=lab) for (r, t), lab in zip(traces, labels)]
    st.html(summary_table_html(rows))
    st.plotly_chart(cost_figure(rows), width="stretch", key="cmp_cost", config={"displayModeBar": False})

    fps = {t.graph_fingerprint for _, t in traces}
    graph, where = state.graph_for_trace(traces[0][1])
    if len(fps) > 1:
        st.warning("These runs used different graphs (an edited copy?); chains are drawn on the first run's graph "
                   "and triplets it lacks are marked as not in the graph.")
    cfg = state.settings()
    scene = compare_scene([t for _, t in traces], graph, labels=labels, max_nodes=cfg.max_nodes,
                          context=min(cfg.context, 15))
    st.markdown("**Chains overlaid** (one colour per run; red dashed = cited but not in the graph)")
    panels.show_graph(scene, height=520, alt="chains of the compared runs")
    st.caption("Graph: " + md_text(where) + ".")
    cols = st.columns(min(3, len(traces)))
    for k, ((r, t), lab) in enumerate(zip(traces, labels)):
        with cols[k % len(cols)].container(border=True):
            st.markdown("**" + md_text(lab) + "**")
            panels.trace_summary(t, gold=gold, compact=True, graph=graph)
            st.page_link("pages/replay.py", label="Replay", icon=":material/slow_motion_video:",
                         query_params={"run": r})


with panels.page_guard("Compare"):
    main()
