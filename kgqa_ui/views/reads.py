"""READS: relation search that grows an abstract structure S_k, then reads the answer node.

The abstract structure is drawn beside the graph; the "None" option (stop
searching) is named for what it means.
"""

from __future__ import annotations

from typing import Any

from kgqa_core.trace.schema import Candidate, Step, Trace

from .. import colors as C
from ..scene import GraphScene, SceneBuilder
from .base import StepView, candidate_text

NONE_LABEL = "None: stop searching (the structure is complete)"


class ReadsView(StepView):
    method = "reads"
    label = "READS"
    score_unit = "log-probability"
    score_is_logprob = True
    drawn_extras = frozenset({"abstract_structure", "linearized_structure", "new_node"})

    def step_name(self, trace: Trace, index: int) -> str:
        step = trace.steps[index]
        n = sum(1 for s in trace.steps[: index + 1] if s.kind == step.kind)
        if step.kind == "reads.search":
            chosen = next((c for c in step.candidates if c.kept), None)
            if chosen is not None and self.candidate_label(step, chosen) == NONE_LABEL:
                return f"relation search {n}: stopped (the structure is complete)"
            if step.choice:
                return f"relation search {n}: took {step.choice}"
            return f"relation search {n}: " + (str(step.title).strip() or "choose a relation")
        if step.kind == "reads.answer":
            return "answer from the answer node"
        return super().step_name(trace, index)

    def candidate_label(self, step: Step, cand: Candidate) -> str:
        if (isinstance(cand.extra, dict) and cand.extra.get("stop")) or cand.label == "None":
            return NONE_LABEL
        return candidate_text(cand)

    def score_legend(self, step: Step) -> str:
        return ("Score = the log-probability the model gave each option (0 is certain; more negative is less "
                "likely); the probability among the options is in the tooltip. Kept = the option READS took. "
                + ("'None' means stop searching: the model judged the structure complete."
                   if any(self.candidate_label(step, c) == NONE_LABEL for c in step.candidates) else ""))

    def candidate_reason(self, step: Step, cand: Candidate) -> str:
        return "kept: the option READS took" if cand.kept else "not taken: a likelier option was chosen"

    def has_side_panel(self, step: Step) -> bool:
        return isinstance(step.extra.get("abstract_structure"), (dict, list))

    def render_side_panel(self, step: Step, height: int) -> None:
        import streamlit as st

        from ..graph_frame import show_graph

        s_scene = abstract_structure_scene(step.extra.get("abstract_structure"))
        if s_scene is None:
            st.warning("This step's abstract structure S_k is not in the expected shape; its data is shown as "
                       "JSON text below.")
            st.code(repr(step.extra.get("abstract_structure"))[:5000], language=None)
        else:
            show_graph(s_scene, height=height - 80, alt="READS abstract structure")


def abstract_structure_scene(structure: Any) -> GraphScene | None:
    """READS' abstract structure S_k as a top-down tree; None when it is not well-formed."""
    nodes = structure.get("nodes") if isinstance(structure, dict) else structure
    if not isinstance(nodes, list) or not nodes:
        return None
    b = SceneBuilder(lambda _tid: None)
    names: dict[str, str] = {}
    for i, node in enumerate(nodes):
        if not isinstance(node, dict):
            continue
        nid = str(node.get("id", i))
        ents = node.get("entities") or []
        ents = [str(e) for e in ents] if isinstance(ents, list) else [str(ents)]
        shown = ", ".join(ents[:3]) + (f" +{len(ents) - 3}" if len(ents) > 3 else "")
        name = f"{nid}: {node.get('type', '?')}" + (f"\n{shown}" if shown else "")
        names[nid] = name
        role = "topic" if node.get("parent") in (None, "", -1) else ("answer" if node.get("type") == "answer" else "subgraph")
        b.node(name, role, info="entities: " + (", ".join(ents) if ents else "(none yet)"))
    for i, node in enumerate(nodes):
        if not isinstance(node, dict):
            continue
        parent = node.get("parent")
        nid = str(node.get("id", i))
        if parent is not None and str(parent) in names and nid in names:
            b.triplet(None, "path", triplet=(names[str(parent)], str(node.get("relation", "")), names[nid]),
                      color=C.categorical(0))
    return b.build(max_nodes=200, title="Abstract structure S_k", layout="hierarchical", label_limit=90)


VIEWS = [ReadsView()]
