"""CoT: the model writes its chain freely; each written triplet is checked against the graph.

Traces from before CoT had its own kinds used ``dog.triplet``/``dog.answer``;
the registry sends those here when the trace's method is ``cot``.
"""

from __future__ import annotations

from typing import Any

from kgqa_core.trace.schema import Candidate, Step, Trace

from ..scene import SceneBuilder
from .base import StepView, add_candidates, int_list, ordinal


def _is_triplet(step: Step) -> bool:
    return step.kind.endswith(".triplet")


class CotView(StepView):
    method = "cot"
    label = "Chain of thought (unconstrained)"
    legacy_prefixes = ("dog.",)
    score_unit = "1 = well-formed triplet, 0 = ill"
    drawn_extras = frozenset({"chain", "in_graph", "grounded", "in_subgraph", "unconstrained", "ill", "answers",
                              "stop", "forced_conclusion"})

    def step_name(self, trace: Trace, index: int) -> str:
        step = trace.steps[index]
        if _is_triplet(step):
            n = sum(1 for s in trace.steps[: index + 1] if _is_triplet(s))
            ill = step.extra.get("grounded") is False
            return f"{ordinal(n)} written triplet" + (" (ill-formed)" if ill else "")
        if step.kind.endswith(".check"):
            return "graph check of the written triplets"
        if self.is_answer_step(step):
            return "answer"
        return super().step_name(trace, index)

    def step_layers(self, b: SceneBuilder, trace: Trace, step: Step, graph: Any | None) -> None:
        add_candidates(b, step)
        for tid in int_list(step.extra.get("chain")):
            b.triplet(tid, "chain", info="written so far")

    def score_legend(self, step: Step) -> str:
        return ("Each triplet the model wrote freely, checked against the graph: 1 = in the graph and connected "
                "to the topic or an entity written before (well-formed), 0 = ill-formed.")

    def candidate_reason(self, step: Step, cand: Candidate) -> str:
        reason = cand.extra.get("reason") if isinstance(cand.extra, dict) else None
        return "well-formed" if cand.kept else f"ill-formed: {reason or 'not in the graph'}"


VIEWS = [CotView()]
