"""LPKG: a plan of sub-questions, each answered by a graph query, in its own colour."""

from __future__ import annotations

from typing import Any, Sequence

from kgqa_core.trace.schema import Step, Trace

from .. import colors as C
from ..scene import LegendItem, SceneBuilder, truncate
from .base import StepView


def _sub_index(step: Step) -> int | None:
    idx = step.extra.get("subquestion")
    return idx if isinstance(idx, int) and not isinstance(idx, bool) and idx >= 0 else None


class LpkgView(StepView):
    method = "lpkg"
    label = "LPKG (planned graph queries)"
    drawn_extras = frozenset({"subquestion", "sub_question", "sub_questions", "answers"})

    def step_name(self, trace: Trace, index: int) -> str:
        step = trace.steps[index]
        idx = _sub_index(step)
        if step.kind == "lpkg.plan":
            return "plan: split the question into sub-questions"
        if step.kind == "lpkg.search" and idx is not None:
            return f"sub-question {idx + 1}: graph query"
        if step.kind == "lpkg.set_op":
            return "set operation on sub-answers"
        if step.kind == "lpkg.answer":
            return "answer" + (f" of sub-question {idx + 1}" if idx is not None else "")
        return super().step_name(trace, index)

    def scene_layers(self, b: SceneBuilder, trace: Trace, upto: Sequence[Step], step: Step | None,
                     graph: Any | None) -> None:
        seen: set[int] = set()
        for s in upto:
            idx = _sub_index(s)
            if idx is None:
                continue
            colour = C.categorical(idx)
            text = str(s.extra.get("sub_question", ""))
            for tid in s.subgraph_after:
                b.triplet(tid, "path", color=colour, info=f"sub-question {idx + 1}: {text}")
            if idx not in seen:
                seen.add(idx)
                b.legend_item(LegendItem(f"sub-question {idx + 1}: {truncate(text, 50)}", colour, "edge"))

    def render_panels(self, trace: Trace, step: Step | None, index: int, graph: Any | None) -> None:
        import streamlit as st

        from ..html_utils import esc

        upto = trace.steps if step is None else trace.steps[: index + 1]
        plan = next((s.extra.get("sub_questions") for s in upto if isinstance(s.extra.get("sub_questions"), list)),
                    None)
        plan = [q for q in plan if isinstance(q, (str, int, float))] if isinstance(plan, list) else []
        rows, shown = [], set()
        for s in upto:
            idx = _sub_index(s)
            if idx is None or idx in shown or "sub_question" not in s.extra:
                continue
            shown.add(idx)
            ans = s.extra.get("answers")
            ans_text = ", ".join(map(str, ans)) if isinstance(ans, list) else ("" if ans is None else str(ans))
            rows.append(
                f'<div class="kg-sub" style="border-left:6px solid {C.categorical(idx)}">'
                f"<b>sub-question {idx + 1}</b>: {esc(s.extra.get('sub_question', ''))}"
                + (f" &rarr; <i>{esc(ans_text)}</i>" if ans_text else "") + "</div>"
            )
        for i, q in enumerate(plan):
            if i not in shown:
                rows.append(f'<div class="kg-sub kg-sub-todo">sub-question {i + 1}: {esc(q)} (not yet executed)</div>')
        if rows:
            with st.container(border=True):
                st.markdown("**LPKG: sub-questions** (each in its colour on the graph)")
                st.html("<style>.kg-sub{padding:2px 8px;margin:3px 0}.kg-sub-todo{border-left:6px solid #adb5bd;"
                        "opacity:.75}</style>" + "".join(rows))


VIEWS = [LpkgView()]
