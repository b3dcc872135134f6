"""A drawable graph scene: which nodes and edges to show, in which role and colour.

A scene is built from triplets tagged with a *role* (context, subgraph,
candidate, beam, dropped, path, chain, ill) and entities tagged with a role
(topic, answer, key, chain, ...).  When one triplet gets several roles the most
important wins (a candidate that is also on the chosen chain is drawn as
chain).  `SceneBuilder.build` then applies the node cap: it keeps the most
important entities first (topic, answers, chain, candidates, subgraph) and
fills the rest with context, and says in `GraphScene.note` what it left out,
so a 200,000-triplet graph never reaches the browser whole.

The scene is plain data; `vis_html` turns it into vis-network HTML and the
unit tests check roles, colours and the cap without a browser.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Hashable, Iterable

from . import colors as C

TripletTuple = tuple[str, str, str]
TripletLookup = Callable[[int], "TripletTuple | None"]

NODE_PRIORITY = {"topic": 9, "answer": 8, "key": 7, "chain": 6, "missing": 5, "reached": 4, "candidate": 3, "subgraph": 2,
                 "context": 0}
EDGE_PRIORITY = {"chain": 7, "ill": 7, "path": 5, "beam": 4, "candidate": 3, "dropped": 2, "subgraph": 1, "context": 0}
# the role an edge gives its two endpoints
EDGE_TO_NODE = {
    "chain": "chain", "ill": "chain", "path": "subgraph", "beam": "candidate", "candidate": "candidate",
    "dropped": "context", "subgraph": "subgraph", "context": "context",
}

NODE_STYLE = {
    # role: (background, border, shape, size, font colour)
    "topic": (C.TOPIC, "#b35c00", "diamond", 24, "#212529"),
    "answer": (C.ANSWER, "#1b5e20", "star", 26, "#212529"),
    "key": (C.KEY_ENTITY, "#4c2a9e", "triangle", 20, "#212529"),
    "chain": ("#ffd8a8", C.CHAIN, "dot", 18, "#212529"),
    "missing": (C.MISSING_NODE, C.ILL, "dot", 16, "#c92a2a"),
    "reached": (C.REACHED, "#0b3d91", "dot", 17, "#212529"),
    "candidate": (C.CANDIDATE_NODE, "#1c7ed6", "dot", 14, "#212529"),
    "subgraph": (C.SUBGRAPH, "#1864ab", "dot", 14, "#212529"),
    "context": (C.CONTEXT, "#adb5bd", "dot", 9, "#868e96"),
}
NODE_LABELS = {
    "topic": "topic entity", "answer": "answer", "key": "key entity (RoK)", "chain": "on the chosen chain",
    "missing": "entity not in the graph", "reached": "reached at an earlier step", "candidate": "reached by a candidate", "subgraph": "in the query subgraph",
    "context": "context (not in the subgraph)",
}
EDGE_STYLE = {
    # role: (colour, width, dashes, opacity)
    "chain": (C.CHAIN, 5.0, False, 1.0),
    "ill": (C.ILL, 4.0, True, 1.0),
    "path": ("#0072B2", 3.0, False, 0.95),
    "beam": ("#1c7ed6", 3.0, False, 0.95),
    "candidate": ("#1c7ed6", 2.0, False, 0.95),
    "dropped": (C.DROPPED_EDGE, 1.5, True, 0.55),
    "subgraph": (C.SUBGRAPH_EDGE, 1.8, False, 0.85),
    "context": (C.CONTEXT_EDGE, 1.0, False, 0.6),
}
EDGE_LABELS = {
    "chain": "chosen chain", "ill": "cited, not in the graph (ill)", "path": "path", "beam": "kept beam",
    "candidate": "candidate (colour = score)", "dropped": "dropped beam", "subgraph": "query subgraph",
    "context": "context",
}


@dataclass
class SceneNode:
    id: str
    label: str
    role: str
    color: str
    border: str
    shape: str
    size: float
    font_color: str
    title: str
    new: bool = False


@dataclass
class SceneEdge:
    id: str
    source: str
    target: str
    label: str
    role: str
    color: str
    width: float
    dashes: bool
    opacity: float
    title: str
    triplet_id: int | None = None
    show_label: bool = True


@dataclass
class LegendItem:
    label: str
    color: str
    kind: str = "node"  # node | edge | ring | gradient
    dashed: bool = False
    shape: str = "dot"


@dataclass
class GraphScene:
    nodes: list[SceneNode] = field(default_factory=list)
    edges: list[SceneEdge] = field(default_factory=list)
    legend: list[LegendItem] = field(default_factory=list)
    note: str = ""
    score_range: tuple[float, float] | None = None
    layout: str = "physics"  # physics | hierarchical
    title: str = ""
    omitted_nodes: int = 0
    omitted_edges: int = 0

    def node(self, name: str) -> SceneNode | None:
        return next((n for n in self.nodes if n.id == name), None)

    def edges_by_role(self, role: str) -> list[SceneEdge]:
        return [e for e in self.edges if e.role == role]


@dataclass
class _EdgeSpec:
    head: str
    relation: str
    tail: str
    triplet_id: int | None
    role: str
    color: str | None
    width: float | None
    info: list[str]
    order: int


@dataclass
class _NodeSpec:
    role: str
    order: int
    color: str | None = None
    size: float | None = None
    info: list[str] = field(default_factory=list)
    new: bool = False
    shape: str | None = None


def truncate(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


class SceneBuilder:
    """Collects role-tagged triplets and entities, then builds a capped `GraphScene`.

    ``lookup`` resolves a triplet id to (head, relation, tail) (the graph, or
    the triplets a trace repeats when the graph is not available);
    ``neighbours`` lists an entity's triplets for context;  ``has_entity``
    tells apart entities a method invented from graph entities.
    """

    def __init__(
        self,
        lookup: TripletLookup,
        neighbours: Callable[[str], list] | None = None,
        has_entity: Callable[[str], bool] | None = None,
    ) -> None:
        self.lookup = lookup
        self.neighbours = neighbours
        self.has_entity = has_entity
        self._edges: dict[Hashable, _EdgeSpec] = {}
        self._nodes: dict[str, _NodeSpec] = {}
        self._order = 0
        self.notes: list[str] = []
        self.unresolved: list[int] = []
        self.extra_legend: list[LegendItem] = []
        self.score_range: tuple[float, float] | None = None
        self._context_skipped = 0

    # ------------------------------------------------------------ adding
    def _tick(self) -> int:
        self._order += 1
        return self._order

    def node(self, name: str, role: str, color: str | None = None, size: float | None = None, info: str = "",
             shape: str | None = None) -> None:
        spec = self._nodes.get(name)
        if spec is None:
            spec = self._nodes[name] = _NodeSpec(role=role, order=self._tick())
        elif NODE_PRIORITY[role] > NODE_PRIORITY[spec.role]:
            spec.role = role
        if color is not None and NODE_PRIORITY[role] >= NODE_PRIORITY[spec.role]:
            spec.color = color
        if size is not None:
            spec.size = size
        if shape is not None and NODE_PRIORITY[role] >= NODE_PRIORITY[spec.role]:
            spec.shape = shape
        if info and info not in spec.info:
            spec.info.append(info)

    def has_node(self, name: str) -> bool:
        return name in self._nodes

    def role_of(self, name: str) -> str | None:
        spec = self._nodes.get(name)
        return spec.role if spec is not None else None

    def resize(self, name: str, size: float, info: str = "") -> None:
        """Set an existing entity's size (RoK: PageRank), keeping its role."""
        spec = self._nodes.get(name)
        if spec is None:
            return
        spec.size = size
        if info and info not in spec.info:
            spec.info.append(info)

    def names(self) -> list[str]:
        return list(self._nodes)

    def mark_new(self, name: str) -> None:
        if name not in self._nodes:
            self.node(name, "subgraph")
        self._nodes[name].new = True

    def triplet(
        self,
        triplet_id: int | None,
        role: str,
        triplet: Iterable[str] | None = None,
        color: str | None = None,
        width: float | None = None,
        info: str = "",
        layer: Hashable = None,
    ) -> bool:
        """Add one triplet in a role; returns False when it cannot be resolved.

        ``layer`` keeps otherwise identical triplets apart (Compare draws the
        same fact once per method, as parallel curves).
        """
        hrt: TripletTuple | None = None
        if triplet_id is not None:
            hrt = self.lookup(triplet_id)
        if hrt is None and triplet is not None:
            parts = tuple(str(x) for x in triplet)
            hrt = parts if len(parts) == 3 else None  # type: ignore[assignment]
        if hrt is None:
            if triplet_id is not None:
                self.unresolved.append(triplet_id)
            return False
        h, r, t = hrt
        key: Hashable = (triplet_id if triplet_id is not None else ("text", h, r, t), layer)
        spec = self._edges.get(key)
        if spec is None:
            spec = self._edges[key] = _EdgeSpec(h, r, t, triplet_id, role, color, width, [], self._tick())
        elif EDGE_PRIORITY[role] > EDGE_PRIORITY[spec.role]:
            spec.role, spec.color, spec.width = role, color, width
        elif EDGE_PRIORITY[role] == EDGE_PRIORITY[spec.role] and color is not None and spec.color is None:
            spec.color = color
        if info and info not in spec.info:
            spec.info.append(info)
        node_role = EDGE_TO_NODE[role]
        for ent in (h, t):
            if role == "ill" and self.has_entity is not None and not self.has_entity(ent):
                self.node(ent, "missing")
            else:
                self.node(ent, node_role)
        return True

    def context(self, focus: Iterable[str], budget: int, per_entity: int = 25) -> None:
        """Add up to ``budget`` new entities around ``focus`` as faded context."""
        if self.neighbours is None or budget <= 0:
            return
        added = 0
        for ent in list(dict.fromkeys(focus)):
            if not (self.has_entity is None or self.has_entity(ent)):
                continue
            trips = self.neighbours(ent)
            for i, trip in enumerate(trips):
                if i >= per_entity or added >= budget:
                    self._context_skipped += len(trips) - i
                    break
                other_new = (trip.head not in self._nodes) + (trip.tail not in self._nodes and trip.tail != trip.head)
                if other_new and added + other_new > budget:
                    self._context_skipped += 1
                    continue
                self.triplet(trip.id, "context", triplet=trip.as_tuple)
                added += other_new

    def legend_item(self, item: LegendItem) -> None:
        self.extra_legend.append(item)

    # ------------------------------------------------------------- build
    def build(
        self, max_nodes: int = 300, title: str = "", layout: str = "physics", label_limit: int = 40,
        node_labels: dict[str, str] | None = None, edge_labels: dict[str, str] | None = None,
    ) -> GraphScene:
        """The capped scene; ``node_labels``/``edge_labels`` rename roles for a page (Explore's "expanded")."""
        self._node_labels = {**NODE_LABELS, **(node_labels or {})}
        self._edge_labels = {**EDGE_LABELS, **(edge_labels or {})}
        names = sorted(self._nodes, key=lambda n: (-NODE_PRIORITY[self._nodes[n].role], self._nodes[n].order))
        kept_names = names[: max(1, max_nodes)]
        kept = set(kept_names)
        omitted = Counter(self._nodes[n].role for n in names[len(kept_names):])
        ids = {name: f"n{i}" for i, name in enumerate(kept_names)}

        nodes = []
        for name in kept_names:
            spec = self._nodes[name]
            bg, border, shape, size, font = NODE_STYLE[spec.role]
            lines = [name, self._node_labels[spec.role]] + spec.info
            if spec.new:
                lines.append("new at this step")
            nodes.append(SceneNode(
                id=ids[name], label=truncate(name, label_limit), role=spec.role, color=spec.color or bg,
                border=NEW_RING if spec.new else border, shape=spec.shape or shape, size=spec.size or size,
                font_color=font, title="\n".join(lines), new=spec.new,
            ))

        specs = sorted(self._edges.values(), key=lambda s: (-EDGE_PRIORITY[s.role], s.order))
        max_edges = max(4 * max_nodes, 200)
        edges: list[SceneEdge] = []
        dropped_edges = 0
        for spec in specs:
            if spec.head not in kept or spec.tail not in kept:
                dropped_edges += 1
                continue
            if len(edges) >= max_edges:
                dropped_edges += 1
                continue
            colour, width, dashes, opacity = EDGE_STYLE[spec.role]
            tid = "" if spec.triplet_id is None else f"  [#{spec.triplet_id}]"
            lines = [f"{spec.head} -> {spec.relation} -> {spec.tail}{tid}", self._edge_labels[spec.role]] + spec.info
            edges.append(SceneEdge(
                id=f"e{len(edges)}", source=ids[spec.head], target=ids[spec.tail], label=truncate(spec.relation, 32),
                role=spec.role, color=spec.color or colour, width=spec.width or width, dashes=dashes,
                opacity=opacity, title="\n".join(lines), triplet_id=spec.triplet_id,
                show_label=spec.role != "context",
            ))

        notes = list(self.notes)
        n_omitted = sum(omitted.values())
        if n_omitted:
            parts = ", ".join(f"{v} {k}" for k, v in omitted.most_common())
            notes.append(
                f"Showing {len(kept_names)} of {len(self._nodes)} entities (node cap {max_nodes}); "
                f"left out: {parts}."
            )
        if self._context_skipped:
            notes.append(f"{self._context_skipped} further neighbouring triplets are not drawn as context.")
        if dropped_edges and not n_omitted:
            notes.append(f"{dropped_edges} triplets not drawn (edge cap).")
        if self.unresolved:
            notes.append(
                f"{len(set(self.unresolved))} triplet id(s) cited by the trace are not in this graph "
                f"(e.g. #{self.unresolved[0]}): was the graph edited or replaced?"
            )

        return GraphScene(
            nodes=nodes, edges=edges, legend=self._legend(nodes, edges), note=" ".join(notes),
            score_range=self.score_range, layout=layout, title=title,
            omitted_nodes=n_omitted, omitted_edges=dropped_edges,
        )

    def _legend(self, nodes: list[SceneNode], edges: list[SceneEdge]) -> list[LegendItem]:
        items: list[LegendItem] = []
        node_roles = {n.role for n in nodes}
        for role in NODE_PRIORITY:
            if role in node_roles:
                bg, border, shape, _size, _font = NODE_STYLE[role]
                items.append(LegendItem(self._node_labels[role], bg, "node", shape=shape))
        if any(n.new for n in nodes):
            items.append(LegendItem("new at this step", NEW_RING, "ring"))
        edge_roles = {e.role for e in edges}
        for role in EDGE_PRIORITY:
            if role in edge_roles and role not in ("path",):
                colour, _w, dashes, _o = EDGE_STYLE[role]
                if role == "candidate" and self.score_range is not None:
                    items.append(LegendItem("candidate score", "", "gradient"))
                    continue
                items.append(LegendItem(self._edge_labels[role], colour, "edge", dashed=dashes))
        return items + self.extra_legend


NEW_RING = C.NEW_BORDER
