"""The question's reading (``reading.plan``): the first step of DoG, READS and RoK when they read the question.

Its candidates are the reading's relation plans (paths the graph holds from
the question's entity), each with the reader's probability that it answers
the question; the kept one is the plan the method follows.  The step has no
triplets of its own, so the graph shows the question's entities; the plans
and the reading's explanation are drawn under it as text.
"""

from __future__ import annotations

from typing import Any

from kgqa_core.trace.schema import Candidate, Step, Trace

from .base import StepView


class ReadingView(StepView):
    label = "the question's reading"
    prefixes = ("reading.",)
    score_unit = "log-probability of the plan"
    score_is_logprob = True
    drawn_extras = frozenset({"reading", "sure_at"})

    def step_name(self, trace: Trace, index: int) -> str:
        step = trace.steps[index]
        reading = step.extra.get("reading") if isinstance(step.extra.get("reading"), dict) else {}
        if not step.candidates or not reading.get("hops"):
            return "reading the question: not read"
        conf = reading.get("confidence")
        sure = f", {conf:.0%} sure" if isinstance(conf, (int, float)) else ""
        return f"reading the question: {reading.get('hops')} hop(s){sure}"

    def score_legend(self, step: Step) -> str:
        return ("Each option is a relation path the graph holds from the question's entity; its score is the "
                "log-probability the reader gave it (0 is certain), the probability is in the tooltip. Kept = the "
                "plan the method follows. The reading holds the steps to its plan only when it is sure enough "
                f"(at least {_sure_at(step):.0%}); otherwise it sets how many steps the method may take, and DoG "
                "keeps each step to the relations of its likeliest plans (unsure_relations; the step's note says).")

    def candidate_reason(self, step: Step, cand: Candidate) -> str:
        return "kept: the plan the method follows" if cand.kept else "another reading of the question"

    def render_panels(self, trace: Trace, step: Step | None, index: int, graph: Any | None) -> None:
        if step is None:
            return
        import streamlit as st

        from ..html_utils import md_text

        reading = step.extra.get("reading") if isinstance(step.extra.get("reading"), dict) else {}
        plans = [p for p in reading.get("plans", []) if isinstance(p, dict)] if isinstance(
            reading.get("plans"), list) else []
        if reading.get("explanation"):
            st.caption("Reader " + md_text(reading.get("reader", "?")) + ": " + md_text(reading["explanation"]))
        if plans:
            st.dataframe(
                [{"plan": str(p.get("text", "")), "confidence": p.get("confidence"),
                  "example entity it reaches": str(p.get("example", "")), "entities reached": p.get("reaches")}
                 for p in plans],
                hide_index=True, width="stretch",
                column_config={"confidence": st.column_config.ProgressColumn(
                    "confidence", min_value=0.0, max_value=1.0, format="percent")},
            )
        vocab = trace.extra.get("vocabulary")
        if isinstance(vocab, dict) and isinstance(vocab.get("entries"), dict) and vocab["entries"]:
            st.caption("With your relation vocabulary (" + md_text(vocab.get("source") or "no file") + "): "
                       + md_text("; ".join(f"{r}: {', '.join(map(str, a))}" for r, a in vocab["entries"].items()
                                           if isinstance(a, list))))


def _sure_at(step: Step) -> float:
    value = step.extra.get("sure_at")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.5


VIEWS = [ReadingView()]
