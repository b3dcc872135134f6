"""CoT baseline: the DoG prompt, decoded greedily without the graph constraint (paper §3.3).

The model sees exactly DoG's prompt and writes its chain freely.  Afterwards
every ``< h -> r -> t >`` it wrote is checked against the graph: a triplet
that is not in the graph, or that touches no topic entity and no entity of
an earlier triplet, is ill-formed (§2.2) and flagged in the ``cot.check``
step and the faithfulness report.  The ``dog.triplet`` steps replay the
written chain over the same query-centric subgraph DoG would have used, so
the UI can show where CoT left it.

Parameters: max_new_tokens (256), max_prompt_triplets (120), chat_template (True),
prompt_layout ("turns"), force_conclusion (True: a text that loops or runs
out of budget without an answer gets "Therefore, the answer is" appended, as
in DoG), complete_answers (True: the answers are completed from the graph
from the last written triplet when it is grounded, as in DoG; see
`kgqa_core.answers.completion`).
"""

from __future__ import annotations

import time
from typing import Any

from ..decoding.context import ContextError, decode_prompt_freely, failed_trace, new_trace, prepare, resolve_answers
from ..decoding.prompt import parse_answers, parse_written_triplets
from ..decoding.query_subgraph import QueryCentricSubgraph
from ..models.local_model import PromptTooLongError
from ..trace.faithfulness import check_chains, ground_chain
from ..trace.schema import Candidate, Step, Trace
from .base import MethodRequest

DEFAULTS: dict[str, Any] = {
    "max_new_tokens": 256,
    "max_prompt_triplets": 120,
    "chat_template": True,
    "prompt_layout": "turns",
    "force_conclusion": True,
    "complete_answers": True,
}


def run(request: MethodRequest) -> Trace:
    started = time.perf_counter()
    try:
        ctx = prepare(request, "dog", DEFAULTS)
    except ContextError as exc:
        return failed_trace("cot", request, started, exc)
    trace = new_trace("cot", request, ctx)
    try:
        free, gen_seconds = decode_prompt_freely(
            request, ctx, trace, conclude=bool(ctx.params.get("force_conclusion", True))
        )
    except PromptTooLongError as exc:
        trace.error = str(exc)
        trace.seconds = time.perf_counter() - started
        return trace
    text = free.text
    trace.raw_output = ctx.prompt.assistant_prefix + text
    _replay(request, ctx, trace, text, gen_seconds)
    trace.seconds = time.perf_counter() - started
    return trace


def _replay(request: MethodRequest, ctx: Any, trace: Trace, text: str, gen_seconds: float) -> None:
    """Trace steps for the written chain, the graph check, and the answer."""
    graph = request.graph
    written = parse_written_triplets(text, graph)
    grounded = ground_chain(graph, [(w.head, w.relation, w.tail) for w in written], ctx.topics)
    sub = QueryCentricSubgraph(ctx.context_graph, ctx.topics)
    chain_ids: list[int | None] = []
    context_ids = set(ctx.context_ids)
    prev_end = 0
    for i, (w, ct) in enumerate(zip(written, grounded)):
        before = sub.triplet_ids
        added: list[str] = []
        if ct.triplet_id is not None and ct.triplet_id in context_ids:
            added = sub.expand(graph.triplet(ct.triplet_id))
        chain_ids.append(ct.triplet_id)
        step = Step(
            index=0,
            kind="dog.triplet",
            title=f"Step {i + 1}: {w.raw}" + ("" if ct.grounded else " (ill-formed)"),
            beam=0,
            subgraph_before=before,
            subgraph_after=sub.triplet_ids,
            added_entities=added,
            choice=w.raw,
            chosen_triplet_id=ct.triplet_id,
            model_text=text[prev_end:w.start],
            note=ct.reason,
            extra={
                "chain": [c for c in chain_ids if c is not None],
                "in_graph": ct.in_graph,
                "grounded": ct.grounded,
                "in_subgraph": ct.triplet_id is not None and ct.triplet_id in before,
                "unconstrained": True,
            },
        )
        prev_end = w.end
        trace.add_step(step)
        request.emit(step)
    ill = [
        {"index": i, "triplet": [ct.head, ct.relation, ct.tail], "reason": ct.reason, "text": w.raw}
        for i, (w, ct) in enumerate(zip(written, grounded))
        if not ct.grounded
    ]
    check = Step(
        index=0,
        kind="cot.check",
        title=f"Checked {len(written)} written triplet(s) against the graph: {len(ill)} ill-formed",
        candidates=[
            Candidate(label=w.raw, score=1.0 if ct.grounded else 0.0, triplet_id=ct.triplet_id,
                      triplet=(ct.head, ct.relation, ct.tail), kept=ct.grounded,
                      extra={"reason": ct.reason, "in_graph": ct.in_graph, "well_split": w.well_split,
                             "opened": w.opened, "closed": w.closed})
            for w, ct in zip(written, grounded)
        ],
        note="; ".join(
            n for n in (
                "" if written else "the model wrote no triplet",
                f"{sum(not w.closed for w in written)} triplet(s) never closed with '>'"
                if any(not w.closed for w in written) else "",
                f"{sum(not w.opened for w in written)} triplet(s) written without '<'"
                if any(not w.opened for w in written) else "",
            ) if n
        ),
        extra={"ill": ill},
    )
    trace.add_step(check)
    request.emit(check)
    texts = parse_answers(text[prev_end:]) or parse_answers(text)
    last = grounded[-1] if grounded and ctx.params.get("complete_answers", True) else None
    last_triplet = graph.triplet(last.triplet_id) if last is not None and last.grounded else None
    trace.answers = resolve_answers(texts, graph, trace.topic_entities, trace.notes, complete_from=last_triplet)
    answer = Step(
        index=0,
        kind="dog.answer",
        title=f"Answer: {', '.join(texts) if texts else 'no answer marked'}",
        beam=0,
        subgraph_before=sub.triplet_ids,
        subgraph_after=sub.triplet_ids,
        choice=", ".join(texts) if texts else None,
        model_text=text[prev_end:],
        tokens_out=trace.tokens_out,
        seconds=round(gen_seconds, 4),
        extra={"answers": texts, "stop": trace.extra.get("stop", ""),
               "forced_conclusion": bool(trace.extra.get("forced_conclusion"))},
        note=next((n for n in trace.notes if "Therefore, the answer is" in n), ""),
    )
    trace.add_step(answer)
    request.emit(answer)
    trace.chains = [grounded] if grounded else []
    trace.chain_scores = [0.0] if grounded else []  # CoT chains are not scored
    trace.faithfulness = check_chains(graph, [grounded] if grounded else [], ctx.topics, trace.answers)
