"""A `GraphScene` as one self-contained HTML page driven by the bundled vis-network.

The page inlines ``assets/vis-network/vis-network.min.js``, so it works with no
network (in the app's iframe and as a downloaded file).  Untrusted text
(entity and relation names) reaches the page only as escaped JSON data inside
the script and is put into the DOM with ``textContent`` (tooltips) or drawn
on the canvas (labels); the legend and note are HTML-escaped.  Physics runs
until the layout stabilises and is then switched off, so the graph stops
moving and large scenes do not keep a CPU busy.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

from .colors import score_gradient_css
from .html_utils import esc, script_json
from .scene import GraphScene, LegendItem

ASSETS = Path(__file__).resolve().parent.parent / "assets"
VIS_JS = ASSETS / "vis-network" / "vis-network.min.js"


class MissingAssetError(RuntimeError):
    """The bundled vis-network script is missing (a broken checkout)."""


@functools.lru_cache(maxsize=1)
def vis_script() -> str:
    try:
        text = VIS_JS.read_text(encoding="utf-8")
    except OSError:
        raise MissingAssetError(
            f"the bundled graph library is missing: {VIS_JS} (see assets/README.md to restore it)"
        ) from None
    # no source map in the bundle; drop the comment so browsers do not request it
    text = re.sub(r"//# sourceMappingURL=\S+\s*$", "", text)
    # an inline script must not contain its own end tag
    return text.replace("</script", "<\\/script")


LABEL_EDGES_UP_TO = 14  # more labelled edges than this: relation names on hover only (chain edges keep theirs)
ALWAYS_LABELLED = ("chain", "ill")
NODE_FONT = 15  # px at zoom 1; the page scales fonts up when fitting the graph zooms out (see render_html),
EDGE_FONT = 14  # so that on screen a label is at least 0.86 x 14 = 12 px


def scene_data(scene: GraphScene) -> dict[str, Any]:
    """The JSON handed to vis-network (also what the tests inspect)."""
    labelled = [e for e in scene.edges if e.show_label]
    few = len(labelled) <= LABEL_EDGES_UP_TO
    pair_count: dict[tuple[str, str], int] = {}
    edges = []
    for e in scene.edges:
        pair = tuple(sorted((e.source, e.target)))
        k = pair_count.get(pair, 0)  # type: ignore[arg-type]
        pair_count[pair] = k + 1  # type: ignore[index]
        edges.append({
            "id": e.id, "from": e.source, "to": e.target,
            "label": e.label if e.show_label and (few or e.role in ALWAYS_LABELLED) else "",
            "hoverLabel": e.label,
            "title": e.title,
            "color": {"color": e.color, "highlight": e.color, "hover": e.color, "opacity": e.opacity},
            "width": e.width, "dashes": e.dashes,
            "arrows": {"to": {"enabled": True, "scaleFactor": 0.6}},
            "smooth": {"enabled": True, "type": "curvedCW", "roundness": 0.08 + 0.16 * k},
            "font": {"size": EDGE_FONT, "align": "middle"},
            "role": e.role,
        })
    nodes = [{
        "id": n.id, "label": n.label, "title": n.title, "shape": n.shape, "size": n.size,
        "color": {"background": n.color, "border": n.border,
                  "highlight": {"background": n.color, "border": "#212529"}},
        "borderWidth": 4 if n.new else 2,
        "font": {"size": NODE_FONT if n.role != "context" else NODE_FONT - 2,
                 **({"color": n.font_color} if n.role == "missing" else {})},
        "role": n.role,
    } for n in scene.nodes]
    return {"nodes": nodes, "edges": edges, "layout": scene.layout, "hoverLabels": not few}


def _legend_html(items: list[LegendItem], score_range: tuple[float, float] | None) -> str:
    chips = []
    for it in items:
        if it.kind == "gradient":
            lo, hi = score_range or (0.0, 1.0)
            chips.append(
                f'<span class="chip"><span class="grad" style="background:{score_gradient_css()}"></span>'
                f"{esc(it.label)} {lo:.2f} \u2192 {hi:.2f}</span>"
            )
        elif it.kind == "edge":
            style = "dashed" if it.dashed else "solid"
            chips.append(
                f'<span class="chip"><span class="line" style="border-top:3px {style} {esc(it.color)}"></span>'
                f"{esc(it.label)}</span>"
            )
        elif it.kind == "ring":
            chips.append(
                f'<span class="chip"><span class="dot" style="background:#fff;border:3px solid {esc(it.color)}"></span>'
                f"{esc(it.label)}</span>"
            )
        else:
            shape = {"diamond": "\u25c6", "star": "\u2605", "triangle": "\u25b2", "square": "\u25a0",
                     "triangleDown": "\u25bc", "hexagon": "\u2b22", "box": "\u25ac", "ellipse": "\u2b2c"}.get(it.shape)
            mark = (f'<span class="sym" style="color:{esc(it.color)}">{shape}</span>' if shape
                    else f'<span class="dot" style="background:{esc(it.color)}"></span>')
            chips.append(f'<span class="chip">{mark}{esc(it.label)}</span>')
    return "".join(chips)


def render_html(scene: GraphScene, height: int = 560, title: str | None = None) -> str:
    """The complete HTML document for one scene."""
    data = script_json(scene_data(scene))
    heading = title if title is not None else scene.title
    empty = "" if scene.nodes else '<div class="empty">Nothing to draw at this step.</div>'
    note = f'<div class="note">{esc(scene.note)}</div>' if scene.note else ""
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{esc(heading or "graph")}</title>
<style>
body {{ margin:0; font-family: -apple-system, "Segoe UI", Roboto, sans-serif; font-size: 12px; color:#343a40; }}
#graph {{ box-sizing:border-box; width:100%; height:{int(height)}px; border:1px solid #e9ecef; border-radius:6px; background:#fff; }}
.head {{ font-weight:600; margin:2px 0 4px 2px; }}
.note {{ color:#868e96; margin:2px 0 4px 2px; }}
.legend {{ display:flex; flex-wrap:wrap; gap:4px 12px; margin:6px 2px; }}
.chip {{ display:inline-flex; align-items:center; gap:5px; white-space:nowrap; }}
.dot {{ width:11px; height:11px; border-radius:50%; display:inline-block; border:1px solid #adb5bd; box-sizing:border-box; }}
.sym {{ font-size:14px; line-height:11px; }}
.line {{ width:22px; height:0; display:inline-block; }}
.grad {{ width:60px; height:9px; display:inline-block; border-radius:2px; }}
.empty {{ position:absolute; top:45%; width:100%; text-align:center; color:#868e96; font-size:14px; }}
.tip {{ white-space:pre-wrap; max-width:420px; font-size:12px; }}
.keys {{ color:#868e96; margin:0 2px; }}
#graph:focus {{ outline:2px solid #1c7ed6; outline-offset:1px; }}
@media (prefers-color-scheme: dark) {{
  body {{ color:#dee2e6; background:#0e1117; }}
  #graph {{ background:#161a23; border-color:#343a40; }}
  .note, .keys, .empty {{ color:#adb5bd; }}
  .tip {{ color:#212529; }}
}}
</style></head>
<body>
<div class="head">{esc(heading)}</div>{note}
<div style="position:relative">{empty}<div id="graph" data-ready="0" tabindex="0" role="application"
 aria-label="{esc(heading or "graph")}: click or tab here, then arrow keys move, + and - zoom"></div></div>
<div class="legend">{_legend_html(scene.legend, scene.score_range)}</div>
<div class="keys">Keyboard: focus the graph, then arrow keys move it and + / - zoom.{
    " Relation names appear on hover." if scene_data(scene)["hoverLabels"] else ""}</div>
<script>{vis_script()}</script>
<script>
(function() {{
  const SCENE = {data};
  const el = document.getElementById("graph");
  if (typeof vis === "undefined") {{ el.textContent = "The graph library failed to load."; return; }}
  function tip(text) {{ const d = document.createElement("div"); d.className = "tip"; d.textContent = text; return d; }}
  const hier = SCENE.layout === "hierarchical";
  const dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
  const ink = dark ? "#e9ecef" : "#212529", halo = dark ? "#161a23" : "#ffffff", edgeInk = dark ? "#ced4da" : "#495057";
  SCENE.nodes.forEach(n => {{ n.font = Object.assign({{color: n.role === "context" ? (dark ? "#adb5bd" : "#868e96") : ink,
                                                       strokeWidth: 3, strokeColor: halo}}, n.font);
                              if (hier) n.widthConstraint = {{ maximum: 170 }}; }});
  SCENE.edges.forEach(e => {{ e.font = Object.assign({{color: edgeInk, strokeWidth: 3, strokeColor: halo}}, e.font,
                                                     hier ? {{ align: "horizontal" }} : {{}}); }});
  const nodes = new vis.DataSet(SCENE.nodes.map(n => Object.assign({{}}, n, {{title: tip(n.title)}})));
  const edges = new vis.DataSet(SCENE.edges.map(e => Object.assign({{}}, e, {{title: tip(e.title)}})));
  const options = {{
    autoResize: true,
    interaction: {{ hover: true, tooltipDelay: 120, navigationButtons: false,
                   keyboard: {{ enabled: true, bindToWindow: false, speed: {{ x: 8, y: 8, zoom: 0.03 }} }} }},
    nodes: {{ shadow: false }},
    edges: {{ selectionWidth: 2 }},
    layout: hier ? {{ hierarchical: {{ direction: "UD", sortMethod: "directed", levelSeparation: 190, nodeSpacing: 220,
                                       treeSpacing: 230 }} }}
                 : {{ improvedLayout: SCENE.nodes.length <= 150, randomSeed: 7 }},
    physics: hier ? {{ enabled: false }} : {{
      enabled: true, solver: "forceAtlas2Based",
      forceAtlas2Based: {{ gravitationalConstant: -60, springLength: 120, springConstant: 0.06, avoidOverlap: 0.4 }},
      stabilization: {{ enabled: true, iterations: 300, updateInterval: 50 }}
    }}
  }};
  const network = new vis.Network(el, {{nodes: nodes, edges: edges}}, options);
  // labels stay >= 12 px on screen: when fitting zooms out, fonts grow to compensate (up to 2.2x)
  function readable() {{
    const s = network.getScale();
    if (!(s > 0) || s >= 0.86) return;
    const k = Math.min(2.2, 0.86 / s);
    nodes.update(SCENE.nodes.map(n => ({{ id: n.id, font: Object.assign({{}}, n.font, {{ size: Math.round(n.font.size * k) }}) }})));
    edges.update(SCENE.edges.map(e => ({{ id: e.id, font: Object.assign({{}}, e.font, {{ size: Math.round(e.font.size * k) }}) }})));
  }}
  if (SCENE.hoverLabels) {{
    network.on("hoverEdge", p => edges.update({{ id: p.edge, label: edges.get(p.edge).hoverLabel }}));
    network.on("blurEdge", p => {{ const e = SCENE.edges.find(x => x.id === p.edge); edges.update({{ id: p.edge, label: e ? e.label : "" }}); }});
  }}
  function done() {{ network.setOptions({{ physics: {{ enabled: false }} }}); network.fit(); readable(); network.fit(); el.dataset.ready = "1"; }}
  if (hier) {{ network.once("afterDrawing", done); }}
  else {{ network.once("stabilizationIterationsDone", done); setTimeout(done, 8000); }}
  window.kgqaNetwork = network;
}})();
</script>
</body></html>"""
