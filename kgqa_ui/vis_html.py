"""A `GraphScene` as one self-contained HTML page driven by the bundled vis-network.

The page inlines ``assets/vis-network/vis-network.min.js``, so it works with no
network (in the app's iframe and as a downloaded file).  Untrusted text
(entity and relation names) reaches the page only as escaped JSON data inside
the script and is put into the DOM with ``textContent`` (labels, tooltips);
the legend and note are HTML-escaped.  Physics runs until the layout
stabilises and is then switched off, so the graph stops moving and large
scenes do not keep a CPU busy.

Labels are not drawn by vis-network on its canvas (they overlapped into
unreadable heaps around a hub, shrank with the zoom and were clipped at the
frame's edges).  They are HTML elements over the canvas, placed after every
redraw by `placeLabels`: most important first (the hovered node or edge in
full, then topic, answer, chain, ...), each at the first of four spots around
its node that overlaps no label placed before it and lies inside the frame;
a label with no free spot is hidden, and its full name shows on hover.  They
keep a fixed CSS size (``LABEL_PX``, never under 12 px on screen) at any zoom.
Shapes that hold their label inside (box, ellipse) keep vis-network's own.
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
NODE_FONT = 15  # px at zoom 1, for labels vis-network draws inside a shape (box, ellipse); the page scales
EDGE_FONT = 14  # them up when fitting zooms out, so that on screen a label is at least 0.86 x 14 = 12 px
LABEL_PX = 13  # the HTML labels over the canvas: a fixed size on screen at any zoom (>= 12 px)
STRONG_LABEL_PX = 14  # topic, answer, chain and key entities
INSIDE_SHAPES = ("box", "ellipse", "circle", "database", "text")  # vis-network draws their label inside


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
            "fullLabel": e.title.split("\n", 1)[0] if e.title else e.label,
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
        "fullLabel": n.title.split("\n", 1)[0] if n.title else n.label,  # the whole name, shown on hover
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
    inside = script_json(list(INSIDE_SHAPES))
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
.labels {{ position:absolute; left:0; top:0; width:100%; height:{int(height)}px; overflow:hidden; pointer-events:none; }}
.lbl {{ position:absolute; left:0; top:0; display:none; box-sizing:border-box; font-size:{LABEL_PX}px; line-height:16px;
        padding:0 3px; border-radius:3px; white-space:nowrap; max-width:calc(100% - 4px); overflow:hidden;
        text-overflow:ellipsis; color:#212529; background:rgba(255,255,255,.86); }}
.lbl.strong {{ font-size:{STRONG_LABEL_PX}px; line-height:17px; font-weight:600; }}
.lbl.edge {{ color:#495057; font-style:italic; }}
.lbl.context {{ color:#5c636a; }}
.lbl.missing {{ color:#c92a2a; }}
.lbl.wrap {{ white-space:normal; max-width:190px; }}
.lbl.hover {{ z-index:2; outline:1px solid #868e96; max-width:calc(100% - 4px); }}
@media (prefers-color-scheme: dark) {{
  body {{ color:#dee2e6; background:#0e1117; }}
  #graph {{ background:#161a23; border-color:#343a40; }}
  .note, .keys, .empty {{ color:#adb5bd; }}
  .tip {{ color:#212529; }}
  .lbl {{ color:#e9ecef; background:rgba(22,26,35,.86); }}
  .lbl.edge {{ color:#ced4da; }} .lbl.context {{ color:#adb5bd; }} .lbl.missing {{ color:#ff8787; }}
}}
</style></head>
<body>
<div class="head">{esc(heading)}</div>{note}
<div style="position:relative">{empty}<div id="graph" data-ready="0" tabindex="0" role="application"
 aria-label="{esc(heading or "graph")}: click or tab here, then arrow keys move, + and - zoom"></div>
<div id="labels" class="labels" aria-hidden="true"></div></div>
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
  const INSIDE = {inside};
  const dark = window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
  const ink = dark ? "#e9ecef" : "#212529", halo = dark ? "#161a23" : "#ffffff";
  SCENE.nodes.forEach(n => {{ n.ownLabel = INSIDE.includes(n.shape);
                              n.font = Object.assign({{color: ink, strokeWidth: 3, strokeColor: halo}}, n.font);
                              if (hier) n.widthConstraint = {{ maximum: 170 }}; }});
  // vis-network draws only the labels inside a shape; the others are HTML (placeLabels below)
  const nodes = new vis.DataSet(SCENE.nodes.map(n => Object.assign({{}}, n, {{title: tip(n.title),
                                                                   label: n.ownLabel ? n.label : undefined}})));
  const edges = new vis.DataSet(SCENE.edges.map(e => Object.assign({{}}, e, {{title: tip(e.title), label: undefined}})));
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
  // labels vis-network draws (inside a box) stay >= 12 px on screen: when fitting zooms out, they grow (up to 2.2x)
  function readable() {{
    const s = network.getScale();
    if (!(s > 0) || s >= 0.86) return;
    const k = Math.min(2.2, 0.86 / s);
    nodes.update(SCENE.nodes.filter(n => n.ownLabel)
      .map(n => ({{ id: n.id, font: Object.assign({{}}, n.font, {{ size: Math.round(n.font.size * k) }}) }})));
  }}
  // ---- HTML labels: most important first, each where it overlaps no other and stays inside the frame
  const layer = document.getElementById("labels");
  const PRI = {{topic: 9, answer: 8, key: 7, chain: 6, missing: 5, reached: 4, candidate: 3, subgraph: 2, context: 0}};
  const STRONG = ["topic", "answer", "chain", "key", "missing"];
  const items = [];
  SCENE.nodes.forEach(n => {{ if (n.ownLabel || !n.label) return;
    items.push({{kind: "node", id: n.id, text: n.label, full: n.fullLabel || n.label, pri: PRI[n.role] || 0,
                size: n.size || 10, cls: (STRONG.includes(n.role) ? "strong " : "") + n.role}}); }});
  SCENE.edges.forEach(e => {{ if (!e.hoverLabel) return;
    items.push({{kind: "edge", id: e.id, text: e.hoverLabel, full: e.fullLabel || e.hoverLabel,
                pri: (e.role === "chain" || e.role === "ill") ? 5.5 : 1, always: !!e.label, cls: "edge " + e.role}}); }});
  items.forEach(it => {{ const d = document.createElement("span"); d.className = "lbl " + it.cls + (hier ? " wrap" : "");
                         d.textContent = it.text; it.shown = it.text; layer.appendChild(d); it.el = d; }});
  let hoverNode = null, hoverEdge = null, ready = false, frame = 0;
  function measureAll() {{
    items.forEach(it => {{ it.el.style.visibility = "hidden"; it.el.style.display = "block"; }});
    items.forEach(it => {{ it.w = it.el.offsetWidth; it.h = it.el.offsetHeight; }});
    items.forEach(it => {{ it.el.style.visibility = ""; it.el.style.display = "none"; }});
  }}
  function measure(it, text) {{
    if (it.shown === text) return;
    it.el.textContent = text; it.shown = text;
    it.el.style.visibility = "hidden"; it.el.style.display = "block";
    it.w = it.el.offsetWidth; it.h = it.el.offsetHeight; it.el.style.visibility = "";
  }}
  function edgePoint(id) {{
    try {{
      const e = network.body.edges[id];
      if (e && e.edgeType && e.edgeType.getPoint) return network.canvasToDOM(e.edgeType.getPoint(0.5));
    }} catch (err) {{}}
    const e = SCENE.edges.find(x => x.id === id), p = network.getPositions(e ? [e.from, e.to] : []);
    if (!e || !p[e.from] || !p[e.to]) return null;
    return network.canvasToDOM({{x: (p[e.from].x + p[e.to].x) / 2, y: (p[e.from].y + p[e.to].y) / 2}});
  }}
  function placeLabels() {{
    frame = 0;
    const W = el.clientWidth, H = el.clientHeight;
    if (!W || !H) return;
    const scale = network.getScale(), pos = network.getPositions(), CELL = 48, grid = new Map();
    const cells = (r, fn) => {{
      for (let i = Math.floor(r.x / CELL); i <= Math.floor((r.x + r.w) / CELL); i++)
        for (let j = Math.floor(r.y / CELL); j <= Math.floor((r.y + r.h) / CELL); j++)
          if (fn(i + "," + j)) return true;
      return false; }};
    const meets = (a, b) => a.x < b.x + b.w + 1 && b.x < a.x + a.w + 1 && a.y < b.y + b.h + 1 && b.y < a.y + a.h + 1;
    const free = r => !cells(r, k => (grid.get(k) || []).some(o => meets(o, r)));
    const take = r => {{ cells(r, k => {{ if (!grid.has(k)) grid.set(k, []); grid.get(k).push(r); return false; }}); }};
    // the important entities stay visible: no label is put over their symbol
    SCENE.nodes.forEach(n => {{ if ((PRI[n.role] || 0) < 6 || !pos[n.id]) return;
      const d = network.canvasToDOM(pos[n.id]), r = (n.size || 10) * scale;
      take({{x: d.x - r, y: d.y - r, w: 2 * r, h: 2 * r}}); }});
    const isHover = it => it.kind === "node" ? it.id === hoverNode : it.id === hoverEdge;
    const order = items.slice().sort((a, b) => (b.pri + (isHover(b) ? 100 : 0)) - (a.pri + (isHover(a) ? 100 : 0)));
    for (const it of order) {{
      const hovered = isHover(it);
      let spots = null;
      if (it.kind === "node") {{
        const p = pos[it.id];
        if (p) {{
          const d = network.canvasToDOM(p), r = it.size * scale + 3;
          if (d.x >= 0 && d.x <= W && d.y >= 0 && d.y <= H)
            spots = [[d.x, d.y + r, "below"], [d.x, d.y - r, "above"], [d.x + r, d.y, "right"], [d.x - r, d.y, "left"]];
        }}
      }} else if (it.always || hovered) {{
        const d = edgePoint(it.id);
        if (d && d.x >= 0 && d.x <= W && d.y >= 0 && d.y <= H)
          spots = [[d.x, d.y, "middle"], [d.x, d.y - 12, "middle"], [d.x, d.y + 12, "middle"]];
      }}
      if (!spots) {{ it.el.style.display = "none"; continue; }}
      measure(it, hovered ? it.full : it.text);
      let got = null;
      for (const [ax, ay, where] of spots) {{
        let x = where === "right" ? ax : where === "left" ? ax - it.w : ax - it.w / 2;
        let y = where === "below" ? ay : where === "above" ? ay - it.h : ay - it.h / 2;
        x = Math.round(Math.max(2, Math.min(W - it.w - 2, x)));
        y = Math.round(Math.max(2, Math.min(H - it.h - 2, y)));
        const r = {{x: x, y: y, w: it.w, h: it.h}};
        if (free(r)) {{ got = r; break; }}
      }}
      if (!got) {{ it.el.style.display = "none"; continue; }}
      take(got);
      it.el.style.transform = "translate(" + got.x + "px," + got.y + "px)";
      it.el.style.display = "block";
      it.el.classList.toggle("hover", hovered);
    }}
    el.dataset.labels = String(items.filter(it => it.el.style.display === "block").length);
  }}
  function schedule() {{ if (ready && !frame) frame = requestAnimationFrame(placeLabels); }}
  network.on("afterDrawing", schedule);
  network.on("hoverNode", p => {{ hoverNode = p.node; schedule(); }});
  network.on("blurNode", () => {{ hoverNode = null; schedule(); }});
  network.on("hoverEdge", p => {{ hoverEdge = p.edge; schedule(); }});
  network.on("blurEdge", () => {{ hoverEdge = null; schedule(); }});
  window.kgqaPlaceLabels = placeLabels;
  function done() {{
    if (ready) return;
    network.setOptions({{ physics: {{ enabled: false }} }}); network.fit(); readable(); network.fit();
    ready = true; measureAll(); placeLabels(); el.dataset.ready = "1";
  }}
  if (hier) {{ network.once("afterDrawing", done); }}
  else {{ network.once("stabilizationIterationsDone", done); setTimeout(done, 8000); }}
  window.kgqaNetwork = network;
}})();
</script>
</body></html>"""
