"""Plotly figures: candidate scores per step, token probabilities, PageRank, relation counts.

Figures use the same score colours as the graph (`colors.score_color`), so the
tallest bar and the darkest candidate edge are the same triplet.
"""

from __future__ import annotations

import math
import textwrap
from collections import Counter
from typing import Any, Callable, Sequence

import plotly.graph_objects as go

from kgqa_core.trace.schema import Candidate, Step, TokenPosition

from . import colors as C
from .html_utils import plotly_text
from .scene import truncate
from .trace_tables import is_partial

MAX_BARS = 25


TOKEN_FONT = 12


def _layout(fig: go.Figure, title: str, height: int) -> go.Figure:
    """Transparent backgrounds: Streamlit's theme (light or dark, following the browser) shows through."""
    fig.update_layout(
        title={"text": plotly_text(title), "font": {"size": 14}}, height=height,
        margin={"l": 10, "r": 10, "t": 40, "b": 30}, font={"size": 12},
        plot_bgcolor="rgba(0,0,0,0)", paper_bgcolor="rgba(0,0,0,0)", showlegend=False,
    )
    return fig


def wrap_label(text: str, width: int = 44) -> str:
    """Plotly-safe label wrapped onto lines of about ``width`` characters; nothing is cut."""
    lines = textwrap.wrap(str(text), width=width, break_long_words=True, break_on_hyphens=False) or [""]
    return "<br>".join(plotly_text(line) for line in lines)


def _finite(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def candidate_order(cands: Sequence[Candidate]) -> list[Candidate]:
    """Kept first, then fully scored, then partial (upper bounds); best score first within each group."""
    return sorted(cands, key=lambda c: (not c.kept, is_partial(c), -float(c.score)))


def step_scores_figure(
    step: Step,
    unit: str = "score",
    logprob: bool = False,
    label_of: Callable[[Candidate], str] | None = None,
    reason_of: Callable[[Candidate], str] | None = None,
) -> go.Figure | None:
    """Horizontal bars of the step's candidates, kept ones first; None without scored candidates.

    One unit on the axis (``unit``; log-probability for DoG and READS, with
    the probability only in the tooltip).  Partial candidates (the search
    did not finish them) are hatched and labelled "≤ bound".  Labels are
    wrapped, never cut, so two candidates that differ only at the end stay
    apart.  Each bar's score is written on the line under its label (in the
    axis, which grows to fit), not beside the bar, where a narrow column cut
    it ("≤ -16.06 p").  The hatch takes a colour that stands out from its
    bar, and every bar has an outline that shows on a light or dark page.
    """
    cands = [c for c in step.candidates if _finite(c.score)]
    if not cands:
        return None
    ordered = candidate_order(cands)
    shown = ordered[:MAX_BARS]
    norm_of = dict(zip(map(id, cands), C.normalise([float(c.score) for c in cands])))
    label_of = label_of or (lambda c: c.label or (" -> ".join(c.triplet) if c.triplet else "?"))
    labels, seen = [], Counter()
    for c in shown:
        base_label = wrap_label(label_of(c))
        seen[base_label] += 1
        partial = is_partial(c)
        value = ("\u2713 kept \u00b7 " if c.kept else "") + ("\u2264 " if partial else "") + f"{float(c.score):.2f}" \
            + (" (partial)" if partial else "")
        numbered = base_label if seen[base_label] == 1 else f"{base_label} ({seen[base_label]})"
        labels.append(f"{numbered}<br><i>{value}</i>")
    lo = min(float(c.score) for c in cands)
    hi = max(float(c.score) for c in cands)
    base = 0.0 if lo >= 0 else lo - 0.08 * ((hi - lo) or abs(lo) or 1.0)
    hover = []
    for c in shown:
        partial = is_partial(c)
        le = "\u2264 " if partial else ""
        val = f"{le}{float(c.score):.2f}"
        lines = [wrap_label(label_of(c), 60), f"{plotly_text(unit)}: {val}"]
        if logprob:
            prob = c.prob if (c.prob is not None and not partial) else math.exp(min(float(c.score), 0.0))
            lines.append(f"probability {le}{prob:.3g}")
        if partial:
            lines.append("partial: the search stopped before finishing it; the score is an upper bound")
        if reason_of is not None:
            lines.append(plotly_text(reason_of(c)))
        if c.beam is not None:
            lines.append(f"beam {c.beam}")
        hover.append("<br>".join(lines))
    colours = [C.score_color(norm_of[id(c)]) for c in shown]
    fig = go.Figure(go.Bar(
        x=[float(c.score) - base for c in shown], base=None if base == 0.0 else base, y=labels, orientation="h",
        marker={"color": colours,
                "pattern": {"shape": ["/" if is_partial(c) else "" for c in shown], "fillmode": "overlay",
                            "fgcolor": [C.hatch_color(col) for col in colours], "fgopacity": 0.9, "solidity": 0.35},
                "line": {"color": [C.CHAIN if c.kept else C.BAR_OUTLINE for c in shown],
                         "width": [2.5 if c.kept else 1.0 for c in shown]}},
        hovertext=hover, hoverinfo="text",
    ))
    fig.update_yaxes(autorange="reversed", automargin=True, tickfont={"size": 12})
    span = max(float(c.score) for c in shown) - base or 1.0
    fig.update_xaxes(title_text=plotly_text(unit), range=[base, base + span * 1.05], tickfont={"size": 12})
    extra = f" (top {MAX_BARS} of {len(cands)})" if len(cands) > MAX_BARS else ""
    n_lines = sum(label.count("<br>") + 1 for label in labels)
    return _layout(fig, f"Candidates{extra} (\u2713 kept, first)", height=max(220, 18 * n_lines + 10 * len(shown) + 100))


def token_figure(positions: Sequence[TokenPosition], top_k: int = 6) -> go.Figure | None:
    """A heatmap: one column per decoding position of the chosen triplet, rows = allowed tokens by rank."""
    if not positions:
        return None
    top_k = max(1, min(top_k, max(len(p.allowed) for p in positions)))  # no empty rows
    cols = []
    z, text, hover = [], [], []
    for r in range(top_k):
        z.append([]); text.append([]); hover.append([])
    for i, pos in enumerate(positions):
        cols.append(plotly_text(f"{i + 1}: {visible_token(pos.chosen)}"))
        allowed = sorted(pos.allowed, key=lambda o: o.prob, reverse=True)[:top_k]
        for r in range(top_k):
            if r < len(allowed):
                opt = allowed[r]
                z[r].append(opt.prob)
                mark = "\u2713" if opt.token_id == pos.chosen_id else ""
                text[r].append(plotly_text(f"{mark}{truncate(visible_token(opt.token), 10)}"))
                hover[r].append(plotly_text(f"{visible_token(opt.token)} p={opt.prob:.4f}"))
            else:
                z[r].append(None); text[r].append(""); hover[r].append("")
    fig = go.Figure(go.Heatmap(
        z=z, x=cols, y=[f"#{r + 1}" for r in range(top_k)], text=text,
        # a fixed 12 px: plotly shrank the cell text to fit (8 px labels)
        texttemplate="%{text}", textfont={"size": TOKEN_FONT}, hovertext=hover, hoverinfo="text",
        colorscale=C.SCORE_SCALE, zmin=0, zmax=1, colorbar={"title": {"text": "p"}, "thickness": 10},
    ))
    fig.update_yaxes(autorange="reversed", title_text="allowed token rank", tickfont={"size": TOKEN_FONT})
    fig.update_xaxes(tickangle=-30, tickfont={"size": TOKEN_FONT})
    return _layout(fig, "Allowed tokens at each position of the chosen triplet (\u2713 = chosen)",
                   height=190 + 38 * top_k)


def visible_token(tok: str) -> str:
    """Make whitespace in a token visible."""
    return str(tok).replace(" ", "\u2423").replace("\n", "\u21b5").replace("\t", "\u21e5") or "\u2205"


def pagerank_figure(pagerank: dict[str, Any], top: int = 20) -> go.Figure | None:
    items = [(str(k), float(v)) for k, v in pagerank.items() if isinstance(v, (int, float))]
    if not items:
        return None
    items.sort(key=lambda kv: kv[1], reverse=True)
    items = items[:top]
    fig = go.Figure(go.Bar(
        x=[v for _, v in items], y=[plotly_text(truncate(k, 40)) for k, _ in items], orientation="h",
        marker={"color": [C.score_color(t) for t in C.normalise([v for _, v in items])]},
        hovertext=[plotly_text(f"{k}: {v:.4f}") for k, v in items], hoverinfo="text",
    ))
    fig.update_yaxes(autorange="reversed", automargin=True)
    return _layout(fig, "PageRank of entities (RoK)", height=max(200, 26 * len(items) + 80))


def relation_stats_figure(graph: Any, top: int = 30) -> go.Figure | None:
    counts = Counter(t.relation for t in graph)
    if not counts:
        return None
    items = counts.most_common(top)
    fig = go.Figure(go.Bar(
        x=[n for _, n in items], y=[plotly_text(truncate(r, 40)) for r, _ in items], orientation="h",
        marker={"color": C.categorical(0)},
        hovertext=[plotly_text(f"{r}: {n} triplets") for r, n in items], hoverinfo="text",
    ))
    fig.update_yaxes(autorange="reversed", automargin=True)
    more = f" (top {top} of {len(counts)})" if len(counts) > top else ""
    return _layout(fig, f"Triplets per relation{more}", height=max(220, 24 * len(items) + 80))


def degree_figure(graph: Any, top: int = 20) -> go.Figure | None:
    ents = sorted(graph.entities, key=graph.degree, reverse=True)[:top]
    if not ents:
        return None
    fig = go.Figure(go.Bar(
        x=[graph.degree(e) for e in ents], y=[plotly_text(truncate(e, 40)) for e in ents], orientation="h",
        marker={"color": C.categorical(1)},
        hovertext=[plotly_text(f"{e}: degree {graph.degree(e)}") for e in ents], hoverinfo="text",
    ))
    fig.update_yaxes(autorange="reversed", automargin=True)
    return _layout(fig, "Best-connected entities", height=max(220, 24 * len(ents) + 80))
