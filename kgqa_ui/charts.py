"""Plotly figures: candidate scores per step, token probabilities, PageRank, relation counts.

Figures use the same score colours as the graph (`colors.score_color`), so the
tallest bar and the darkest candidate edge are the same triplet.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Sequence

import plotly.graph_objects as go

from kgqa_core.trace.schema import Step, TokenPosition

from . import colors as C
from .scene import truncate

MAX_BARS = 25


def _layout(fig: go.Figure, title: str, height: int) -> go.Figure:
    fig.update_layout(
        title={"text": title, "font": {"size": 14}}, height=height, margin={"l": 10, "r": 10, "t": 40, "b": 30},
        plot_bgcolor="#ffffff", paper_bgcolor="#ffffff", showlegend=False,
    )
    return fig


def step_scores_figure(step: Step) -> go.Figure | None:
    """Horizontal bars of the step's candidates (best at the top); None without scored candidates."""
    cands = [c for c in step.candidates if isinstance(c.score, (int, float))]
    if not cands:
        return None
    cands = sorted(cands, key=lambda c: c.score, reverse=True)
    shown = cands[:MAX_BARS]
    norm = C.normalise([c.score for c in cands])[: len(shown)]
    labels, seen = [], Counter()
    for c in shown:
        base = truncate(c.label or (" -> ".join(c.triplet) if c.triplet else "?"), 42)
        seen[base] += 1
        labels.append(base if seen[base] == 1 else f"{base} ({seen[base]})")
    hover = [
        f"{c.label}<br>score {c.score:.4f}" + (f"<br>p = {c.prob:.4f}" if c.prob is not None else "")
        + ("<br>kept" if c.kept else "<br>not kept") + (f"<br>beam {c.beam}" if c.beam is not None else "")
        for c in shown
    ]
    use_prob = all(c.prob is not None for c in shown)
    lo = min(c.score for c in cands)
    base = 0.0 if use_prob or lo >= 0 else lo - 0.05 * (max(c.score for c in cands) - lo or 1.0)
    xs = [float(c.prob) for c in shown] if use_prob else [c.score - base for c in shown]
    fig = go.Figure(go.Bar(
        x=xs, base=None if base == 0.0 else base, y=labels, orientation="h",
        marker={"color": [C.score_color(t) for t in norm],
                "line": {"color": [C.CHAIN if c.kept else "rgba(0,0,0,0)" for c in shown], "width": 2.5}},
        hovertext=[h.replace("<", "&lt;").replace("&lt;br>", "<br>") for h in hover], hoverinfo="text",
        text=[("\u2713 " if c.kept else "") + (f"p={c.prob:.2f}" if c.prob is not None else f"{c.score:.2f}") for c in shown],
        textposition="auto",
    ))
    fig.update_yaxes(autorange="reversed", automargin=True)
    xlabel = "probability" if use_prob else ("score (log-probability)" if lo < 0 else "score")
    fig.update_xaxes(title_text=xlabel, gridcolor="#f1f3f5")
    extra = f" (top {MAX_BARS} of {len(cands)})" if len(cands) > MAX_BARS else ""
    return _layout(fig, f"Candidate scores{extra} \u2014 outlined = kept", height=max(220, 34 * len(shown) + 90))


def token_figure(positions: Sequence[TokenPosition], top_k: int = 6) -> go.Figure | None:
    """A heatmap: one column per decoding position of the chosen triplet, rows = allowed tokens by rank."""
    if not positions:
        return None
    cols = []
    z, text, hover = [], [], []
    for r in range(top_k):
        z.append([]); text.append([]); hover.append([])
    for i, pos in enumerate(positions):
        cols.append(f"{i + 1}: {visible_token(pos.chosen)}")
        allowed = sorted(pos.allowed, key=lambda o: o.prob, reverse=True)[:top_k]
        for r in range(top_k):
            if r < len(allowed):
                opt = allowed[r]
                z[r].append(opt.prob)
                mark = "\u2713" if opt.token_id == pos.chosen_id else ""
                text[r].append(f"{mark}{truncate(visible_token(opt.token), 10)}")
                hover[r].append(f"{visible_token(opt.token)} p={opt.prob:.4f}".replace("<", "&lt;"))
            else:
                z[r].append(None); text[r].append(""); hover[r].append("")
    fig = go.Figure(go.Heatmap(
        z=z, x=cols, y=[f"#{r + 1}" for r in range(top_k)], text=[[t.replace("<", "&lt;") for t in row] for row in text],
        texttemplate="%{text}", hovertext=hover, hoverinfo="text", colorscale=C.SCORE_SCALE, zmin=0, zmax=1,
        colorbar={"title": {"text": "p"}, "thickness": 10},
    ))
    fig.update_yaxes(autorange="reversed", title_text="allowed token rank")
    fig.update_xaxes(tickangle=-30)
    return _layout(fig, "Allowed tokens at each position of the chosen triplet (\u2713 = chosen)", height=320)


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
        x=[v for _, v in items], y=[truncate(k, 40) for k, _ in items], orientation="h",
        marker={"color": [C.score_color(t) for t in C.normalise([v for _, v in items])]},
        hovertext=[f"{k.replace('<', '&lt;')}: {v:.4f}" for k, v in items], hoverinfo="text",
    ))
    fig.update_yaxes(autorange="reversed", automargin=True)
    return _layout(fig, "PageRank of entities (RoK)", height=max(200, 26 * len(items) + 80))


def relation_stats_figure(graph: Any, top: int = 30) -> go.Figure | None:
    counts = Counter(t.relation for t in graph)
    if not counts:
        return None
    items = counts.most_common(top)
    fig = go.Figure(go.Bar(
        x=[n for _, n in items], y=[truncate(r, 40) for r, _ in items], orientation="h",
        marker={"color": C.categorical(0)},
        hovertext=[f"{r.replace('<', '&lt;')}: {n} triplets" for r, n in items], hoverinfo="text",
    ))
    fig.update_yaxes(autorange="reversed", automargin=True)
    more = f" (top {top} of {len(counts)})" if len(counts) > top else ""
    return _layout(fig, f"Triplets per relation{more}", height=max(220, 24 * len(items) + 80))


def degree_figure(graph: Any, top: int = 20) -> go.Figure | None:
    ents = sorted(graph.entities, key=graph.degree, reverse=True)[:top]
    if not ents:
        return None
    fig = go.Figure(go.Bar(
        x=[graph.degree(e) for e in ents], y=[truncate(e, 40) for e in ents], orientation="h",
        marker={"color": C.categorical(1)},
        hovertext=[f"{e.replace('<', '&lt;')}: degree {graph.degree(e)}" for e in ents], hoverinfo="text",
    ))
    fig.update_yaxes(autorange="reversed", automargin=True)
    return _layout(fig, "Best-connected entities", height=max(220, 24 * len(ents) + 80))
