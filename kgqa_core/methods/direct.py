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

from ..decoding.context import ContextError, new_trace, prepare, resolve_answers
from ..decoding.free_text import decode_free_text, direct_stop
from ..decoding.prompt import parse_answers
from ..models.local_model import PromptTooLongError
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
        return Trace(method="direct", question=request.question, parameters=dict(request.params), error=str(exc),
                     seconds=time.perf_counter() - started)
    trace = new_trace("direct", request, ctx)
    model = request.model
    try:
        with model.lock:
            before = model.counter.snapshot()
            ids = model.encode(ctx.prompt.text)
            reused0 = getattr(model.counter, "prefix_tokens_reused", 0)
            state = model.prefill(ids)  # reuses the cached keys/values of a shared prefix
            reused = getattr(model.counter, "prefix_tokens_reused", 0) - reused0
            t0 = time.perf_counter()
            free = decode_free_text(model, state, ctx.params["max_new_tokens"], detector=None, stop=direct_stop)
            gen_seconds = time.perf_counter() - t0
            after = model.counter.snapshot()
    except PromptTooLongError as exc:
        trace.error = str(exc)
        trace.seconds = time.perf_counter() - started
        return trace
    trace.model_calls = 1
    trace.tokens_in = len(ids)
    trace.extra["prompt_tokens"] = len(ids)
    trace.extra["prompt_tokens_cached"] = reused
    trace.forward_passes = after[0] - before[0]
    trace.tokens_out = after[2] - before[2]
    trace.extra["stop"] = free.stop
    text = free.text
    trace.raw_output = text
    texts = parse_answers(text)
    trace.answers = resolve_answers(texts, request.graph)
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
