"""The Evaluate page's charts: answer quality with intervals, per question type, wall time, the error taxonomy.

Pure plotly over the evaluation's summaries (no Streamlit), so they are
unit-tested and the page stays a thin shell.  Untrusted text (method names,
question types) goes through `plotly_text`; backgrounds are transparent so
the app's light or dark theme shows through.
"""

from __future__ import annotations

import plotly.graph_objects as go

from kgqa_core.eval.metrics import ERROR_CLASSES, GroupSummary
from kgqa_core.eval.taxonomy import ERROR_CLASS_DESCRIPTIONS

from .html_utils import plotly_text

HEADLINE = [("hits1", "Hits@1"), ("f1", "F1"), ("exact_match", "Exact match"), ("triplet_f1", "Triplet-F1")]
TRANSPARENT = {"paper_bgcolor": "rgba(0,0,0,0)", "plot_bgcolor": "rgba(0,0,0,0)"}


def class_name(code: str) -> str:
    """ "E1" -> "E1 search error" (the taxonomy's words, not only its code)."""
    desc = ERROR_CLASS_DESCRIPTIONS.get(code, "")
    return f"{code} {desc.split(':', 1)[0]}" if desc else code


def _est(g: GroupSummary, key: str):
    return getattr(g, key)


def metric_figure(groups: list[GroupSummary], keys=HEADLINE, title: str = "Answer quality per method") -> go.Figure:
    fig = go.Figure()
    for g in groups:
        xs, ys, hi, lo = [], [], [], []
        for key, label in keys:
            e = _est(g, key)
            if e is None:
                continue
            xs.append(label)
            ys.append(e.value)
            hi.append(e.high - e.value)
            lo.append(e.value - e.low)
        fig.add_bar(name=plotly_text(g.method), x=xs, y=ys, error_y=dict(type="data", array=hi, arrayminus=lo, visible=True))
    fig.update_layout(barmode="group", title=title, yaxis=dict(range=[0, 1.05], title="score (95% CI)"),
                      height=360, margin=dict(l=10, r=10, t=40, b=10), legend_title_text="method", **TRANSPARENT)
    return fig


def type_figure(groups: list[GroupSummary], key: str = "hits1", label: str = "Hits@1") -> go.Figure:
    fig = go.Figure()
    for m in dict.fromkeys(g.method for g in groups):
        rows = [g for g in groups if g.method == m and _est(g, key) is not None]
        fig.add_bar(
            name=plotly_text(m), x=[plotly_text(g.type) for g in rows], y=[_est(g, key).value for g in rows],
            error_y=dict(type="data", visible=True, array=[_est(g, key).high - _est(g, key).value for g in rows],
                         arrayminus=[_est(g, key).value - _est(g, key).low for g in rows]),
            customdata=[g.n for g in rows], hovertemplate="%{x}: %{y:.3f} (n=%{customdata})<extra></extra>",
        )
    fig.update_layout(barmode="group", title=f"{label} per question type", yaxis=dict(range=[0, 1.05]),
                      height=340, margin=dict(l=10, r=10, t=40, b=10), **TRANSPARENT)
    return fig


def time_figure(records: list[dict]) -> go.Figure:
    fig = go.Figure()
    for m in dict.fromkeys(r["method"] for r in records):
        fig.add_box(name=plotly_text(m), y=[r["metrics"]["seconds"] for r in records if r["method"] == m], boxpoints="all")
    fig.update_layout(title="Wall time per question (s)", height=320, margin=dict(l=10, r=10, t=40, b=10),
                      showlegend=False, **TRANSPARENT)
    return fig


def taxonomy_figure(groups: list[GroupSummary]) -> go.Figure | None:
    rows = [g for g in groups if g.error_classes]
    if not rows:
        return None
    fig = go.Figure()
    for c in ERROR_CLASSES:
        fig.add_bar(name=plotly_text(class_name(c)), x=[plotly_text(g.method) for g in rows],
                    y=[g.error_classes.get(c, 0) for g in rows], hovertext=plotly_text(ERROR_CLASS_DESCRIPTIONS[c]),
                    hoverinfo="text+y")
    fig.update_layout(barmode="stack", title="READS error taxonomy (methods that expose their subgraph)",
                      height=320, margin=dict(l=10, r=10, t=40, b=10), **TRANSPARENT)
    return fig
