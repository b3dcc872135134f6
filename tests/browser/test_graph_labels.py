"""A readable graph, measured in Chromium: on a 300-node neighbourhood no two labels overlap, none is
cut at the frame's edges (also 390 px wide), every label is at least 12 px, hovering shows a hidden
name in full, and the dark theme keeps its contrast.  Boxes and font sizes come from the rendered page.
"""

from __future__ import annotations

import pytest

from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_ui.colors import contrast
from kgqa_ui.trace_scene import explore_scene
from kgqa_ui.vis_html import render_html

from .conftest import ARTIFACTS

READY = "document.getElementById('graph').dataset.ready === '1'"
BOXES = """() => {
  const frame = document.getElementById('graph').getBoundingClientRect();
  const shown = [...document.querySelectorAll('.lbl')].filter(e => getComputedStyle(e).display !== 'none');
  return { frame: {x: frame.x, y: frame.y, w: frame.width, h: frame.height},
           labels: shown.map(e => { const r = e.getBoundingClientRect(), cs = getComputedStyle(e);
             return {x: r.x, y: r.y, w: r.width, h: r.height, font: parseFloat(cs.fontSize), text: e.textContent,
                     color: cs.color, background: cs.backgroundColor, cut: e.scrollWidth > e.clientWidth + 1}; }) };
}"""


def neighbourhood_300() -> KnowledgeGraph:
    """Two hubs (Goalkeeper, Mexico) with 160 players each, some shared, and long names: Explore's worst case."""
    trips = []
    for i in range(160):  # 300 players, 20 of them in both neighbourhoods (302 entities: the cap draws 300)
        trips.append((f"Player {i:03d} Jose Antonio de la Cruz", "plays_position", "Goalkeeper"))
        trips.append((f"Player {i + 140:03d} Jose Antonio de la Cruz", "nationality", "Mexico"))
    for i in range(60):
        trips.append((f"Player {i:03d} Jose Antonio de la Cruz", "plays_for", f"Club Deportivo number {i % 9}"))
    return KnowledgeGraph.from_triplets(trips, name="football")


def _scene_html() -> tuple[str, int]:
    scene = explore_scene(neighbourhood_300(), ["Goalkeeper", "Mexico"], selected="Mexico", max_nodes=300,
                          per_entity=300)
    return render_html(scene, height=520), len(scene.nodes)


def _overlaps(labels: list[dict]) -> list[tuple[str, str]]:
    out = []
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            if a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"] and a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"]:
                out.append((a["text"], b["text"]))
    return out


def _outside(frame: dict, labels: list[dict]) -> list[str]:
    eps = 0.5
    return [lb["text"] for lb in labels if lb["x"] < frame["x"] - eps or lb["y"] < frame["y"] - eps
            or lb["x"] + lb["w"] > frame["x"] + frame["w"] + eps or lb["y"] + lb["h"] > frame["y"] + frame["h"] + eps]


@pytest.mark.parametrize("width", [1400, 390])
def test_labels_of_a_300_node_neighbourhood_do_not_overlap_and_are_not_cut(app_page, width):
    html, n_nodes = _scene_html()
    assert n_nodes == 300
    app_page.set_viewport_size({"width": width, "height": 900})
    app_page.set_content(html)
    app_page.wait_for_function(READY, timeout=90_000)
    app_page.wait_for_timeout(300)
    got = app_page.evaluate(BOXES)
    labels = got["labels"]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    app_page.screenshot(path=str(ARTIFACTS / f"labels-300-{width}.png"))
    assert len(labels) >= (25 if width > 1000 else 8), len(labels)
    assert not _overlaps(labels), _overlaps(labels)[:5]
    assert not _outside(got["frame"], labels), _outside(got["frame"], labels)[:5]
    assert min(lb["font"] for lb in labels) >= 12
    shown = {lb["text"] for lb in labels}
    assert {"Goalkeeper", "Mexico"} <= shown  # the expanded entities are always labelled


def test_hovering_a_node_shows_its_whole_name(app_page):
    html, _ = _scene_html()
    app_page.set_viewport_size({"width": 1000, "height": 900})
    app_page.set_content(html)
    app_page.wait_for_function(READY, timeout=90_000)
    hidden = app_page.evaluate("""() => {
      const n = window.kgqaNetwork, pos = n.getPositions(), box = document.getElementById('graph').getBoundingClientRect();
      const shown = new Set([...document.querySelectorAll('.lbl')].filter(e => e.style.display === 'block')
                              .map(e => e.textContent));
      for (const id of Object.keys(pos)) {
        const node = n.body.data.nodes.get(id);
        if (!shown.has(node.fullLabel) && node.fullLabel.startsWith('Player')) {
          const d = n.canvasToDOM(pos[id]);
          if (d.x > 20 && d.y > 20 && d.x < box.width - 20 && d.y < box.height - 20)
            return {x: box.x + d.x, y: box.y + d.y, name: node.fullLabel};
        }
      }
      return null; }""")
    assert hidden, "some label is hidden in a crowded neighbourhood"
    app_page.mouse.move(hidden["x"], hidden["y"])
    app_page.wait_for_function("name => [...document.querySelectorAll('.lbl.hover')].some(e => "
                               "e.style.display === 'block' && e.textContent === name)", arg=hidden["name"],
                               timeout=10_000)
    labels = app_page.evaluate(BOXES)["labels"]
    assert not _overlaps(labels)


def test_labels_keep_their_contrast_in_the_dark_theme(app_page):
    html, _ = _scene_html()
    app_page.emulate_media(color_scheme="dark")
    app_page.set_content(html)
    app_page.wait_for_function(READY, timeout=90_000)
    labels = app_page.evaluate(BOXES)["labels"]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    app_page.screenshot(path=str(ARTIFACTS / "labels-300-dark.png"))

    def hex_of(css: str) -> str:
        parts = [float(x) for x in css[css.index("(") + 1:css.index(")")].split(",")[:3]]
        return "#" + "".join(f"{int(round(p)):02x}" for p in parts)

    for lb in labels[:40]:
        # the label's own (nearly opaque) background is the graph's dark panel colour
        assert contrast(hex_of(lb["color"]), "#161a23") >= 4.5, lb
