"""CoT baseline: the DoG prompt, decoded greedily without the graph constraint (paper §3.3).

The model sees exactly DoG's prompt and writes its chain freely.  Afterwards
every ``< h -> r -> t >`` it wrote is checked against the graph: a triplet
that is not in the graph, or that touches no topic entity and no entity of
an earlier triplet, is ill-formed (§2.2) and flagged in the ``cot.check``
step and the faithfulness report.  The ``cot.triplet`` steps replay the
written chain over the same query-centric subgraph DoG would have used, so
the UI can show where CoT left it; ``cot.answer`` ends the trace.
Parameters: `CotParams`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from .. import progress
from ..decoding.context import PromptParams, decode_prompt_freely, describe_context, prepare, resolve_answers
from ..decoding.prompt import parse_answers, parse_written_triplets
from ..decoding.query_subgraph import QueryCentricSubgraph
from ..parameters import param
from ..trace.extras import AnswerExtra, CotCheckExtra, CotTripletExtra, IllTriplet, to_extra
from ..trace.faithfulness import check_chains, ground_chain
from ..trace.schema import Candidate, Step
from .base import MethodRequest, MethodSpec
from .recorder import TraceRecorder


@dataclass(frozen=True)
class CotParams(PromptParams):
    force_conclusion: bool = param(
        True, "A text that loops or runs out of budget without an answer gets 'Therefore, the answer is' "
        "appended, as in DoG.", advanced=True)
    complete_answers: bool = param(
        True, "When the last written triplet is grounded, add the other entities the graph holds for the answer "
        "after the model's own: along the chain's relation path from the topic entity when every triplet is "
        "grounded, else from the last triplet's relation (kgqa_core.answers.completion).", advanced=True)

    # the baseline as the DoG paper runs it: the model's own text, nothing forced or completed
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {"paper": {"force_conclusion": False, "complete_answers": False,
                                                                   "context_pool": 0}}


def run(request: MethodRequest, params: CotParams, rec: TraceRecorder) -> None:
    progress.stage("building the prompt from the graph")
    ctx = prepare(request, "dog", params)
    describe_context(rec.trace, ctx)
    progress.stage("writing a chain of thought")
    out = decode_prompt_freely(request, ctx, rec.trace, conclude=params.force_conclusion)
    rec.count_call(out.prompt_tokens)
    rec.trace.raw_output = ctx.prompt.assistant_prefix + out.free.text
    _replay(request, ctx, rec, out.free.text, out.seconds, out.tokens_out)


def _replay(request: MethodRequest, ctx: Any, rec: TraceRecorder, text: str, gen_seconds: float,
            tokens_out: int) -> None:
    """Trace steps for the written chain, the graph check, and the answer."""
    trace, graph = rec.trace, request.graph
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
        rec.step(Step(
            index=0,
            kind="cot.triplet",
            title=f"Step {i + 1}: {w.raw}" + ("" if ct.grounded else " (ill-formed)"),
            beam=0,
            subgraph_before=before,
            subgraph_after=sub.triplet_ids,
            added_entities=added,
            choice=w.raw,
            chosen_triplet_id=ct.triplet_id,
            model_text=text[prev_end:w.start],
            note=ct.reason,
            extra=to_extra(CotTripletExtra(
                chain=[c for c in chain_ids if c is not None], in_graph=ct.in_graph, grounded=ct.grounded,
                in_subgraph=ct.triplet_id is not None and ct.triplet_id in before,
            )),
        ))
        prev_end = w.end
    ill = [
        IllTriplet(index=i, triplet=[ct.head, ct.relation, ct.tail], reason=ct.reason, text=w.raw)
        for i, (w, ct) in enumerate(zip(written, grounded))
        if not ct.grounded
    ]
    rec.step(Step(
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
        extra=to_extra(CotCheckExtra(ill=ill)),
    ))
    texts = parse_answers(text[prev_end:]) or parse_answers(text)
    chain = None  # the whole chain when every triplet is grounded, else the last one alone if it is
    if grounded and ctx.params.complete_answers and grounded[-1].grounded:
        kept = grounded if all(g.grounded for g in grounded) else grounded[-1:]
        chain = [graph.triplet(g.triplet_id) for g in kept]
    with progress.phase(progress.ANSWERS):
        trace.answers = resolve_answers(texts, graph, trace.topic_entities, trace.notes, complete_from=chain,
                                        chain_entities=[e for g in grounded if g.grounded
                                                        for e in graph.triplet(g.triplet_id).as_tuple[::2]],
                                        question=request.question)
    rec.step(Step(
        index=0,
        kind="cot.answer",
        title=f"Answer: {', '.join(texts) if texts else 'no answer marked'}",
        beam=0,
        subgraph_before=sub.triplet_ids,
        subgraph_after=sub.triplet_ids,
        choice=", ".join(texts) if texts else None,
        model_text=text[prev_end:],
        tokens_out=tokens_out,
        seconds=round(gen_seconds, 4),
        extra=to_extra(AnswerExtra(answers=texts, stop=trace.extra.get("stop", ""),
                                   forced_conclusion=bool(trace.extra.get("forced_conclusion")))),
        note=next((n for n in trace.notes if "Therefore, the answer is" in n), ""),
    ))
    trace.chains = [grounded] if grounded else []
    trace.chain_scores = [0.0] if grounded else []  # CoT chains are not scored
    with progress.phase(progress.ANSWERS):
        trace.faithfulness = check_chains(graph, [grounded] if grounded else [], ctx.topics, trace.answers)


SPEC = MethodSpec("cot", run, CotParams,
                  "Chain-of-thought with the DoG prompt, unconstrained (triplets checked afterwards)")
