"""Streamlit renderers for traces: summary, one step, method panels, the graph iframe.

Pages call these; they only read traces.  Every renderer is defensive: a
malformed extra is shown as JSON with a warning instead of breaking the page.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any, Iterator

import streamlit as st

from kgqa_core.trace.schema import Step, Trace

from . import charts
from .scene import GraphScene
from .text_view import highlight_model_text, token_view_html
from .trace_scene import abstract_structure_scene, step_scene
from .trace_tables import chain_text, correctness, faithfulness_badge, step_facts
from .vis_html import render_html

PLOTLY_CONFIG = {"displayModeBar": False}
KNOWN_EXTRAS = {"chain", "chain_score", "chains", "chain_scores", "dropped", "abstract_structure", "key_entities", "paths", "pagerank",
                "subquestion", "sub_question", "answers", "sub_questions"}


@contextlib.contextmanager
def page_guard(page: str) -> Iterator[None]:
    """Turn any error on a page into a clear message instead of a traceback."""
    try:
        yield
    except Exception as exc:  # st.stop / st.rerun are BaseExceptions and pass through
        st.error(f"The {page} page hit a problem: {type(exc).__name__}: {exc}", icon=":material/error:")
        st.caption("Your runs are saved on disk; reloading the page or choosing another run usually helps.")


def show_graph(scene: GraphScene, height: int = 520, alt: str = "knowledge graph") -> None:
    extra = 70 + 22 * (len(scene.legend) // 5) + (22 if scene.note else 0)
    st.iframe(render_html(scene, height=height), height=height + extra, alt=alt)


def badge(trace: Trace) -> None:
    b = faithfulness_badge(trace)
    st.badge(b.label, color=b.color, help=b.help)  # type: ignore[arg-type]


def trace_summary(trace: Trace, gold: list[str] | None = None, compact: bool = False) -> None:
    """Answer, chain, faithfulness and cost of a run."""
    if trace.error:
        st.error(f"This run ended with an error: {trace.error}")
    answers = ", ".join(trace.answer_texts) or "(no answer)"
    st.markdown(f"**Answer:** {_md(answers)}")
    corr = correctness(trace, gold or [])
    cols = st.columns([2, 2, 3]) if not compact else st.columns(2)
    with cols[0]:
        badge(trace)
    if corr is not None:
        with cols[1]:
            st.badge(corr.label, color="green" if corr.hit_at_1 else ("orange" if corr.matched else "red"))
    if trace.chains:
        st.markdown("**Chain:** " + _md(chain_text(trace, 0)))
        if len(trace.chains) > 1 and not compact:
            with st.expander(f"{len(trace.chains) - 1} more chain(s)"):
                for k in range(1, len(trace.chains)):
                    st.markdown(f"{k + 1}. " + _md(chain_text(trace, k)))
    if not compact:
        m = st.columns(5)
        m[0].metric("steps", len(trace.steps))
        m[1].metric("model calls", trace.model_calls or sum(len(s.model_calls) for s in trace.steps))
        m[2].metric("tokens in", trace.tokens_in)
        m[3].metric("tokens out", trace.tokens_out)
        m[4].metric("wall time", f"{trace.seconds:.1f} s")
        st.caption(f"method `{trace.method}` · model `{trace.model or '?'}` · graph `{trace.graph_name or '?'}` · "
                   f"topic: {', '.join(trace.topic_entities) or '(none)'} · params {json.dumps(trace.parameters)}")
    for note in trace.notes:
        st.caption(f"note: {note}")


def _md(text: str) -> str:
    """Plain text for st.markdown: escape markdown and HTML metacharacters."""
    out = str(text).replace("\\", "\\\\")
    for ch in "*_`[]<>#|$~":
        out = out.replace(ch, "\\" + ch)
    return out


def step_view(trace: Trace, index: int, graph: Any | None, max_nodes: int, context: int, height: int = 520) -> None:
    """Everything about one step (``index == len(steps)`` shows the final result)."""
    steps = trace.steps
    final = index >= len(steps)
    step = None if final else steps[index]
    method = (trace.method or "").lower()
    is_reads = step is not None and isinstance(step.extra.get("abstract_structure"), (dict, list))

    scene = step_scene(trace, index, graph, max_nodes=max_nodes, context=context)
    if is_reads:
        left, mid, right = st.columns([5, 4, 4])
    else:
        left, right = st.columns([3, 2])
        mid = None
    with left:
        show_graph(scene, height=height, alt=f"graph at {scene.title}")
    if mid is not None and step is not None:
        with mid:
            s_scene = abstract_structure_scene(step.extra.get("abstract_structure"))
            if s_scene is None:
                st.warning("This step's abstract structure S_k is not in the expected shape; raw data below.")
                st.json(step.extra.get("abstract_structure"), expanded=False)
            else:
                show_graph(s_scene, height=height - 80, alt="READS abstract structure")
    with right:
        if step is None:
            st.markdown("#### Final result")
            trace_summary(trace, compact=True)
        else:
            st.markdown(f"#### {_md(step.title or step.kind)}")
            facts = step_facts(step)
            st.caption(" · ".join(f"{k}: {v}" for k, v in facts.items() if v not in (None, "", 0, "0/0")))
            if step.choice:
                st.markdown(f"**Choice:** {_md(step.choice)}")
            if step.note:
                st.info(step.note)
            fig = charts.step_scores_figure(step)
            if fig is not None:
                st.plotly_chart(fig, width="stretch", key=f"scores-{index}", config=PLOTLY_CONFIG)
            elif not is_reads:
                st.caption("No scored candidates at this step.")
        if is_reads and step is not None and mid is None:
            pass
    if step is not None:
        _method_panels(trace, step, index, graph)
        if step.model_text:
            st.markdown("**Model text** (triplets highlighted)")
            chain = [(c.head, c.relation, c.tail) for c in trace.best_chain]
            st.html(highlight_model_text(step.model_text, graph, chain))
        if step.token_view:
            st.markdown("**Token-level view of the chosen triplet** (the graph constraint's allowed tokens and their probabilities)")
            fig = charts.token_figure(step.token_view)
            if fig is not None:
                st.plotly_chart(fig, width="stretch", key=f"tokens-{index}", config=PLOTLY_CONFIG)
            with st.expander("Token table"):
                st.html(token_view_html(step.token_view))
        _raw_step(step)
    else:
        _method_panels(trace, None, index, graph)


def _method_panels(trace: Trace, step: Step | None, index: int, graph: Any | None) -> None:
    upto = trace.steps if step is None else trace.steps[: index + 1]
    # RoK: key entities, paths, PageRank
    keys = next((s.extra["key_entities"] for s in reversed(upto) if isinstance(s.extra.get("key_entities"), list)), None)
    paths_step = next((s for s in reversed(upto) if isinstance(s.extra.get("paths"), list)), None)
    pr = next((s.extra["pagerank"] for s in reversed(upto) if isinstance(s.extra.get("pagerank"), dict)), None)
    if keys or paths_step or pr:
        with st.container(border=True):
            st.markdown("**RoK: key entities, paths and PageRank**")
            c1, c2 = st.columns(2)
            with c1:
                if keys:
                    st.markdown("Key entities: " + ", ".join(f"`{_md(str(k))}`" for k in keys))
                if paths_step is not None:
                    for j, path in enumerate(paths_step.extra["paths"][:20]):
                        st.markdown(f"path {j + 1}: " + _md(_path_text(path, graph)))
            with c2:
                fig = charts.pagerank_figure(pr) if pr else None
                if fig is not None:
                    st.plotly_chart(fig, width="stretch", key=f"pagerank-{index}", config=PLOTLY_CONFIG)
    # LPKG: sub-questions in their colours
    subs = [s for s in upto if "subquestion" in s.extra]
    plan = next((s.extra.get("sub_questions") for s in upto if isinstance(s.extra.get("sub_questions"), list)), None)
    if isinstance(plan, list):
        plan = [q for q in plan if isinstance(q, (str, int, float))]
    if subs or plan:
        from .colors import categorical
        from .html_utils import esc

        rows = []
        shown = set()
        for s in subs:
            idx = s.extra.get("subquestion")
            if not isinstance(idx, int) or isinstance(idx, bool) or idx in shown:
                continue
            shown.add(idx)
            ans = s.extra.get("answers")
            ans_text = ", ".join(map(str, ans)) if isinstance(ans, list) else ("" if ans is None else str(ans))
            rows.append(
                f'<div style="border-left:6px solid {categorical(idx)};padding:2px 8px;margin:3px 0">'
                f"<b>sub-question {idx + 1}</b>: {esc(s.extra.get('sub_question', ''))}"
                + (f" &rarr; <i>{esc(ans_text)}</i>" if ans_text else "") + "</div>"
            )
        if plan:
            for i, q in enumerate(plan):
                if i not in shown:
                    rows.append(f'<div style="border-left:6px solid #dee2e6;padding:2px 8px;margin:3px 0;color:#868e96">'
                                f"sub-question {i + 1}: {esc(q)} (not yet executed)</div>")
        if rows:
            with st.container(border=True):
                st.markdown("**LPKG: sub-questions** (each in its colour on the graph)")
                st.html("".join(rows))


def _path_text(path: Any, graph: Any | None) -> str:
    ids = path if isinstance(path, list) else []
    parts = []
    for tid in ids:
        if isinstance(tid, int) and graph is not None and graph.has_triplet_id(tid):
            parts.append(graph.triplet(tid).linearized())
        else:
            parts.append(f"#{tid}")
    return " | ".join(parts) if parts else json.dumps(path, default=str)[:200]


def _raw_step(step: Step) -> None:
    unknown = {k: v for k, v in step.extra.items() if k not in KNOWN_EXTRAS}
    label = "Raw step data" + (f" (includes {len(unknown)} field(s) this UI does not draw)" if unknown else "")
    with st.expander(label):
        if unknown:
            st.markdown("**Extras not drawn above:**")
            st.json(unknown, expanded=True)
        data = {
            "kind": step.kind, "beam": step.beam, "choice": step.choice, "chosen_triplet_id": step.chosen_triplet_id,
            "added_entities": step.added_entities, "subgraph_before": step.subgraph_before[:200],
            "subgraph_after": step.subgraph_after[:200], "extra": step.extra,
            "model_calls": [{"purpose": c.purpose, "prompt_tokens": c.prompt_tokens, "output_tokens": c.output_tokens,
                             "forward_passes": c.forward_passes, "seconds": c.seconds} for c in step.model_calls],
        }
        st.json(json.loads(json.dumps(data, default=str)), expanded=False)
        prompts = [c for c in step.model_calls if c.prompt]
        for c in prompts[:3]:
            st.markdown(f"Prompt of `{_md(c.purpose)}`:")
            st.code(c.prompt[-4000:], language=None)
