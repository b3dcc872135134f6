"""What DoG, CoT and Direct share before decoding: topic entities, the pruned context, the prompt.

Keeping this in one place is what makes the baselines comparable: the three
methods see the same pruned graph in the same order and the same Tab. 6
prompt (Direct: its documented variant).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..trace.schema import Answer, Trace
from .prompt import LAYOUTS, PromptParts, build_prompt


@dataclass
class DecodingContext:
    """Everything a decoding method needs about one question, decided before the model runs."""

    params: dict[str, Any]
    topics: list[str]
    context_ids: list[int]  # triplets in the prompt, in prompt order
    context_graph: Any  # the source graph restricted to context_ids (same ids)
    prompt: PromptParts
    prune_method: str = ""
    prune_note: str = ""
    notes: list[str] = field(default_factory=list)


class ContextError(ValueError):
    """A question DoG cannot run on (no topic entity in the graph, ...)."""


BOOL_PARAMS = ("local_visibility", "strict", "chat_template", "force_conclusion", "repeat_triplets", "reverse_readings",
               "complete_answers")
_TRUE, _FALSE = {"true", "yes", "on", "1"}, {"false", "no", "off", "0"}


def _as_bool(name: str, value: Any) -> bool:
    """A switch from the CLI, the app or JSON; ``bool("false")`` would be True, so strings are read."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise ContextError(f"parameter {name} must be true or false, got {value!r}")


def read_params(request: Any, defaults: dict[str, Any]) -> dict[str, Any]:
    """Defaults overridden by the request's params; unknown names are kept (and recorded)."""
    params = dict(defaults)
    for name, value in (request.params or {}).items():
        if value is not None:
            params[name] = value
    for name in ("beam_size", "max_steps", "max_new_tokens", "max_prompt_triplets"):
        if name == "max_steps" and str(params.get(name)).strip().lower() == "auto":
            params[name] = "auto"  # derived from the question in `prepare` (kgqa_core.methods.hop_budget)
            continue
        if name in params:
            try:
                params[name] = int(params[name])
            except (TypeError, ValueError):
                raise ContextError(f"parameter {name} must be a whole number, got {params[name]!r}") from None
            if params[name] < (0 if name == "max_steps" else 1):
                raise ContextError(f"parameter {name} must be at least {0 if name == 'max_steps' else 1}")
    for name in BOOL_PARAMS:
        if name in params:
            params[name] = _as_bool(name, params[name])
    if "prompt_layout" in params and params["prompt_layout"] not in LAYOUTS:
        raise ContextError(f"parameter prompt_layout must be one of {', '.join(LAYOUTS)}, got {params['prompt_layout']!r}")
    return params


def topic_entities(request: Any, notes: list[str]) -> list[str]:
    """The request's topic entities that are in the graph; linked from the question if none were given."""
    graph = request.graph
    given = [e for e in request.topic_entities if e]
    if not given:
        from ..graph.linking import link_entities

        found = link_entities(request.question, graph)
        if found:
            best = found[0]
            notes.append(f"no topic entity given: linked {best.entity!r} from the question ({best.method}, {best.score:.2f})")
            given = [best.entity]
    present = [e for e in dict.fromkeys(given) if graph.has_entity(e)]
    missing = [e for e in given if not graph.has_entity(e)]
    if missing:
        notes.append(f"topic entities not in the graph were ignored: {', '.join(missing)}")
    if not present:
        raise ContextError(
            "no topic entity of the question is in the graph"
            + (f" (given: {', '.join(given)})" if given else "")
            + "; DoG's chains must start from one"
        )
    return present


def prepare(request: Any, variant: str, defaults: dict[str, Any]) -> DecodingContext:
    """Parameters, topic entities, the context pruned to the budget, and the prompt."""
    from ..graph.pruning import prune_to_budget

    params = read_params(request, defaults)
    notes: list[str] = []
    topics = topic_entities(request, notes)
    graph = request.graph
    if params.get("max_steps") == "auto":
        from ..methods.hop_budget import resolve_auto_steps

        resolve_auto_steps(params, request.question, graph, topics, notes)
    pruned = prune_to_budget(graph, request.question, topics, max_triplets=params["max_prompt_triplets"])
    ids = list(pruned.triplet_ids)
    context_graph = graph.subgraph(ids, name=f"{graph.name} (prompt context)") if len(ids) < len(graph) else graph
    if params.get("local_visibility"):
        from .query_subgraph import QueryCentricSubgraph

        shown = QueryCentricSubgraph(context_graph, topics).triplet_ids
        order = {tid: i for i, tid in enumerate(ids)}
        shown.sort(key=lambda t: order.get(t, t))
    else:
        shown = ids
    prompt = build_prompt(
        request.model, request.question, graph.triplets_by_ids(shown), variant,
        chat_template=params.get("chat_template", True), triplet_ids=shown,
        layout=params.get("prompt_layout", "turns"),
    )
    return DecodingContext(params, topics, ids, context_graph, prompt, pruned.method, pruned.note, notes)


def context_prompt(ctx: DecodingContext, request: Any, subgraph_ids: Sequence[int]) -> PromptParts:
    """The prompt showing only `subgraph_ids` (local visibility, §5.2), in context order."""
    order = {tid: i for i, tid in enumerate(ctx.context_ids)}
    shown = sorted(subgraph_ids, key=lambda t: order.get(t, t))
    return build_prompt(
        request.model, request.question, request.graph.triplets_by_ids(shown), ctx.prompt.variant,
        chat_template=ctx.params.get("chat_template", True), triplet_ids=shown,
        layout=ctx.params.get("prompt_layout", "turns"),
    )


def resolve_answers(
    texts: Sequence[str], graph: Any, topics: Sequence[str] = (), notes: list[str] | None = None,
    *, complete_from: Any = None,
) -> list[Answer]:
    """Each parsed answer, linked to a graph entity when it names one.

    With `complete_from` (the grounded last triplet of the chain, when the
    method's ``complete_answers`` is on), the answers are completed from the
    graph after the model's own (`kgqa_core.answers.completion`), noted.

    An answer that names no entity but lists several under one marker
    ("* A, B, and C") becomes those answers, in order (`split_listed_answer`).
    An answer that is one of the question's `topics` is ranked after the
    others (`topic_entities_last`), with a line in `notes`.
    """
    from ..graph.linking import resolve_entity, split_listed_answer

    out: list[Answer] = []
    seen: set[str] = set()
    for text in texts:
        entity, score = resolve_entity(text, graph)
        pieces = [text] if entity is not None else (split_listed_answer(text, graph) or [text])
        for piece in pieces:
            if piece != text:
                entity, score = resolve_entity(piece, graph)
            if piece in seen:
                continue
            seen.add(piece)
            out.append(Answer(text=piece, entity=entity, in_graph=entity is not None, score=score if entity else None))
    out = topic_entities_last(out, topics, notes)
    if complete_from is not None:
        from ..answers.completion import complete_from_last_triplet

        completion = complete_from_last_triplet(out, complete_from, graph, topics)
        if completion is not None:
            out = completion.answers
            if notes is not None:
                notes.append(completion.note)
    return out


def topic_entities_last(answers: list[Answer], topics: Sequence[str], notes: list[str] | None = None) -> list[Answer]:
    """`answers` with those naming a topic entity moved behind the rest (never dropped).

    A question asks *about* its topic entity, so the entity itself is almost
    never the answer (MetaQA, WebQSP and CWQ exclude it from the gold set),
    yet models often put it first ("films with the same actor as Forever
    Young" -> "* Forever Young, * Mel Gibson, ...") and Hits@1 judges only
    the first answer.  When the topic entity is the only answer (a comparison
    "which is older, A or B") it stays.
    """
    topic_set = set(topics)
    if not topic_set or len(answers) < 2:
        return answers
    moved = [a for a in answers if (a.entity or a.text) in topic_set]
    if not moved or len(moved) == len(answers):
        return answers
    if notes is not None:
        names = ", ".join(a.text for a in moved)
        notes.append(f"answer {names} is the question's topic entity; ranked after the other answers")
    keep = [a for a in answers if all(a is not m for m in moved)]
    return keep + moved


def new_trace(method: str, request: Any, ctx: DecodingContext) -> Trace:
    """A trace with the fields every decoding method fills the same way."""
    trace = Trace(
        method=method,
        question=request.question,
        model=request.model.name,
        model_revision=request.model.revision,
        parameters=dict(ctx.params),
        seed=request.seed,
        graph_fingerprint=request.graph.fingerprint,
        graph_name=request.graph.name,
        topic_entities=list(ctx.topics),
    )
    trace.notes.extend(ctx.notes)
    if ctx.prune_note:
        trace.notes.append(f"prompt context: {ctx.prune_note}")
    trace.extra.update(
        {
            "prompt": ctx.prompt.text,
            "prompt_variant": ctx.prompt.variant,
            "chat_template": ctx.prompt.chat_template,
            "prompt_layout": ctx.prompt.layout,
            "context_triplet_ids": list(ctx.context_ids),
            "prune_method": ctx.prune_method,
        }
    )
    return trace


def logprob_to_prob(score: float) -> float:
    return math.exp(score) if score > -700 else 0.0


def failed_trace(method: str, request: Any, started: float, error: Exception) -> Trace:
    """The trace of a run that could not start (no topic entity, empty graph...)."""
    return Trace(method=method, question=request.question, parameters=dict(request.params), error=str(error),
                 seconds=time.perf_counter() - started)


def decode_prompt_freely(request: Any, ctx: DecodingContext, trace: Trace, stop: Any = None, conclude: bool = False):
    """Prefill the context prompt and decode it without the graph constraint (CoT, Direct).

    With ``conclude``, a text that ended without an answer (loop, budget,
    EOS) gets "Therefore, the answer is" appended and one more line decoded
    (`force_conclusion`), exactly as DoG does for its beams.

    Fills the trace's cost fields (one model call, prompt tokens and how many
    came from the prefix cache, forward passes, output tokens, decode time)
    and returns ``(FreeText, decode_seconds)``.  Raises PromptTooLongError.
    """
    from .free_text import decode_free_text, force_conclusion, needs_conclusion

    model = request.model
    with model.lock:
        before = model.counter.snapshot()
        ids = model.encode(ctx.prompt.text)
        reused0 = model.counter.prefix_tokens_reused
        t_prefill = time.perf_counter()
        state = model.prefill(ids)  # reuses the cached keys/values of a shared prefix
        prefill_seconds = time.perf_counter() - t_prefill
        reused = model.counter.prefix_tokens_reused - reused0
        t0, c0 = time.perf_counter(), time.process_time()
        kwargs = {"stop": stop} if stop is not None else {}
        free = decode_free_text(model, state, ctx.params["max_new_tokens"], detector=None, **kwargs)
        stop_reason = free.stop
        if conclude and needs_conclusion(free.stop, free.text):
            forced = force_conclusion(model, state)
            free.text += forced.text
            free.ids += forced.ids
            trace.extra["forced_conclusion"] = 1  # chains concluded by force, as DoG counts them
            trace.notes.append(conclusion_note(stop_reason))
        gen_seconds = time.perf_counter() - t0
        after = model.counter.snapshot()
    trace.model_calls = 1
    trace.tokens_in = len(ids)
    trace.forward_passes = after[0] - before[0]
    trace.tokens_out = after[2] - before[2]
    trace.extra.update({
        "prompt_tokens": len(ids),
        "prompt_tokens_cached": reused,
        "prefill_seconds": round(prefill_seconds, 4),
        "decode_seconds": round(gen_seconds, 4),
        "decode_cpu_seconds": round(time.process_time() - c0, 4),
        "forward_passes_per_token": round((trace.forward_passes - 1) / max(trace.tokens_out, 1), 4),
        "stop": stop_reason,
    })
    return free, gen_seconds


def conclusion_note(stop: str) -> str:
    """Why the answer line was forced, for the trace's notes."""
    why = {"repeat": "started repeating itself", "length": "used up its token budget",
           "eos": "ended its text"}.get(stop, f"stopped ({stop})")
    return (f"the model {why} without writing the answer line, so 'Therefore, the answer is' was appended "
            "and the model completed that line")
