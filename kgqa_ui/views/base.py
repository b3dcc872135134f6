"""What every step view can do, and the defaults a method's view inherits.

A *view* knows one method's step kinds: how to name a step for people
("Step 3 of 13 · beam 1 · second triplet"), which layers it adds to the graph
scene (RoK's paths, LPKG's sub-question colours), how its candidate scores
read, and which panels it draws under the graph.  The shared renderers
(`kgqa_ui.panels`, `kgqa_ui.trace_scene`) ask the registry
(`kgqa_ui.views.view_for_step`) for the view of a step and call these hooks;
they never test for a method's extra keys themselves.

Scene hooks are pure (no Streamlit); the ``render_*`` hooks import Streamlit
when called, so the scene code stays testable without an app.
"""

from __future__ import annotations

import json
import math
from typing import Any, Sequence

from kgqa_core.trace.schema import Candidate, Step, Trace

from .. import colors as C
from ..scene import SceneBuilder
from ..trace_tables import is_partial

ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"]


def ordinal(n: int) -> str:
    """1 -> "first" ... 10 -> "tenth", then "11th", "12th", "21st"."""
    if 1 <= n <= len(ORDINALS):
        return ORDINALS[n - 1]
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def int_list(value: Any) -> list[int]:
    if not isinstance(value, (list, tuple)):
        return []
    return [v for v in value if isinstance(v, int) and not isinstance(v, bool)]


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def candidate_text(cand: Candidate) -> str:
    """The candidate's full label (never cut); its triplet when it has no label."""
    if cand.label:
        return str(cand.label)
    if cand.triplet:
        return " -> ".join(str(x) for x in cand.triplet)
    return "(no label)"


def add_candidates(b: SceneBuilder, step: Step, chains: list | None = None) -> None:
    """Draw the step's candidates: a chain per candidate when known, else its triplet, coloured by score."""
    cands = step.candidates
    if not cands:
        return
    scored = [c for c in cands if is_number(c.score)]
    norm = dict(zip([id(c) for c in scored], C.normalise([float(c.score) for c in scored])))
    drew_scored = False
    for j, cand in enumerate(cands):
        t = norm.get(id(cand))
        colour = C.score_color(t) if t is not None else None
        if is_number(cand.score):
            label = ("score \u2264 " if is_partial(cand) else "score ") + f"{cand.score:.2f}"
        else:
            label = "no score"
        label += ", kept" if cand.kept else ""
        chain_ids = int_list(cand.extra.get("chain")) if isinstance(cand.extra, dict) else []
        if not chain_ids and chains is not None and len(chains) == len(cands):
            chain_ids = int_list(chains[j])
        if chain_ids:
            role = "beam" if cand.kept else "dropped"
            for tid in chain_ids:
                b.triplet(tid, role, color=colour if cand.kept else None, info=f"beam chain: {label}")
            drew_scored = drew_scored or cand.kept
        elif cand.triplet_id is not None or cand.triplet:
            ok = b.triplet(cand.triplet_id, "candidate", triplet=cand.triplet, color=colour,
                           width=3.5 if cand.kept else 2.0, info=f"candidate: {label}")
            drew_scored = drew_scored or ok
    if drew_scored and scored:
        b.score_range = (min(float(c.score) for c in scored), max(float(c.score) for c in scored))


class StepView:
    """The default view; a method's view overrides what differs.

    ``prefixes`` are the step kinds the view owns: by the trace format's rule
    (a step kind is prefixed by its method) ``("<method>.",)`` unless a view
    says otherwise; ``legacy_prefixes`` are kinds it reads only in traces of
    its own ``method`` (CoT and Direct traces saved before they had their own
    kinds used ``dog.*``).
    """

    method: str = ""
    label: str = "Unknown method"
    prefixes: tuple[str, ...] = ()
    legacy_prefixes: tuple[str, ...] = ()
    score_unit: str = "score"
    score_is_logprob: bool = False
    drawn_extras: frozenset[str] = frozenset()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.method and "prefixes" not in cls.__dict__:
            cls.prefixes = (f"{cls.method}.",)

    # ------------------------------------------------------------ dispatch
    def owns(self, kind: str) -> bool:
        return any(kind.startswith(p) for p in self.prefixes)

    def accepts(self, kind: str) -> bool:
        return self.owns(kind) or any(kind.startswith(p) for p in self.legacy_prefixes)

    # --------------------------------------------------------------- names
    def step_name(self, trace: Trace, index: int) -> str:
        """What the step did, in words (without "Step i of n")."""
        step = trace.steps[index]
        return str(step.title).strip() or "step"

    def is_answer_step(self, step: Step) -> bool:
        return step.kind.endswith(".answer")

    # --------------------------------------------------------------- scene
    def scene_layers(self, b: SceneBuilder, trace: Trace, upto: Sequence[Step], step: Step | None,
                     graph: Any | None) -> None:
        """Layers that accumulate over the steps so far (paths, sub-questions, key entities)."""

    def step_layers(self, b: SceneBuilder, trace: Trace, step: Step, graph: Any | None) -> None:
        """This step's own candidates and choice."""
        add_candidates(b, step)

    # --------------------------------------------------------------- text
    def display_text(self, step: Step) -> str:
        """The model text to highlight for this step."""
        return step.model_text

    def score_unit_for(self, step: Step) -> str:
        """The x-axis title of the step's score chart."""
        return self.score_unit

    def scores_are_logprobs(self, step: Step) -> bool:
        return self.score_is_logprob

    def finish_scene(self, b: SceneBuilder, trace: Trace, upto: Sequence[Step], step: Step | None,
                     graph: Any | None) -> None:
        """Last touches once every node is in (RoK sizes nodes by PageRank)."""

    def score_legend(self, step: Step) -> str:
        """One or two sentences on what the step's scores mean (plain text)."""
        if self.score_is_logprob:
            return ("Score = log-probability the model gave the option (0 is certain; more negative is less "
                    "likely); the probability is in the tooltip. Kept = the option the step chose.")
        return "Kept = the option the step chose."

    def candidate_reason(self, step: Step, cand: Candidate) -> str:
        return "kept: chosen at this step" if cand.kept else "not chosen"

    def candidate_label(self, step: Step, cand: Candidate) -> str:
        return candidate_text(cand)

    # -------------------------------------------------------- Streamlit
    def has_side_panel(self, step: Step) -> bool:
        return False

    def render_side_panel(self, step: Step, height: int) -> None:
        """A panel between the graph and the step facts (READS' abstract structure)."""

    def render_panels(self, trace: Trace, step: Step | None, index: int, graph: Any | None) -> None:
        """Method panels under the graph."""

    def undrawn_extras(self, step: Step) -> dict[str, Any]:
        return {k: v for k, v in step.extra.items() if k not in self.drawn_extras}


class GenericView(StepView):
    """A step no view claims: drawn from the schema's common fields, its extras shown as JSON."""

    label = "a method this workbench does not know"

    def step_name(self, trace: Trace, index: int) -> str:
        step = trace.steps[index]
        return (str(step.title).strip() or "step") + " (unknown step type)"

    def render_panels(self, trace: Trace, step: Step | None, index: int, graph: Any | None) -> None:
        if step is None:
            return
        import streamlit as st

        st.info("This step's type is not one this workbench knows how to draw (a newer method, or a hand-made "
                "trace); the graph shows its subgraph and candidates, and its data is below as JSON.",
                icon=":material/help:")
        st.json(json.loads(json.dumps({"kind": step.kind, "extra": step.extra}, default=str)), expanded=True)
