"""Direct baseline: answer from the DoG context without a reasoning chain (paper §3.3).

The prompt is the Direct variant of Tab. 6 (see `kgqa_core.decoding.prompt`):
the same pruned graph, the same three in-context examples with their chains
omitted (``Answer: * Bahamas.``), and the question; the model continues after
"Answer:" and its ``* X`` markers are the answers.  Greedy decoding stops at
the end of the answer line.

Parameters: max_new_tokens (64), max_prompt_triplets (120), chat_template (True),
prompt_layout ("turns").
"""

from __future__ import annotations

import time
from typing import Any

from ..decoding.context import ContextError, decode_prompt_freely, failed_trace, new_trace, prepare, resolve_answers
from ..decoding.free_text import direct_stop
from ..decoding.prompt import parse_answers
from ..models.interface import PromptTooLongError
from ..trace.faithfulness import check_chains
from ..trace.schema import Step, Trace
from .base import MethodRequest

DEFAULTS: dict[str, Any] = {
    "max_new_tokens": 64,
    "max_prompt_triplets": 120,
    "chat_template": True,
    "prompt_layout": "turns",
}


def run(request: MethodRequest) -> Trace:
    started = time.perf_counter()
    try:
        ctx = prepare(request, "direct", DEFAULTS)
    except ContextError as exc:
        return failed_trace("direct", request, started, exc)
    trace = new_trace("direct", request, ctx)
    try:
        free, gen_seconds = decode_prompt_freely(request, ctx, trace, stop=direct_stop)
    except PromptTooLongError as exc:
        trace.error = str(exc)
        trace.seconds = time.perf_counter() - started
        return trace
    text = free.text
    trace.raw_output = text
    texts = parse_answers(text)
    trace.answers = resolve_answers(texts, request.graph, ctx.topics, trace.notes)
    step = Step(
        index=0,
        kind="dog.answer",
        title=f"Answer: {', '.join(texts) if texts else 'no answer marked'}",
        choice=", ".join(texts) if texts else None,
        model_text=text,
        tokens_out=trace.tokens_out,
        seconds=round(gen_seconds, 4),
        note="" if texts else "the model marked no answer with *",
        extra={"answers": texts, "stop": free.stop},
    )
    trace.add_step(step)
    request.emit(step)
    trace.faithfulness = check_chains(request.graph, [], ctx.topics, trace.answers)
    trace.seconds = time.perf_counter() - started
    return trace
