"""RoK: key entities from a chain of thought, paths between them, PageRank over the paths."""

from __future__ import annotations

import json
from typing import Any, Sequence

from kgqa_core.trace.schema import Step, Trace

from .. import colors as C
from ..scene import LegendItem, SceneBuilder
from .base import StepView, int_list, is_number


def _latest(upto: Sequence[Step], key: str, kind: type) -> Any:
    for s in reversed(upto):
        value = s.extra.get(key)
        if isinstance(value, kind):
            return value
    return None


def _path_ids(path: Any) -> list[int]:
    ids = int_list(path)
    if not ids and isinstance(path, dict):
        ids = int_list(path.get("triplets") or path.get("triplet_ids"))
    return ids


class RokView(StepView):
    method = "rok"
    label = "Reasoning on Knowledge (RoK)"
    drawn_extras = frozenset({"key_entities", "paths", "pagerank"})

    def step_name(self, trace: Trace, index: int) -> str:
        step = trace.steps[index]
        names = {"rok.cot": "chain of thought: key entities", "rok.link": "key entities linked to the graph",
                 "rok.paths": "paths between key entities", "rok.pagerank": "PageRank over the paths",
                 "rok.branches": "branches kept", "rok.answer": "answer from the kept paths"}
        return names.get(step.kind) or super().step_name(trace, index)

    def score_unit_for(self, step: Step) -> str:
        if step.kind == "rok.pagerank":
            return "mean PageRank of the path's entities"
        if step.kind == "rok.branches":
            return "1 = branch kept, 0 = dropped"
        return "score"

    def score_legend(self, step: Step) -> str:
        if step.kind == "rok.pagerank":
            return "Score = mean PageRank of the entities on the path; kept = among the paths RoK answers from."
        return "Kept = what RoK kept at this step."

    def scene_layers(self, b: SceneBuilder, trace: Trace, upto: Sequence[Step], step: Step | None,
                     graph: Any | None) -> None:
        paths = _latest(upto, "paths", list)
        if paths is not None:
            for j, path in enumerate(paths):
                for tid in _path_ids(path):
                    b.triplet(tid, "path", color=C.categorical(j), info=f"path {j + 1}")
            if paths:
                b.legend_item(LegendItem("RoK paths (one colour each)", C.categorical(0), "edge"))
        keys = _latest(upto, "key_entities", list)
        for ent in keys or []:
            if isinstance(ent, str) and (graph is None or graph.has_entity(ent)):
                b.node(ent, "key")

    def finish_scene(self, b: SceneBuilder, trace: Trace, upto: Sequence[Step], step: Step | None,
                     graph: Any | None) -> None:
        pagerank = _latest(upto, "pagerank", dict) or {}
        vals = [float(v) for v in pagerank.values() if is_number(v)]
        top = max(vals) if vals else 0.0
        sized = 0
        for ent, val in pagerank.items():
            if is_number(val) and top > 0 and b.has_node(ent):
                b.resize(ent, 10 + 30 * float(val) / top, info=f"PageRank {float(val):.4f}")
                sized += 1
        if sized:
            b.notes.append("Node size shows PageRank.")

    def render_panels(self, trace: Trace, step: Step | None, index: int, graph: Any | None) -> None:
        import streamlit as st

        from .. import charts
        from ..html_utils import md_text

        upto = trace.steps if step is None else trace.steps[: index + 1]
        keys = _latest(upto, "key_entities", list)
        paths = _latest(upto, "paths", list)
        pr = _latest(upto, "pagerank", dict)
        if not (keys or paths or pr):
            return
        with st.container(border=True):
            st.markdown("**RoK: key entities, paths and PageRank**")
            c1, c2 = st.columns(2)
            with c1:
                if keys:
                    st.markdown("Key entities: " + ", ".join(md_text(k) for k in keys))
                for j, path in enumerate((paths or [])[:20]):
                    st.markdown(f"path {j + 1}: " + md_text(_path_text(path, graph)))
            with c2:
                fig = charts.pagerank_figure(pr) if pr else None
                if fig is not None:
                    st.plotly_chart(fig, width="stretch", key=f"pagerank-{index}", config={"displayModeBar": False})


def _path_text(path: Any, graph: Any | None) -> str:
    parts = []
    for tid in _path_ids(path):
        if graph is not None and graph.has_triplet_id(tid):
            parts.append(graph.triplet(tid).linearized())
        else:
            parts.append(f"#{tid}")
    return " | ".join(parts) if parts else json.dumps(path, default=str)[:200]


VIEWS = [RokView()]
