"""DoG: Decoding on Graphs (Li et al.), graph-aware constrained decoding with triplet-level beam search.

The model reads the Tab. 6 prompt (the pruned graph, three examples, the
question) and writes its reasoning.  Free text is greedy; when the model
opens a triplet (a token containing ``<``), only token sequences spelling a
triplet of the chain's query-centric subgraph G_q may follow (§2.3, Eq. 1-2);
once the triplet closes, G_q grows by the triplets touching its entities and
free text resumes, until "Therefore, the answer is ..." ends, EOS, or the
token budget.  With ``beam_size`` k > 1, each step's token-level beam search
returns k triplets per chain and the k best chains by chain score (sum of
Eq. 3 triplet scores) survive (§2.4).  Every chain carries its own G_q and
KV cache; the prompt is run through the model once and shared.

Parameters: `DogParams` (each with its range and one-line help).  Notes on
three of them.  ``force_conclusion`` (True): a chain whose text loops, runs
out of budget or ends without an answer line gets "Therefore, the answer is"
appended and the model finishes that line; CoT does the same.  Not in the
paper, which assumes the model concludes by itself; the trace notes every
forced conclusion.  ``repeat_triplets`` (False): a triplet already in the
chain is left out of the trie, so every step adds a new fact and a chain
whose G_q holds nothing new must conclude.  The paper's G_q keeps them; a
small model then spends steps re-writing the triplet it just wrote.
``reverse_readings`` (True): the trie also offers each G_q triplet read
backwards, ``< tail -> relation (reverse) -> head >``, so a step can start
from the entity the chain stands on when that entity is the triplet's tail;
the chain records the graph triplet.  The paper's Freebase graphs hold most
facts in both directions, one-direction graphs such as MetaQA do not; see
`kgqa_core.graph.readings`.

Chains are ranked by the paper's chain score, a sum of log-probabilities,
which favours shorter chains when finished chains of different lengths are
compared; that is the paper's definition and is kept.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from ..decoding.beam import (
    BeamCandidate,
    TripletBeamSearch,
    TripletHypothesis,
    TripletSearchResult,
    select_chains,
    token_view,
)
from ..decoding.constraint import ConstraintError, OpeningDetector, TripletGuide
from ..decoding.context import (
    DecodingContext,
    PromptParams,
    conclusion_note,
    context_prompt,
    describe_context,
    logprob_to_prob,
    prepare,
    resolve_answers,
)
from ..decoding.free_text import decode_free_text, force_conclusion, needs_conclusion
from ..decoding.prompt import PromptParts, parse_answers, parse_written_triplets
from ..decoding.query_subgraph import QueryCentricSubgraph
from ..graph.readings import is_reversed, reading_of, readings, triplet_of
from ..decoding.triplet_trie import TripletTokenCache, TripletTrie
from ..parameters import param
from ..trace.faithfulness import check_chains, ground_chain
from ..trace.schema import Candidate, Step
from .base import MethodRequest, MethodSpec
from .recorder import TraceRecorder

@dataclass(frozen=True)
class DogParams(PromptParams):
    beam_size: int = param(1, "Chains kept after each triplet (triplet-level beam, §2.4).", min=1, max=16)
    max_steps: int = param(4, "Triplets per chain.", min=0, max=16)
    local_visibility: bool = param(
        False, "The prompt shows only the chain's current G_q (§5.2); re-reads the prompt after every triplet.",
        advanced=True)
    strict: bool = param(False, "Raise to the caller when the constraint allows no token (else the chain "
                         "stops and the trace records why).", advanced=True)
    token_view_cap: int = param(20, "Allowed tokens listed per position in the token view.", min=1, max=200,
                                advanced=True)
    force_conclusion: bool = param(
        True, "A chain that loops, runs out of budget or ends without an answer line gets "
        "'Therefore, the answer is' appended (not in the paper; noted in the trace).", advanced=True)
    repeat_triplets: bool = param(
        False, "Let a chain write a triplet it already holds again (the paper's trie).", advanced=True)
    reverse_readings: bool = param(
        True, "Offer each G_q triplet read backwards too, '< tail -> relation (reverse) -> head >'.", advanced=True)
    auto_steps: bool = param(
        True, "Raise max_steps to two triplets per hop the question names (kgqa_core.methods.hop_budget); noted.",
        advanced=True)
    complete_answers: bool = param(
        True, "When the chain's last triplet names one of several entities its relation holds, add the others "
        "after the model's answers (not in the paper; kgqa_core.answers.completion).", advanced=True)
    gq_scope: str = param(
        "graph", "graph: G_q grows over the whole graph (hubs cut to walk_cap), so a chain may write triplets the "
        "prompt did not show; prompt: G_q stays inside the prompt's pruned context.", choices=("graph", "prompt"),
        advanced=True)
    walk_cap: int = param(
        200, "Triplets of one entity G_q may take in (hubs cut, relations the question names first).",
        min=1, max=100_000, advanced=True)


def run(request: MethodRequest, params: DogParams, rec: TraceRecorder) -> None:
    """Answer `request.question` with DoG; see the module docstring."""
    if params.auto_steps:
        from .hop_budget import auto_step_budget

        params = auto_step_budget(params, request, rec.trace.notes)
    ctx = prepare(request, "dog", params)
    describe_context(rec.trace, ctx)
    if params.gq_scope == "graph":
        from ..graph.capped_view import HubCappedView
        from ..graph.embeddings import load_embedder

        walk = HubCappedView(request.graph, request.question, params.walk_cap, embedder=load_embedder())
        ctx.walk_graph = walk
        _DogDecoder(request, ctx, rec).decode()
        if walk.cuts:
            rec.trace.notes.append(walk.cut_note())
    else:
        _DogDecoder(request, ctx, rec).decode()


class _DogDecoder:
    """One DoG run: the beam loop, its trace steps, and the final answer."""

    def __init__(self, request: MethodRequest, ctx: DecodingContext, rec: TraceRecorder) -> None:
        self.request = request
        self.model = request.model
        self.ctx = ctx
        self.rec = rec
        self.trace = rec.trace
        self.params = ctx.params
        self.k = self.params["beam_size"]
        self.tokens = TripletTokenCache(self.model.tokenizer)
        self.search = TripletBeamSearch(self.model, self.k)
        self._tries: dict[tuple[str, tuple[int, ...]], TripletTrie] = {}
        self._next_beam = 0
        self.trie_build_seconds: list[float] = []

    # ----------------------------------------------------------- helpers
    def _beam_id(self) -> int:
        self._next_beam += 1
        return self._next_beam - 1

    def _label(self, tid: int) -> str:
        return self.request.graph.triplet(tid).linearized()

    def _allowed_ids(self, beam: BeamCandidate) -> list[int]:
        """The triplets the next step may write: G_q, less the chain's own unless repeats are allowed."""
        ids = beam.subgraph.triplet_ids
        if self.params["repeat_triplets"] or not beam.chain:
            return ids
        used = set(beam.chain)
        return [t for t in ids if t not in used]

    def _trie(self, allowed_ids: list[int], opener: str) -> TripletTrie:
        key = (opener, tuple(allowed_ids))
        trie = self._tries.get(key)
        if trie is None:
            t0 = time.perf_counter()
            triplets = self.ctx.walk_graph.triplets_by_ids(allowed_ids)
            trie = TripletTrie.build(readings(triplets, self.params["reverse_readings"]), opener=opener, cache=self.tokens)
            self.trie_build_seconds.append(time.perf_counter() - t0)
            if len(self._tries) > 64:
                self._tries.pop(next(iter(self._tries)))
            self._tries[key] = trie
        return trie

    def _prefill(self, prompt: PromptParts, generated: list[int]):
        ids = self.model.encode(prompt.text)
        self.rec.count_call(len(ids) + len(generated))
        before = getattr(self.model.counter, "prefix_tokens_reused", 0)
        state = self.model.prefill(ids + generated)  # reuses the cached keys/values of a shared prefix
        reused = getattr(self.model.counter, "prefix_tokens_reused", 0) - before
        self.trace.extra["prompt_tokens_cached"] = self.trace.extra.get("prompt_tokens_cached", 0) + reused
        return state

    def _emit(self, step: Step) -> None:
        self.rec.step(step)

    # -------------------------------------------------------------- loop
    def decode(self) -> None:
        model, params, trace = self.model, self.params, self.trace
        detector = OpeningDetector.for_tokenizer(model.tokenizer)
        with model.lock:
            passes_before = model.counter.forward_passes
            out_before = model.counter.tokens_out
            t0 = time.perf_counter()
            base = self._prefill(self.ctx.prompt, [])
            trace.extra["prompt_tokens"] = len(base.ids)
            trace.extra["prefill_seconds"] = round(time.perf_counter() - t0, 4)
            t_decode, c_decode = time.perf_counter(), time.process_time()
            first = QueryCentricSubgraph(self.ctx.walk_graph, self.ctx.topics)
            beams = [BeamCandidate(state=base, subgraph=first, beam_id=self._beam_id())]
            finished: list[BeamCandidate] = []
            step_no = 0
            while beams:
                step_no += 1
                children: list[tuple[BeamCandidate, TripletHypothesis, BeamCandidate]] = []
                searched: list[tuple[BeamCandidate, Any, TripletSearchResult, float, str, str]] = []
                for beam in beams:
                    t_step = time.perf_counter()
                    budget = params["max_new_tokens"] - len(beam.generated_ids)
                    if budget <= 0:
                        self._finish(beam, "", "length", finished)
                        continue
                    allowed_ids = self._allowed_ids(beam)
                    can_open = len(beam.chain) < params["max_steps"] and bool(allowed_ids)
                    free = decode_free_text(model, beam.state, budget, detector, allow_open=can_open)
                    beam.generated_ids.extend(free.ids)
                    if free.stop != "open":
                        beam.text += free.text
                        self._finish(beam, free.text, free.stop, finished)
                        continue
                    beam.text += free.text + "<"
                    trie = self._trie(allowed_ids, free.opener)
                    guide = TripletGuide(trie)
                    try:
                        result = self.search.search(beam.state, guide)
                    except ConstraintError as exc:
                        if params["strict"]:
                            raise
                        self._constraint_failed(beam, free.text, str(exc), finished)
                        continue
                    searched.append((beam, guide, result, t_step, free.text, free.opener))
                    seen: set[int] = set()
                    for hyp in result.hypotheses:  # best first: one child per graph triplet
                        if triplet_of(hyp.triplet_id) not in seen:
                            seen.add(triplet_of(hyp.triplet_id))
                            children.append((beam, hyp, self._child(beam, hyp)))
                if not children:
                    break
                kept, dropped = select_chains([c for _, _, c in children], self.k)
                kept_ids = {id(c) for c in kept}
                self._materialise(children, kept_ids)
                for beam, guide, result, t_step, free_text, opener in searched:
                    self._triplet_step(beam, guide, result, children, kept_ids, free_text, t_step, opener)
                self._beam_step(step_no, children, kept_ids)
                beams = kept
            trace.extra["decode_seconds"] = round(time.perf_counter() - t_decode, 4)
            trace.extra["decode_cpu_seconds"] = round(time.process_time() - c_decode, 4)
            ranked = sorted(finished, key=lambda b: -b.score)
            self._final(ranked)
            passes = model.counter.forward_passes - passes_before
            n_tok = max(model.counter.tokens_out - out_before, 1)
            trace.extra["forward_passes_per_token"] = round((passes - self.rec.costs.model_calls) / n_tok, 4)
            trace.extra["trie_build_ms"] = [round(s * 1000, 3) for s in self.trie_build_seconds]

    def _child(self, parent: BeamCandidate, hyp: TripletHypothesis) -> BeamCandidate:
        """The chain `parent` + `hyp` (its KV state is attached only if it survives)."""
        sub = parent.subgraph.copy()
        triplet = self.ctx.walk_graph.triplet(triplet_of(hyp.triplet_id))
        sub.expand(triplet)
        return BeamCandidate(
            state=None,  # type: ignore[arg-type]
            subgraph=sub,
            chain=parent.chain + [triplet.id],
            triplet_scores=parent.triplet_scores + [hyp.score],
            text=parent.text + self.model.decode(hyp.token_ids),
            generated_ids=parent.generated_ids + list(hyp.token_ids),
            parent_id=parent.beam_id,
        )

    def _materialise(self, children, kept_ids: set[int]) -> None:
        """Give each surviving chain its KV state: the parent's (greedy) or a fork fed the triplet."""
        by_parent: dict[int, list[tuple[BeamCandidate, TripletHypothesis, BeamCandidate]]] = {}
        for parent, hyp, child in children:
            if id(child) in kept_ids:
                by_parent.setdefault(id(parent), []).append((parent, hyp, child))
        for group in by_parent.values():
            for i, (parent, hyp, child) in enumerate(group):
                child.beam_id = self._beam_id()
                if self.params["local_visibility"]:
                    prompt = context_prompt(self.ctx, self.request, child.subgraph.triplet_ids)
                    child.state = self._prefill(prompt, child.generated_ids)
                elif hyp.state is not None:
                    child.state = hyp.state  # greedy: the parent's state, already extended
                else:
                    state = parent.state if i == len(group) - 1 else self.model.fork(parent.state)
                    self.model.step(state, list(hyp.token_ids))
                    child.state = state

    # ------------------------------------------------------------- trace
    def _triplet_step(self, beam, guide, result: TripletSearchResult, children, kept_ids, free_text, t_step, opener) -> None:
        mine = [(h, c) for p, h, c in children if p is beam]
        best_hyp, best_child = mine[0]
        chosen = reading_of(self.request.graph, best_hyp.triplet_id)
        kept_tids = {triplet_of(h.triplet_id) for h, c in mine if id(c) in kept_ids}
        graph = self.request.graph
        cands = []
        # one entry per graph triplet: the reading that was decoded (exact score) if any, else the best bound
        best: dict[int, tuple[int, Any]] = {}
        for rid, cs in result.candidates.items():
            tid = triplet_of(rid)
            if tid not in best or (cs.exact, cs.score) > (best[tid][1].exact, best[tid][1].score):
                best[tid] = (rid, cs)
        for tid, (rid, cs) in sorted(best.items(), key=lambda kv: (-kv[1][1].score, kv[0])):
            t = graph.triplet(tid)
            reading = reading_of(graph, rid)
            cands.append(
                Candidate(
                    label=reading.label, score=cs.score, triplet_id=tid, triplet=t.as_tuple,
                    prob=logprob_to_prob(cs.score), kept=tid in kept_tids, beam=beam.beam_id,
                    extra={"exact": cs.exact, "reversed": reading.reversed},
                )
            )
        before = set(beam.subgraph.triplet_ids)
        added = sorted(best_child.subgraph.visited - beam.subgraph.visited)
        notes = [h.note for h, _ in mine if h.note]
        step = Step(
            index=0,
            kind="dog.triplet",
            title=f"Step {len(beam.chain) + 1} (beam {beam.beam_id}): {chosen.label}",
            beam=beam.beam_id,
            subgraph_before=sorted(before),
            subgraph_after=best_child.subgraph.triplet_ids,
            added_entities=added,
            candidates=cands,
            choice=chosen.label,
            chosen_triplet_id=chosen.triplet_id,
            model_text=free_text,
            token_view=token_view(self.model, best_hyp.positions, self.params["token_view_cap"]),
            tokens_out=len(best_hyp.token_ids),
            seconds=round(time.perf_counter() - t_step, 4),
            note="; ".join(notes),
            extra={
                "chain": list(best_child.chain),
                "chain_score": best_child.score,
                "triplet_score": best_hyp.score,
                "returned": [
                    {"triplet_id": triplet_of(h.triplet_id), "reversed": is_reversed(h.triplet_id), "score": h.score,
                     "kept": id(c) in kept_ids,
                     "beam": c.beam_id if id(c) in kept_ids else None}
                    for h, c in mine
                ],
                "forward_passes": result.forward_passes,
                **({"server_strategy": result.strategy} if getattr(result, "strategy", "") else {}),
                "trie_nodes": guide.trie.n_nodes,
                "opener": opener,
                "reversed": chosen.reversed,  # written backwards; chosen_triplet_id is the graph triplet
                # chain triplets the step could not write again (repeat_triplets False)
                "excluded_repeats": [] if self.params["repeat_triplets"] else list(beam.chain),
            },
        )
        self._emit(step)

    def _beam_step(self, step_no: int, children, kept_ids: set[int]) -> None:
        cands = []
        for parent, hyp, child in sorted(children, key=lambda x: -x[2].score):
            kept = id(child) in kept_ids
            cands.append(
                Candidate(
                    label=" | ".join(self._label(t) for t in child.chain),
                    score=child.score,
                    triplet_id=triplet_of(hyp.triplet_id),
                    triplet=self.request.graph.triplet(triplet_of(hyp.triplet_id)).as_tuple,
                    kept=kept,
                    beam=child.beam_id if kept else parent.beam_id,
                    extra={"chain": list(child.chain), "parent_beam": parent.beam_id},
                )
            )
        kept_children = [c for _, _, c in children if id(c) in kept_ids]
        step = Step(
            index=0,
            kind="dog.beam",
            title=f"Beam after step {step_no}: kept {len(kept_children)} of {len(children)} chains",
            candidates=cands,
            choice=cands[0].label if cands else None,
            extra={
                "chains": [list(c.chain) for c in sorted(kept_children, key=lambda c: -c.score)],
                "chain_scores": [c.score for c in sorted(kept_children, key=lambda c: -c.score)],
                "dropped": [list(c.chain) for _, _, c in children if id(c) not in kept_ids],
            },
        )
        self._emit(step)

    def _finish(self, beam: BeamCandidate, free_text: str, stop: str, finished: list[BeamCandidate]) -> None:
        beam.finished = True
        beam.stop = stop
        forced_note = ""
        if self.params["force_conclusion"] and needs_conclusion(stop, free_text) and not parse_answers(beam.text):
            forced = force_conclusion(self.model, beam.state)
            beam.generated_ids.extend(forced.ids)
            beam.text += forced.text
            free_text += forced.text
            forced_note = conclusion_note(stop)
            self.trace.extra["forced_conclusion"] = self.trace.extra.get("forced_conclusion", 0) + 1
            self.trace.notes.append(f"beam {beam.beam_id}: {forced_note}")
        beam.answer_text = free_text
        finished.append(beam)
        answers = parse_answers(free_text) or parse_answers(beam.text)
        step = Step(
            index=0,
            kind="dog.answer",
            title=f"Answer (beam {beam.beam_id}): {', '.join(answers) if answers else 'no answer marked'}",
            beam=beam.beam_id,
            subgraph_before=beam.subgraph.triplet_ids,
            subgraph_after=beam.subgraph.triplet_ids,
            choice=", ".join(answers) if answers else None,
            model_text=free_text,
            note=forced_note or {"eos": "", "stop": "", "length": "stopped at the token budget",
                                 "repeat": "stopped: the model was repeating itself"}.get(stop, stop),
            extra={"answers": answers, "chain": list(beam.chain), "chain_score": beam.score, "stop": stop,
                   "forced_conclusion": bool(forced_note)},
        )
        self._emit(step)

    def _constraint_failed(self, beam, free_text: str, message: str, finished) -> None:
        msg = f"beam {beam.beam_id}: {message}; the chain was stopped (no unconstrained fallback)"
        self.trace.error = (self.trace.error + "; " if self.trace.error else "") + msg
        beam.text += free_text
        step = Step(
            index=0, kind="dog.triplet", title=f"Constraint failure (beam {beam.beam_id})", beam=beam.beam_id,
            subgraph_before=beam.subgraph.triplet_ids, subgraph_after=beam.subgraph.triplet_ids,
            model_text=free_text, note=msg, extra={"chain": list(beam.chain), "chain_score": beam.score, "error": True},
        )
        self._emit(step)
        self._finish(beam, "", "constraint", finished)

    def _final(self, ranked: list[BeamCandidate]) -> None:
        trace, graph = self.trace, self.request.graph
        topics = self.ctx.topics
        trace.chains = [ground_chain(graph, graph.triplets_by_ids(b.chain), topics) for b in ranked]
        # triplets_by_ids keeps order only for existing ids; chains come from the graph, so all exist
        trace.chain_scores = [b.score for b in ranked]
        if ranked:
            best = ranked[0]
            texts = parse_answers(best.answer_text) or parse_answers(best.text)
            last = graph.triplet(best.chain[-1]) if best.chain and self.params.complete_answers else None
            trace.answers = resolve_answers(texts, graph, topics, trace.notes, complete_from=last)
            trace.raw_output = self.ctx.prompt.assistant_prefix + best.text
            trace.extra["best_beam"] = best.beam_id
            trace.extra["stop"] = best.stop
        trace.faithfulness = check_chains(graph, [graph.triplets_by_ids(b.chain) for b in ranked], topics, trace.answers)
        if ranked:
            unopened = [w.raw for w in parse_written_triplets(ranked[0].text) if not w.opened]
            if unopened:
                trace.notes.append(
                    f"the model wrote {len(unopened)} triplet(s) without the opening '<', so the graph "
                    f"constraint did not apply and they are not part of the chain: {'; '.join(unopened)}"
                )
                trace.extra["unopened_triplets"] = unopened


SPEC = MethodSpec("dog", run, DogParams,
                  "Decoding on Graphs: graph-constrained chains with triplet-level beam search")
