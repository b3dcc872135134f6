"""Direct baseline: answer from the DoG context without a reasoning chain (paper §3.3).

The prompt is the Direct variant of Tab. 6 (see `kgqa_core.decoding.prompt`):
the same pruned graph, the same three in-context examples with their chains
omitted (``Answer: * Bahamas.``), and the question; the model continues after
"Answer:" and its ``* X`` markers are the answers.  Greedy decoding stops at
the end of the answer line.  One step, ``direct.answer``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from .. import progress
from ..decoding.context import PromptParams, decode_prompt_freely, describe_context, prepare, resolve_answers
from ..decoding.free_text import direct_stop
from ..decoding.prompt import parse_answers
from ..parameters import param
from ..trace.extras import AnswerExtra, to_extra
from ..trace.faithfulness import check_chains
from ..trace.schema import Step
from .base import MethodRequest, MethodSpec
from .recorder import TraceRecorder


@dataclass(frozen=True)
class DirectParams(PromptParams):
    max_new_tokens: int = param(64, "Tokens the model may write for its answer line.", min=1, max=4096)

    # the baseline as the DoG paper ran it: every candidate triplet ranked for the prompt
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {"paper": {"context_pool": 0}}


def run(request: MethodRequest, params: DirectParams, rec: TraceRecorder) -> None:
    trace = rec.trace
    progress.stage("building the prompt from the graph")
    ctx = prepare(request, "direct", params)
    describe_context(trace, ctx)
    progress.stage("writing the answer")
    out = decode_prompt_freely(request, ctx, trace, stop=direct_stop)
    rec.count_call(out.prompt_tokens)
    text = out.free.text
    trace.raw_output = text
    texts = parse_answers(text)
    with progress.phase(progress.ANSWERS):
        trace.answers = resolve_answers(texts, request.graph, ctx.topics, trace.notes, question=request.question)
    rec.step(Step(
        index=0,
        kind="direct.answer",
        title=f"Answer: {', '.join(texts) if texts else 'no answer marked'}",
        choice=", ".join(texts) if texts else None,
        model_text=text,
        tokens_out=out.tokens_out,
        seconds=round(out.seconds, 4),
        note="" if texts else "the model marked no answer with *",
        extra=to_extra(AnswerExtra(answers=texts, stop=out.free.stop)),
    ))
    with progress.phase(progress.ANSWERS):
        trace.faithfulness = check_chains(request.graph, [], ctx.topics, trace.answers)


SPEC = MethodSpec("direct", run, DirectParams, "Direct answer with the DoG prompt, no reasoning chain")
