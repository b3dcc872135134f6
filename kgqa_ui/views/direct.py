"""Direct: the model answers from the prompt's triplets in one go, with no chain to replay.

Old Direct traces used the kind ``dog.answer``; the registry sends them here
when the trace's method is ``direct``.
"""

from __future__ import annotations

from kgqa_core.trace.schema import Trace

from .base import StepView


class DirectView(StepView):
    method = "direct"
    label = "Direct answer"
    legacy_prefixes = ("dog.",)
    drawn_extras = frozenset({"answers", "stop"})

    def step_name(self, trace: Trace, index: int) -> str:
        step = trace.steps[index]
        if self.is_answer_step(step):
            return "answer (no reasoning chain)"
        return super().step_name(trace, index)


VIEWS = [DirectView()]
