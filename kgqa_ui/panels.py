"""Streamlit renderers for traces: summary, one step, method panels, the graph iframe.

Pages call these; they only read traces.  What a method adds (names, scene
layers, panels, score legends) comes from its view (`kgqa_ui.views`); this
module draws what every trace has.  Every piece of text that comes from a
trace, a graph, a model or a URL goes through `md_text` (or a text element,
or HTML escaping), so it is shown as typed, never as Markdown or HTML.  A
view that fails on a malformed step is caught: the step is shown as JSON
text with a note, and the page keeps working.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any, Iterator

import streamlit as st

from kgqa_core.answers.chain_entities import answer_label
from kgqa_core.trace.schema import Step, Trace

from . import charts
from .graph_frame import show_graph
from .html_utils import md_text
from .cost_view import cost_breakdown
from .text_view import highlight_model_text, token_view_html
from .trace_scene import step_scene, step_title
from .trace_tables import chain_text, correctness, faithfulness_badge, grounding_badge, reading_lines, step_facts
from .views import StepView, view_for_step

PLOTLY_CONFIG = {"displayModeBar": False}



@contextlib.contextmanager
def page_guard(page: str) -> Iterator[None]:
    """Turn any error on a page into a clear message instead of a traceback."""
    try:
        yield
    except Exception as exc:  # st.stop / st.rerun are BaseExceptions and pass through
        st.error(f"The {page} page hit a problem: {type(exc).__name__}: {md_text(exc)}", icon=":material/error:")
        st.caption("Your runs are saved on disk; reloading the page or choosing another run usually helps.")
    else:
        from . import persist

        persist.save()  # what this page changed survives a reload (a no-op when nothing did)


def badge(trace: Trace, graph: Any | None = None) -> None:
    """The faithfulness badge, then the answer-grounding badge (each on its own line)."""
    b = faithfulness_badge(trace)
    st.badge(md_text(b.label), color=b.color, help=md_text(b.help))  # type: ignore[arg-type]
    g = grounding_badge(trace, graph)
    if g is not None:
        st.badge(md_text(g.label), color=g.color, help=md_text(g.help))  # type: ignore[arg-type]


def answers_line(trace: Trace) -> str:
    """Markdown for the answers: entity names, escaped, each marked as text when the model wrote it otherwise
    ("written as 'German'") or it names no graph entity ("not a graph entity"): `answer_label`."""
    names = [answer_label(a) for a in trace.answers]
    return "**Answer:** " + (", ".join(md_text(n) for n in names) if names else "(no answer)")


def trace_summary(trace: Trace, gold: list[str] | None = None, compact: bool = False, graph: Any | None = None,
                  show_chain: bool = True, inline: bool = False, show_question: bool = False) -> None:
    """Answer, chain, faithfulness, grounding and cost of a run.

    The run is graded against ``gold`` when given (Compare's field), else against the gold saved
    with it (`Trace.gold_answers`), never against whatever the Ask page holds now: a card keeps its
    own question's verdict when the next question's gold is typed.  ``show_question`` heads the
    card with the run's own question.  ``inline`` puts the answer and the badges on one row
    (Replay's header, to keep the graph above the fold); otherwise they stack (narrow cards).
    """
    if show_question:
        st.markdown("**Q:** " + md_text(trace.question))
    if trace.error:
        st.error("This run ended with an error: " + md_text(trace.error))
    gold = list(gold) if gold else list(trace.gold_answers)
    corr = correctness(trace, gold)
    f, g = faithfulness_badge(trace), grounding_badge(trace, graph)
    slots: list[Any]
    if inline:
        cols = st.columns([4, 3, 3] if corr is None else [4, 3, 3, 2], vertical_alignment="center")
        cols[0].markdown(answers_line(trace))
        slots = list(cols[1:]) + [st]
    else:
        st.markdown(answers_line(trace))
        slots = [st] * 3 if compact else list(st.columns(3))
    slots[0].badge(md_text(f.label), color=f.color, help=md_text(f.help))  # type: ignore[arg-type]
    if g is not None:
        slots[1].badge(md_text(g.label), color=g.color, help=md_text(g.help))  # type: ignore[arg-type]
    if corr is not None:
        slots[2].badge(md_text(corr.label), icon=corr.icon, color=corr.color,  # type: ignore[arg-type]
                       help=md_text("gold: " + " | ".join(gold)))
    if trace.chains and show_chain:
        st.markdown("**Chain:** " + md_text(chain_text(trace, 0)))
        if len(trace.chains) > 1 and not compact:
            with st.expander(f"{len(trace.chains) - 1} more chain(s)"):
                for k in range(1, len(trace.chains)):
                    st.markdown(f"{k + 1}\\. " + md_text(chain_text(trace, k)))
    if not inline:
        question_reading(trace)
    if not compact:
        m = st.columns(5)
        m[0].metric("steps", len(trace.steps))
        m[1].metric("model calls", trace.model_calls or sum(len(s.model_calls) for s in trace.steps))
        m[2].metric("tokens in", trace.tokens_in)
        m[3].metric("tokens out", trace.tokens_out)
        m[4].metric("wall time", f"{trace.seconds:.1f} s")
        st.caption(
            "method " + md_text(trace.method) + " · model " + md_text(trace.model or "?") + " · graph "
            + md_text(trace.graph_name or "?") + " · topic: " + md_text(", ".join(trace.topic_entities) or "(none)")
            + " · gold: " + md_text(" | ".join(trace.gold_answers) or "(none given)")
            + " · params " + md_text(json.dumps(trace.parameters, default=str, ensure_ascii=False))
        )
    if not inline:  # folded on a compact card; plain where the summary may sit in an expander (Replay's)
        cost_breakdown(trace, fold=compact)
    for note in trace.notes:
        st.caption("note: " + md_text(note))


def question_reading(trace: Trace) -> None:
    """The short "Question reading" section: the reading's explanation and plans with their confidence
    (``trace.extra["reading"]``) and the user's relation vocabulary (``extra["vocabulary"]``); nothing without them."""
    read, words = reading_lines(trace)
    if not read and not words:
        return
    st.markdown("**Question reading**")
    for line in read + words:
        st.caption(md_text(line))


def _safe_view(trace: Trace, step: Step | None) -> StepView:
    try:
        return view_for_step(trace, step)
    except Exception:
        from .views import GENERIC

        return GENERIC


def _guarded(what: str, step: Step | None, fn, *args) -> None:
    """Run one view hook; a failure shows the step as JSON text with a note instead of breaking the page."""
    try:
        fn(*args)
    except Exception as exc:
        st.warning(f"This step's {what} could not be drawn ({type(exc).__name__}: {md_text(exc)}); its data is "
                   "shown as JSON text instead.", icon=":material/warning:")
        if step is not None:
            st.json(json.loads(json.dumps({"kind": step.kind, "title": step.title, "extra": step.extra}, default=str)),
                    expanded=False)


def step_view(trace: Trace, index: int, graph: Any | None, max_nodes: int, context: int, height: int = 520) -> None:
    """Everything about one step (``index == len(steps)`` shows the final result)."""
    steps = trace.steps
    final = index >= len(steps)
    step = None if final else steps[index]
    view = _safe_view(trace, step)
    try:
        side = step is not None and view.has_side_panel(step)
    except Exception:
        side = False

    if side:
        left, mid, right = st.columns([5, 4, 4])
    else:
        left, right = st.columns([3, 2])
        mid = None
    with left:
        try:
            scene = step_scene(trace, index, graph, max_nodes=max_nodes, context=context)
        except Exception as exc:
            st.warning(f"The graph for this step could not be drawn ({type(exc).__name__}: {md_text(exc)}).")
        else:
            show_graph(scene, height=height, alt=f"graph at {scene.title}")
    if mid is not None and step is not None:
        with mid:
            _guarded("abstract structure", step, view.render_side_panel, step, height)
    with right:
        if step is None:
            st.markdown("#### Final result")
            trace_summary(trace, compact=True, graph=graph)
        else:
            st.markdown("#### " + md_text(step_title(trace, index)))
            _guarded("facts", step, _step_facts, view, step, index)
    if step is not None:
        _guarded("panels", step, view.render_panels, trace, step, index, graph)
        _guarded("model text", step, _model_text, view, trace, step, index, graph)
        _raw_step(view, step)
    else:
        _guarded("panels", None, view.render_panels, trace, None, index, graph)


def _step_facts(view: StepView, step: Step, index: int) -> None:
    facts = step_facts(step)
    st.caption(md_text(" · ".join(f"{k}: {v}" for k, v in facts.items() if v not in (None, "", 0, "0/0"))))
    if step.title:
        st.caption("as recorded: " + md_text(step.title))
    if step.choice:
        st.markdown("**Choice:** " + md_text(step.choice))
    if step.note:
        st.info(md_text(step.note))
    fig = charts.step_scores_figure(
        step, unit=view.score_unit_for(step), logprob=view.scores_are_logprobs(step),
        label_of=lambda c: view.candidate_label(step, c), reason_of=lambda c: view.candidate_reason(step, c),
    )
    if fig is not None:
        st.plotly_chart(fig, width="stretch", key=f"scores-{index}", config=PLOTLY_CONFIG)
        st.caption(md_text(view.score_legend(step)))
    elif not view.has_side_panel(step):
        st.caption("No scored candidates at this step.")


def _model_text(view: StepView, trace: Trace, step: Step, index: int, graph: Any | None) -> None:
    text = view.display_text(step)
    if text:
        st.markdown("**Model text** (triplets highlighted)")
        chain = [(c.head, c.relation, c.tail) for c in trace.best_chain]
        st.html(highlight_model_text(text, graph, chain))
    if step.token_view:
        what = ("the answer, chosen among the entities the chain's path reaches and those it wrote" if step.kind == "dog.answer"
                else "the chosen triplet")
        st.markdown(f"**Token-level view of {what}** (the graph constraint's allowed tokens and their probabilities)")
        fig = charts.token_figure(step.token_view)
        if fig is not None:
            st.plotly_chart(fig, width="stretch", key=f"tokens-{index}", config=PLOTLY_CONFIG)
        unread = step.extra.get("unread") if isinstance(step.extra, dict) else None
        if isinstance(unread, int) and unread > 0:
            st.caption(f"The last {unread} token{'s' if unread > 1 else ''} of the name are not shown: once it was "
                       "the only name left, the graph wrote them without a model pass.")
        with st.expander("Token table"):
            st.html(token_view_html(step.token_view))


def _raw_step(view: StepView, step: Step) -> None:
    unknown = view.undrawn_extras(step)
    label = "Raw step data" + (f" (includes {len(unknown)} field(s) not drawn above)" if unknown else "")
    with st.expander(label):
        st.caption("step type: " + md_text(step.kind))
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
            st.caption("Prompt of " + md_text(c.purpose) + ":")
            st.code(c.prompt[-4000:], language=None)
