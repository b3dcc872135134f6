"""The model's own words, with the triplets it wrote highlighted, and DoG's token-level view.

Model text is untrusted (it may quote graph names containing markup), so each
segment is HTML-escaped before the highlight tags are put around it.
"""

from __future__ import annotations

import re
from typing import Any, Sequence

from kgqa_core.graph.readings import REVERSE_SUFFIX, find_written
from kgqa_core.trace.schema import TokenPosition

from .charts import visible_token
from .html_utils import esc

# chunks are split on these; a chunk holding "a -> b -> c" is a triplet
# ("(reverse)" is part of a backward reading's relation, not a bracket)
_SPLIT_RE = re.compile(r"(\n|\||;|\((?!reverse\))|(?<!\(reverse)\)|\[|\]|\*)")

STYLE = """<style>
.kg-text { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 13px; white-space: pre-wrap;
           background:#f8f9fa; border:1px solid #e9ecef; border-radius:6px; padding:10px; line-height:1.55; }
.kg-ok { background:#d3f9d8; border-bottom:2px solid #2f9e44; border-radius:3px; }
.kg-ill { background:#ffe3e3; border-bottom:2px dashed #e03131; border-radius:3px; }
.kg-chain { background:#ffe8cc; border-bottom:3px solid #e8590c; border-radius:3px; font-weight:600; }
.kg-legend { font-size:12px; color:#495057; margin:4px 0 8px 0; }
.kg-legend span { padding:1px 6px; margin-right:8px; }
.kg-tok { border-collapse:collapse; font-family: ui-monospace, Menlo, Consolas, monospace; font-size:12px; }
.kg-tok td, .kg-tok th { border:1px solid #e9ecef; padding:3px 6px; text-align:left; vertical-align:top; }
.kg-tok th { background:#f1f3f5; }
.kg-tok .chosen { font-weight:700; outline:2px solid #e8590c; }
.kg-tok .bar { height:4px; background:#2498c1; margin-top:2px; }
.kg-scroll { overflow-x:auto; max-width:100%; }
@media (prefers-color-scheme: dark) {
  .kg-text { background:#1a1d24; border-color:#343a40; color:#e9ecef; }
  .kg-ok { background:#1f3d27; } .kg-ill { background:#4a1f1f; } .kg-chain { background:#4a2e12; }
  .kg-legend { color:#ced4da; }
  .kg-tok td, .kg-tok th { border-color:#343a40; color:#e9ecef; } .kg-tok th { background:#22262e; }
}
</style>"""


def _clean(part: str) -> str:
    return part.strip().strip("\"'`").strip()


def _classify(h: str, r: str, t: str, graph: Any | None, chain_set: set) -> tuple[str, str]:
    if (h, r, t) in chain_set:
        return "kg-chain", "on the chosen chain"
    if r.endswith(REVERSE_SUFFIX) and (t, r[: -len(REVERSE_SUFFIX)], h) in chain_set:
        return "kg-chain", "on the chosen chain (read backwards)"
    if graph is None:
        return "kg-ok", "triplet (graph not loaded)"
    found, backwards = find_written(graph, h, r, t)
    if found is not None:
        return "kg-ok", "in the graph (read backwards)" if backwards else "in the graph"
    return "kg-ill", "not in the graph"


def _triplet_of(chunk: str, graph: Any | None, chain_set: set) -> tuple[str, str] | None:
    parts = chunk.split("->")
    if len(parts) != 3:
        return None
    h, r, t = (_clean(p) for p in parts)
    if not (h and r and t):
        return None
    cls, tip = _classify(h, r, t, graph, chain_set)
    if cls == "kg-ill" and ":" in h:  # "Step 2: head -> ..." : drop the prefix
        cls2, tip2 = _classify(_clean(h.rsplit(":", 1)[1]), r, t, graph, chain_set)
        if cls2 != "kg-ill":
            return cls2, tip2
    return cls, tip


def _highlight_chunks(text: str, graph: Any | None, chain_set: set) -> str:
    """Text outside ``< ... >`` spans: chunks of the context's ``a -> b -> c | d -> e -> f`` form."""
    out = []
    for chunk in _SPLIT_RE.split(text):
        found = _triplet_of(chunk, graph, chain_set) if "->" in chunk else None
        if found is None:
            out.append(esc(chunk))
            continue
        cls, tip = found
        lead = len(chunk) - len(chunk.lstrip())
        trail = len(chunk.rstrip())
        out.append(esc(chunk[:lead]) + f'<span class="{cls}" title="{esc(tip)}">{esc(chunk[lead:trail])}</span>'
                   + esc(chunk[trail:]))
    return "".join(out)


def highlight_model_text(text: str, graph: Any | None = None, chain: Sequence[tuple[str, str, str]] = ()) -> str:
    """HTML of ``text`` with each written triplet marked: on the chain, in the graph, or not in the graph.

    The ``< h -> r -> t >`` spans of DoG and CoT are found by the same parser
    the CoT check uses (`parse_written_triplets`: a missing ``<``, an unclosed
    span, names containing ``->``); the rest of the text is read in chunks, for
    text that copies the context's ``a -> b -> c | ...`` form.
    """
    if not text:
        return STYLE + '<div class="kg-text"><i>(no model text at this step)</i></div>'
    from kgqa_core.decoding.prompt import parse_written_triplets

    chain_set = {tuple(_clean(x) for x in t) for t in chain}
    out = []
    pos = 0
    for w in parse_written_triplets(text, graph):
        if w.start < pos:
            continue
        out.append(_highlight_chunks(text[pos:w.start], graph, chain_set))
        cls, tip = _classify(w.head, w.relation, w.tail, graph, chain_set)
        if not w.closed:
            tip += "; never closed with '>'"
        out.append(f'<span class="{cls}" title="{esc(tip)}">{esc(text[w.start:w.end])}</span>')
        pos = w.end
    out.append(_highlight_chunks(text[pos:], graph, chain_set))
    legend = (
        '<div class="kg-legend"><span class="kg-chain">on the chain</span><span class="kg-ok">triplet in the graph</span>'
        '<span class="kg-ill">triplet not in the graph</span></div>'
    )
    return STYLE + legend + '<div class="kg-text">' + "".join(out) + "</div>"


def token_view_html(positions: Sequence[TokenPosition], top_k: int = 5) -> str:
    """A table: one column per position; the chosen token, then the allowed alternatives with probabilities."""
    if not positions:
        return ""
    head = "".join(f"<th>{i + 1}</th>" for i in range(len(positions)))
    chosen = "".join(
        f'<td class="chosen">{esc(visible_token(p.chosen))}<br><small>p={p.chosen_prob:.3f}</small></td>' for p in positions
    )
    allowed_counts = "".join(f"<td><small>{p.n_allowed or len(p.allowed)} allowed</small></td>" for p in positions)
    rows = []
    for r in range(top_k):
        cells = []
        for p in positions:
            opts = sorted(p.allowed, key=lambda o: o.prob, reverse=True)
            if r < len(opts):
                o = opts[r]
                width = max(2, int(60 * o.prob))
                cls = ' class="chosen"' if o.token_id == p.chosen_id else ""
                cells.append(f'<td{cls}>{esc(visible_token(o.token))} <small>{o.prob:.3f}</small>'
                             f'<div class="bar" style="width:{width}px"></div></td>')
            else:
                cells.append("<td></td>")
        rows.append(f"<tr><th>#{r + 1}</th>{''.join(cells)}</tr>")
    return (
        STYLE + '<div class="kg-scroll"><table class="kg-tok"><tr><th>position</th>' + head + "</tr>"
        + "<tr><th>chosen</th>" + chosen + "</tr><tr><th>constraint</th>" + allowed_counts + "</tr>"
        + "".join(rows) + "</table></div>"
    )
