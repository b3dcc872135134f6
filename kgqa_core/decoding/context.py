"""What DoG, CoT and Direct share before decoding: topic entities, the pruned context, the prompt.

Keeping this in one place is what makes the baselines comparable: the three
methods see the same pruned graph in the same order and the same Tab. 6
prompt (Direct: its documented variant).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ..parameters import MethodParams, param, preset_param
from ..trace.schema import Answer, Trace
from .prompt import LAYOUTS, PromptParts, build_prompt


@dataclass(frozen=True)
class PromptParams(MethodParams):
    """The prompt parameters DoG, CoT and Direct share (each method's dataclass extends these)."""

    max_new_tokens: int = param(256, "Tokens the model may write per chain.", min=1, max=4096)
    max_prompt_triplets: int = param(
        40, "Graph triplets placed in the prompt (pruned by similarity to the question); 40 was as accurate as "
        "120 on the dev sample and reads a third of the tokens (docs/benchmarks.md, 'Prompt budget').",
        min=1, max=5000)
    context_pool: int = param(
        1000, "Candidate triplets embedded to choose the prompt's triplets from: the nearest quarter and the rest "
        "by their relation's closeness to the question and the words they share with it; 0 embeds every "
        "candidate (up to 2,000, as before). Embedding 2,000 triplets to show 40 was most of a whole-KB "
        "question's time outside the model; at 1,000 the kept 40 were 85-100% the same on the dev domains "
        "(docs/benchmarks.md).", min=0, max=100_000, advanced=True)
    chat_template: bool = param(True, "Wrap the prompt in the model's chat template.", advanced=True)
    prompt_layout: str = param("turns", "turns: few-shot chat turns; single: one user turn; raw: no template.",
                               choices=LAYOUTS, advanced=True)
    preset: str = preset_param()


@dataclass
class DecodingContext:
    """Everything a decoding method needs about one question, decided before the model runs."""

    params: PromptParams
    topics: list[str]
    context_ids: list[int]  # triplets in the prompt, in prompt order
    context_graph: Any  # the source graph restricted to context_ids (same ids)
    prompt: PromptParts
    prune_method: str = ""
    prune_note: str = ""
    notes: list[str] = field(default_factory=list)
    walk_graph: Any = None  # what DoG's G_q grows over (the context unless the method sets a wider view)

    def __post_init__(self) -> None:
        if self.walk_graph is None:
            self.walk_graph = self.context_graph


class ContextError(ValueError):
    """A question DoG cannot run on (no topic entity in the graph, ...)."""


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


def prepare(request: Any, variant: str, params: PromptParams, topics: Sequence[str] | None = None,
            notes: list[str] | None = None, pool: int | None = None, pool_why: str = "") -> DecodingContext:
    """Topic entities, the context pruned to the budget, and the prompt.

    `topics` and `notes`: the topic entities and their notes when the method found them first (`topic_entities`);
    `pool`: embed that many candidates instead of ``params.context_pool``, for the reason `pool_why` (noted).
    """
    from ..graph.pruning import prune_to_budget

    notes = [] if notes is None else notes
    topics = topic_entities(request, notes) if topics is None else list(topics)
    graph = request.graph
    pruned = prune_to_budget(graph, request.question, topics, max_triplets=params.max_prompt_triplets,
                             embed_pool=pool or getattr(params, "context_pool", 0) or None)
    if pool and pool_why:
        pruned.note = f"{pruned.note} ({pool_why})"
    ids = list(pruned.triplet_ids)
    context_graph = graph.subgraph(ids, name=f"{graph.name} (prompt context)") if len(ids) < len(graph) else graph
    if getattr(params, "local_visibility", False):
        from .query_subgraph import QueryCentricSubgraph

        shown = QueryCentricSubgraph(context_graph, topics).triplet_ids
        order = {tid: i for i, tid in enumerate(ids)}
        shown.sort(key=lambda t: order.get(t, t))
    else:
        shown = ids
    prompt = build_prompt(
        request.model, request.question, graph.triplets_by_ids(shown), variant,
        chat_template=params.chat_template, triplet_ids=shown, layout=params.prompt_layout,
        examples=prompt_examples(params, variant),
    )
    return DecodingContext(params, topics, ids, context_graph, prompt, pruned.method, pruned.note, notes)


def prompt_examples(params: Any, variant: str) -> str:
    """The examples' style a method's parameters ask for ("paper" unless it declares ``prompt_examples``)."""
    return getattr(params, "prompt_examples", "paper") if variant == "dog" else "paper"


def context_prompt(ctx: DecodingContext, request: Any, subgraph_ids: Sequence[int]) -> PromptParts:
    """The prompt showing only `subgraph_ids` (local visibility, §5.2), in context order."""
    order = {tid: i for i, tid in enumerate(ctx.context_ids)}
    shown = sorted(subgraph_ids, key=lambda t: order.get(t, t))
    return build_prompt(
        request.model, request.question, request.graph.triplets_by_ids(shown), ctx.prompt.variant,
        chat_template=ctx.params.chat_template, triplet_ids=shown, layout=ctx.params.prompt_layout,
        examples=ctx.prompt.examples,
    )


def show_triplets(ctx: DecodingContext, request: Any, ids: Sequence[int]) -> None:
    """Make the prompt show exactly `ids`, in that order (a prompt budget, `prompt_budget.sure_context`).

    The context graph follows (it is what the prompt shows); G_q's walk graph
    is left alone unless it was the context graph.
    """
    graph = request.graph
    shown = list(ids)
    was_context = ctx.walk_graph is ctx.context_graph
    ctx.context_ids = shown
    ctx.context_graph = graph.subgraph(shown, name=f"{graph.name} (prompt context)")
    if was_context:
        ctx.walk_graph = ctx.context_graph
    ctx.prompt = build_prompt(
        request.model, request.question, graph.triplets_by_ids(shown), ctx.prompt.variant,
        chat_template=ctx.params.chat_template, triplet_ids=shown, layout=ctx.params.prompt_layout,
        examples=ctx.prompt.examples,
    )


def resolve_answers(
    texts: Sequence[str], graph: Any, topics: Sequence[str] = (), notes: list[str] | None = None,
    *, complete_from: Sequence[Any] | None = None, hops: int | None = None, rank_by_chain: bool = False,
    question_uses: Mapping[str, int] | None = None, question_order: Sequence[str] = (),
    chain_entities: Sequence[str] | None = None, question: str = "", meet_topics: bool = False,
    not_the_topic: bool = False,
) -> list[Answer]:
    """Each parsed answer, linked to an entity the chain reached or else to a graph entity.

    With `chain_entities` (the entities the best chain reached,
    `kgqa_core.answers.chain_entities.chain_entities_of`), an answer the
    model wrote in its own words is answered with the chain's entity when
    they are one name (`map_to_chain`: exact, up to case, up to word endings,
    by embedding similarity), marked with how (`Answer.match`) and what the
    model wrote (`Answer.mapped_from`), with a line in `notes`.  An answer
    that names a graph entity (up to case) keeps that entity: the word-ending
    and embedding levels apply only to answers that name none.  Otherwise
    the answer is linked graph-wide (`resolve_entity`).

    An answer linked to no entity stays, marked ``in_graph=False``, and is
    ranked after every answer that is a graph entity, the question's own
    included (`non_entities_last`, noted).  An answer that names no entity and
    only repeats the `question`'s words (`repeats_question`) is dropped (noted).

    With `complete_from` (the chain's grounded triplets in order, when the
    method's ``complete_answers`` is on), the answers are completed from the
    graph after the model's own (`kgqa_core.answers.completion`: along the
    chain's relation path, else from its last triplet), noted; with
    `rank_by_chain` the answers the chain reaches at the question's `hops`
    lead (`complete_from_chain`; `question_uses`: the relations the
    question names and how often; `question_order`: the relation of each
    hop when the wording says); with `not_the_topic` an answer that is only
    the question's own entity, after a chain that came back to it, gives
    way to what the chain's path reaches beside it.

    An answer that names no entity but lists several under one marker
    ("* A, B, and C") becomes those answers, in order (`split_listed_answer`).
    An answer that is one of the question's `topics` is ranked after the
    others (`topic_entities_last`), with a line in `notes`.

    With `meet_topics`, last, the answers linked by a triplet to more of the
    question's `topics` lead, and answers the graph added that are linked to
    fewer are left out, and when no answer meets them all, an entity of the
    `chain_entities` that does leads, added from the graph
    (`kgqa_core.answers.meeting`; only for a question with two or more
    entities), noted.
    """
    from ..answers.chain_entities import embedding_similarity, map_to_chain, repeats_question
    from ..graph.linking import resolve_entity, split_listed_answer

    chain = list(chain_entities or ())
    lazy: list[Any] = []

    def similarity(text: str, names: Sequence[str]) -> Sequence[float]:
        if not lazy:  # loaded only when an answer gets this far
            lazy.append(embedding_similarity())
        return lazy[0](text, names) if lazy[0] is not None else [0.0] * len(names)

    def link(piece: str, embed: bool = True, fuzzy: bool = True) -> tuple[str | None, float | None, str]:
        """(entity, score, match): the chain's entity, else the graph's (match "")."""
        strong = map_to_chain(piece, chain, topics=topics, levels=("exact", "case", "number"))
        if strong is not None:
            return strong.entity, strong.score, strong.match
        if resolve_entity(piece, graph, threshold=1.0)[0] is None:  # a graph entity's name (up to case) stays it
            loose = map_to_chain(piece, chain, similarity if embed else None, topics=topics,
                                 levels=("qualified", "inflection", "subject", "embedding"))
            if loose is not None:
                return loose.entity, loose.score, loose.match
        entity, score = resolve_entity(piece, graph, threshold=0.85 if fuzzy else 1.0)
        return entity, (score if entity is not None else None), ""

    def names_chain_entity(piece: str) -> bool:
        """A list piece that stands for an entity the chain reached (no embedding: a list is near its parts)."""
        return map_to_chain(piece, chain, topics=topics,
                            levels=("exact", "case", "number", "qualified", "inflection")) is not None

    def names_entity(piece: str) -> bool:
        return (map_to_chain(piece, chain, topics=topics, levels=("exact", "case")) is not None
                or resolve_entity(piece, graph, threshold=1.0)[0] is not None)

    out: list[Answer] = []
    seen: set[str] = set()
    for text in texts:
        if question and not names_entity(text) and repeats_question(text, question):
            if notes is not None:
                notes.append(f"the model's answer '{text}' repeats the question's words; it is not an answer "
                             "and was dropped")
            continue
        # the whole text first, without embeddings (a list "A, B" is near its first name); then split, else embed
        entity, score, match = link(text, embed=False)
        pieces = [text]
        if entity is None:
            pieces = split_listed_answer(text, graph, also_names=names_chain_entity) or [text]
            if len(pieces) == 1 and chain:
                entity, score, match = link(text, fuzzy=False)
        for piece in pieces:
            if piece != text:
                if question and not names_entity(piece) and repeats_question(piece, question):
                    if notes is not None:
                        notes.append(f"the model's answer '{piece}' repeats the question's words; it is not an "
                                     "answer and was dropped")
                    continue
                entity, score, match = link(piece)
            key = entity if entity is not None else piece
            if piece in seen or key in seen:
                continue
            seen.update((piece, key))
            written = piece.strip()
            mapped = written != entity and match in ("case", "number", "qualified", "inflection", "subject",
                                                     "embedding")
            if mapped and notes is not None:
                how = {"case": "up to case", "number": "as a number", "qualified": "without its qualifier",
                       "inflection": "up to word endings", "subject": "that the model's sentence opens with",
                       "embedding": f"by embedding similarity {score}"}[match]
                notes.append(f"the model wrote '{written}'; the chain reached '{entity}' (the same name {how}): "
                             "answered with the graph's entity")
            out.append(Answer(text=entity if mapped else piece, entity=entity, in_graph=entity is not None,
                              score=score if entity else None, mapped_from=written if mapped else None,
                              match=match))
    out = non_entities_last(out, notes)
    n_entities = sum(a.in_graph for a in out)
    out = topic_entities_last(out[:n_entities], topics, notes) + out[n_entities:]
    if complete_from:
        from ..answers.completion import complete_from_chain

        completion = complete_from_chain(out, complete_from, graph, topics, hops=hops, rank_by_chain=rank_by_chain,
                                         question_uses=question_uses, question_order=question_order,
                                         not_the_topic=not_the_topic)
        if completion is not None:
            out = completion.answers
            if notes is not None:
                notes.append(completion.note)
            out = non_entities_last(out)
    if meet_topics:
        from ..answers.meeting import meet_topics as meet

        meeting = meet(out, graph, topics, chain_entities=chain)
        if meeting is not None:
            out = meeting.answers
            if notes is not None:
                notes.append(meeting.note)
    return out


def non_entities_last(answers: list[Answer], notes: list[str] | None = None) -> list[Answer]:
    """`answers` with those naming no graph entity (``in_graph=False``) after every one that does (never dropped).

    An answer in the model's own words that matched no entity cannot be
    checked against the graph, so it never takes the first place (Hits@1)
    from an entity the chain or the graph holds.  Each is noted.
    """
    keep = [a for a in answers if a.in_graph]
    moved = [a for a in answers if not a.in_graph]
    if notes is not None:
        for a in moved:
            where = "; ranked after the answers that are" if keep else ""
            notes.append(f"the model's answer '{a.text}' names no graph entity: kept, marked as not a graph "
                         f"entity{where}")
    return keep + moved


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


def describe_context(trace: Trace, ctx: DecodingContext) -> None:
    """The notes and prompt extras every decoding method records the same way."""
    trace.topic_entities = list(ctx.topics)
    trace.notes.extend(ctx.notes)
    if ctx.prune_note:
        trace.notes.append(f"prompt context: {ctx.prune_note}")
    trace.extra.update(
        {
            "prompt": ctx.prompt.text,
            "prompt_variant": ctx.prompt.variant,
            "chat_template": ctx.prompt.chat_template,
            "prompt_layout": ctx.prompt.layout,
            "prompt_examples": ctx.prompt.examples,
            "context_triplet_ids": list(ctx.context_ids),
            "prune_method": ctx.prune_method,
        }
    )


def logprob_to_prob(score: float) -> float:
    return math.exp(score) if score > -700 else 0.0


@dataclass
class FreeDecode:
    """What `decode_prompt_freely` produced and what it cost."""

    free: Any  # FreeText
    seconds: float  # decoding time after the prompt
    prompt_tokens: int
    tokens_out: int


def decode_prompt_freely(request: Any, ctx: DecodingContext, trace: Trace, stop: Any = None,
                         conclude: bool = False) -> FreeDecode:
    """Prefill the context prompt and decode it without the graph constraint (CoT, Direct).

    With ``conclude``, a text that ended without an answer (loop, budget,
    EOS) gets "Therefore, the answer is" appended and one more line decoded
    (`force_conclusion`), exactly as DoG does for its beams.

    Records the prompt's timing extras (prompt tokens and how many came from
    the prefix cache, prefill and decode time) and returns the text with its
    cost (one model call).  Raises PromptTooLongError.
    """
    from .decoders import force_conclusion, free_text
    from .free_text import needs_conclusion

    model = request.model
    with model.lock:
        before = model.counter.snapshot()
        ids = model.encode(ctx.prompt.text)
        reused0 = model.counter.prefix_tokens_reused
        t_prefill = time.perf_counter()
        # reuses the cached keys/values of a shared prefix (the instructions and examples kept whole)
        state = model.prefill(ids, fixed=model.fixed_tokens(ctx.prompt.shared_prefix, ids))
        prefill_seconds = time.perf_counter() - t_prefill
        reused = model.counter.prefix_tokens_reused - reused0
        t0, c0 = time.perf_counter(), time.process_time()
        kwargs = {"stop": stop} if stop is not None else {}
        free = free_text(model, state, ctx.params.max_new_tokens, detector=None, **kwargs)
        stop_reason = free.stop
        if conclude and needs_conclusion(free.stop, free.text):
            forced = force_conclusion(model, state)
            free.text += forced.text
            free.ids += forced.ids
            trace.extra["forced_conclusion"] = 1  # chains concluded by force, as DoG counts them
            trace.notes.append(conclusion_note(stop_reason, free.dropped))
        gen_seconds = time.perf_counter() - t0
        after = model.counter.snapshot()
    passes, tokens_out = after[0] - before[0], after[2] - before[2]
    trace.extra.update({
        "prompt_tokens": len(ids),
        "prompt_tokens_cached": reused,
        "prefill_seconds": round(prefill_seconds, 4),
        "decode_seconds": round(gen_seconds, 4),
        "decode_cpu_seconds": round(time.process_time() - c0, 4),
        "forward_passes_per_token": round((passes - 1) / max(tokens_out, 1), 4),
        "stop": stop_reason,
    })
    return FreeDecode(free, gen_seconds, len(ids), tokens_out)


RUN_SHOWN = 24  # characters of a dropped run the note shows


def conclusion_note(stop: str, dropped: str = "", appended: str = "", chosen_among: bool = False) -> str:
    """Why the answer line was forced, for the trace's notes; a run cut from the text (`drop_run`) is quoted, and
    `appended` is what was written for the model ("Therefore, the answer is" when not said); `chosen_among`: the
    line the model wrote named nothing, so its item was chosen among the chain's entities."""
    appended = appended or "Therefore, the answer is"
    why = {"repeat": "started repeating itself", "length": "used up its token budget",
           "cap": "wrote more free text than the step's cap (free_text_cap)",
           "eos": "ended its text", "limit": "would have opened a triplet past its limit (max_steps)"}.get(
        stop, f"stopped ({stop})")
    if dropped:
        shown = dropped if len(dropped) <= RUN_SHOWN else dropped[:RUN_SHOWN] + "..."
        why = (f"wrote '{shown}' over and over ({len(dropped)} characters, cut from the text so the answer "
               "line does not copy them)")
    done = ("the line the model wrote named nothing (it ended at once or began copying a triplet), so it chose "
            "the answer among the entities its chain wrote, not the question's own (under their names' trie)"
            if chosen_among else "the model completed that line")
    return f"the model {why} without writing the answer line, so '{appended}' was appended and {done}"
