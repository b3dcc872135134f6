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
four of them.  ``force_conclusion`` (True): a chain whose text loops, runs
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

The question's reading (`kgqa_core.reading`, ``reader``): before the
chain starts, the question is read once against the graph: by default the
model chooses, among the walks the graph holds from the topic entity
(ranked by their relations' closeness to the question), the one the
question asks for, and its probability is the reading's confidence.  The
reading is the first step of the trace.  What DoG layers on the paper's
loop comes from it, as step filters (`kgqa_core.decoding.step_filters`),
and only when it is sure (``reading_sure_at``); an unsure reading raises
the step budget (``auto_steps``) and narrows each step to the relations of
its likely plans (``unsure_relations``: those holding 80% of its
probability, so the less sure, the wider the offer; everything when a step
offers none of them), so DoG then runs much as the paper does with its other
documented deviations; a sure one adds:

* ``walk_to_depth``: an answer line written fewer hops out than the
  reading says is taken back (text and KV cells, to the end of the sentence
  before it), the next step number written (" 3."; with bare examples, which
  show no numbers, the next triplet's " <") and the chain decodes
  on, offered the triplets that lead on from its farthest entities; at most
  that many take-backs per chain.  ``walk_out_first``: every step short of
  that depth is narrowed that way (a chain listing four films of a director
  ran out of steps before it wrote a language).
* ``stay_at_depth``: a chain as deep as the reading is offered nothing
  further out; with nothing left it concludes.  ``past_horizon``: when the
  reading's plan is as long as the reader plans at all (3 hops), it saw no
  further and the question may ask more, so the entities the chain's path
  reaches at the plan's last hop do not go before the model's own answers
  (Wikidata's 4-hop questions were all answered with their third hop's
  entity, the model's right answer behind it); the chain still stops at
  the plan's depth (offered one more hop from its farthest entities, the
  1.5B took wrong ones and walked on in 3-hop questions: measured, not
  kept).  A "past_horizon:" note says so.  With either setting, an
  open-ended reading's step budget (``auto_steps``) has one hop more.
* ``conclude_at_depth``: a chain whose path from the topic entity has
  walked the reading's whole plan writes its answer line there (the
  forced conclusion, stop ``"depth"``) instead of listing the hop's other
  triplets: ``complete_answers`` adds every entity that path reaches, so
  they cost tokens and add no answer.  A "conclude_at_depth:" note says so.
  With ``answer_among_reached`` the line's one item is chosen among the
  entities the path reaches and those the chain wrote (not the question's
  own: a sure reading may be a hop too long), under their names' trie
  (`decoders.answer_among`): it ends with the name, never one the chain did
  not reach.
* ``question_relations`` / ``hop_order``: each step offers only the
  relations of the reading's plan, each at most as often as planned, each
  hop its own relation; a step where none is left is offered everything
  (never a dead end).
* ``plan_leads_answers``: where the chain walked the reading's likeliest
  plan to its end and the model answered at the end of a plan the reading
  judged at least the margin less likely, that plan's ends lead the
  answers (`answers.plan_lead`; any reading, sure or not: it only reorders
  what the chain reached; a question naming one entity: two entities' answers
  are ranked by ``meet_topics``).  A "plan_leads_answers:" note says so.

Fewer tokens per question (issue 32), each off in the paper preset:
``prompt_examples`` "bare" shows the three examples' chains without the
commentary between triplets (a small model copies that commentary, which was
most of what it wrote) and without their step numbers ("terse" keeps them);
``free_text_cap`` cuts a step's free text at that many tokens unless it is
writing its answer line (the chain then concludes; "free text cut at N
tokens" on its answer step); ``sure_context_triplets`` (8,
only for a reading at least ``sure_context_at`` = 0.9 sure: at the guidance's
0.5 a sure but wrong reading hid the answer's triplet on the dev benchmark)
shows a sure reading's planned triplets first in a smaller prompt context
(`kgqa_core.decoding.prompt_budget`; a "prompt budget:" note and
``trace.extra["prompt_budget"]`` say how many and why).

A question that names two or more graph entities ("which musician of the
orchestra is from Italy") asks for what they share: ``meet_topics`` ranks
the answers by how many of them each has a triplet with, and leaves out
the graph-added ones linked to fewer (the model's own too, when one of its
own meets more), and when no answer meets them all but an entity the chain
wrote does, that entity leads, added from the graph (a chain through Quillon,
written in Corvid and a parser, that answered "parser" for "which parser is
written in Corvid") (`kgqa_core.answers.meeting`; a note
starting "answers where the question's entities meet:"); ``meeting_context``
shows the triplets along a sure reading's walks from them to where they meet
first in the prompt (`prompt_budget.meeting_triplets`; a note starting
"meeting_context:").

Each narrowing is said on its step, with the relations it left out, and
summed up in the trace's notes.  ``preset=paper`` turns all of them off
(and the other deviations: the paper's trie keeps repeats, offers no
reverse readings, forces no conclusion, completes no answers and ranks
none by the question's other entities).

Chains are ranked by the paper's chain score, a sum of log-probabilities,
which favours shorter chains when finished chains of different lengths are
compared; that is the paper's definition and is kept.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .. import progress
from ..answers.plan_lead import PLAN_MARGIN, lead_by_plan
from ..decoding.beam import token_view
from ..decoding.chain_beam import BeamCandidate, BeamRound, ChainBeam, FinishedChain, SearchedChain, TakenBack
from ..decoding.step_filters import (ConcludeAtDepth, Narrowed, NoRestatement, PlannedRelations, WalkOut,
                                     WithinDepth, likely_depth, likely_relations)
from ..decoding.context import (
    DecodingContext,
    PromptParams,
    conclusion_note,
    context_prompt,
    describe_context,
    logprob_to_prob,
    prepare,
    resolve_answers,
    show_triplets,
    topic_entities,
)
from ..decoding.dog_guide import DogGuides
from ..decoding.prompt import EXAMPLE_STYLES, PromptParts, parse_answers, parse_written_triplets
from ..decoding.prompt_budget import guided_context, meeting_triplets, sure_context
from ..decoding.query_subgraph import QueryCentricSubgraph
from ..graph.readings import is_reversed, reading_of, triplet_of
from ..parameters import param
from ..reading.guidance import (agree_param, entity_free_param, cover_param, describe_languages_param, describe_param, distinct_param, domain_words_param, horizon_param,
                               answer_kind_param, every_relation_param, one_arrow_param, joint_param, listed_param, meet_param, order_param, phrase_param, quick_param, read_question,
                               kind_look_param, look_param, read_back_param, reader_param, step_budget, stop_param, sure_param)
from ..reading.reading import QuestionReading
from ..trace.faithfulness import check_chains, ground_chain
from ..trace.schema import Candidate, Step
from .base import MethodRequest, MethodSpec
from .recorder import TraceRecorder

# How sure DoG's reading must be to guide the chain (and to count as sure for the prompt's budget, the meeting
# triplets and the conclusion at the plan's depth).  Readings 0.5-0.6 sure were right about as often as those under
# 0.5 (4 of 9 dev readings reached gold against 7 of 13) and guided wrong readings to wrong answers; under the bar a
# reading still keeps each step to its likeliest plans' relations (`unsure_relations`).  On the eight whole-KB and
# per-domain dev questions read 0.5-0.6 sure, asked in a process of their own, DoG answered 6 against 4 with 0.6 and
# lost none (in the per-domain re-run, after other questions, one of the two it gained, read near the bar, was wrong
# again); on the two-entity, DBpedia and family questions read so, the same answers
# (docs/history/benchmarks-2026.md, "The guidance's bar for DoG").
# READS and RoK keep `reading.guidance.SURE_AT` (0.5): not measured for them.
DOG_SURE_AT = 0.6


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
    skip_restatements: bool = param(
        True, "Do not offer a triplet that links two entities by a relation the chain already links them by "
        "(a symmetric fact stored both ways: 'oklahoma borders texas' after 'texas borders oklahoma'); "
        "from the graph, not the question (not in the paper; noted).", advanced=True)
    unsure_relations: float = param(
        0.8, "When the question's reading is not sure (under reading_sure_at), each step offers only the relations "
        "of the reading's most likely plans that together hold this share of its probability (0.8: the plans "
        "holding 80% of it), so the less sure the reading, the less a step is narrowed; a step with none of them is "
        "offered everything. An unsure chain then stays among the relations the question may ask about instead of "
        "wandering off along unrelated ones (tags, years). 0: an unsure reading narrows nothing (the paper preset; "
        "noted in the trace).", min=0.0, max=1.0, advanced=True)
    unsure_depth: float = param(
        0.8, "When the question's reading is not sure (under reading_sure_at) but its most likely plans that together "
        "hold this share of its probability all walk at least N hops (N of 2 or more), a chain that answers fewer "
        "hops out is taken back and walks on, as for a sure reading (needs walk_to_depth): a reading unsure which "
        "relations the question asks for may still be sure how far it goes. 0: off (the paper preset; noted in the "
        "trace).", min=0.0, max=1.0, advanced=True)
    auto_steps: bool = param(
        True, "Raise max_steps to two triplets per hop the question names (the question's reading, kgqa_core.reading; one "
        "hop more when the reading is as long as the reader plans, 3 hops); noted.",
        advanced=True)
    walk_to_depth: bool = param(
        True, "A chain that writes its answer line fewer hops from the topic entity than the question names "
        "(the question's reading, kgqa_core.reading) is taken back to its last sentence, its next step number "
        "written (bare examples: the next triplet opened), and decodes on, its next triplets leading on from its "
        "farthest entities until it is deep enough (also when its triplets left are just enough to get there); at "
        "most that many times per chain; noted (not in the paper).", advanced=True)
    walk_out_first: bool = param(
        True, "While a chain stands fewer hops from the topic entity than the question names, each step is offered "
        "only triplets leading on from its farthest entities to an entity it has not reached (all when none "
        "does), so listing more entities of one hop does not spend the steps the last hop needs; needs "
        "walk_to_depth (not in the paper; noted).", advanced=True)
    stay_at_depth: bool = param(
        True, "A chain that stands as many hops from the topic entity as the question names (every hop's "
        "relation named, kgqa_core.reading) is offered only triplets within that depth; with none "
        "left it concludes (not in the paper; noted).", advanced=True)
    past_horizon: bool = param(
        True, "When the question's reading plans as many hops as the reader can (3: it sees no further), the "
        "question may ask more: the answers the chain's path reaches at those hops do not lead, so the model's "
        "answer line (which may name the next hop's entity) keeps its order. False: the path's entities at those "
        "hops lead, as for any sure reading (not in the paper; noted).",
        advanced=True)
    question_relations: bool = param(
        True, "A step offers only triplets of the relations the question's words name, each walked at most as "
        "often on the way from the topic entity as the question names it (the question's reading, kgqa_core.reading), when any "
        "is there; all when the question names none (not in the paper; noted).", advanced=True)
    hop_order: bool = param(
        True, "With question_relations: when the question's wording orders the relations it names (the word "
        "nearest the topic entity's name is the first hop, kgqa_core.reading), a triplet leading on "
        "to a hop is offered only with that hop's relation, and with chain_answers_first the chain's path leads "
        "the answers only when it walks them in that order (not in the paper; noted).", advanced=True)
    complete_answers: bool = param(
        True, "Add the other entities the graph holds for the chain's answer after the model's own: every entity "
        "the chain's relation path reaches from the topic entity, else every entity its last triplet's "
        "relation holds (not in the paper; kgqa_core.answers.completion).", advanced=True)
    chain_answers_first: bool = param(
        True, "With complete_answers: the answers the chain's path reaches at the question's hops lead; the "
        "model's answers it does not reach are ranked after, and when it reaches none of them the path's end "
        "comes first, unless the model's first answer is an entity the chain itself wrote; and an answer that "
        "is only the question's own entity, after a chain that came back to it, gives way to what the chain's "
        "path reaches beside it (not in the paper; noted).", advanced=True)
    conclude_at_depth: bool = param(
        True, "When the question's reading is sure (reading_sure_at) and names one entity, a chain whose path "
        "from it has walked the reading's whole plan writes its answer line there, instead of listing more "
        "triplets of that hop: the graph adds the other entities the path reaches (complete_answers). Fewer "
        "tokens written; noted (not in the paper).", advanced=True)
    answer_among_reached: bool = param(
        True, "With conclude_at_depth: the answer line's one item is chosen by the model among the entities the "
        "chain's path reaches and those its chain wrote (not the question's own), under their names' trie (it "
        "ends with the name: no period, no line end, no name the chain did not reach); false: the model writes "
        "it freely. Not in the paper; noted.", advanced=True)
    plan_leads_answers: float = param(
        PLAN_MARGIN, "When the chain walked the question reading's likeliest plan to its end and the model's first "
        "answer is the end of another plan the reading judged less likely by at least this much (probability), "
        "the likeliest plan's ends come first and the model's answers follow (noted); 0: the model's order (the "
        "paper; not in it). For a question naming one graph entity (two or more: meet_topics ranks the answers). "
        "kgqa_core.answers.plan_lead.", min=0.0, max=1.0, advanced=True)
    meet_topics: bool = param(
        True, "When the question names two or more graph entities, the answers with a triplet to more of them "
        "lead; answers the graph added (complete_answers) with fewer are left out, and so are the model's own "
        "with fewer when one of its own meets more; when no answer meets them all but an entity the chain wrote "
        "does, that entity leads (added from the graph): \"which musician of the orchestra is from Italy\" asks for "
        "the members who are Italian (not in the paper; kgqa_core.answers.meeting; noted).", advanced=True)
    gq_scope: str = param(
        "graph", "graph: G_q grows over the whole graph (hubs cut to walk_cap), so a chain may write triplets the "
        "prompt did not show; prompt: G_q stays inside the prompt's pruned context.", choices=("graph", "prompt"),
        advanced=True)
    walk_cap: int = param(
        200, "Triplets of one entity G_q may take in (hubs cut, relations the question names first).",
        min=1, max=100_000, advanced=True)
    reader: str = reader_param()
    reading_sure_at: float = sure_param(DOG_SURE_AT)
    reading_quick_at: float = quick_param()
    reading_phrase_gain: float = phrase_param()
    reading_joint: bool = joint_param()
    reading_cover: float = cover_param()
    reading_meet: float = meet_param()
    reading_horizon: bool = horizon_param()
    reading_order: float = order_param()
    reading_answer_kind: float = answer_kind_param()
    reading_every_relation: bool = every_relation_param()
    reading_one_arrow: bool = one_arrow_param()
    reading_stop_weight: float = stop_param()
    reading_read_back: float = read_back_param()
    reading_look: int = look_param()
    reading_kind_look: float = kind_look_param()
    reading_agree: bool = agree_param()
    reading_distinct: bool = distinct_param()
    reading_entity_free: bool = entity_free_param()
    reading_listed: int = listed_param()
    reading_domain_words: bool = domain_words_param()
    describe_relations: bool = describe_param()
    describe_other_languages: bool = describe_languages_param()
    prompt_examples: str = param(
        "bare", "bare: the prompt's three examples write their triplets and the answer line with no commentary "
        "or step number between them, and the instructions say so (fewer tokens written); terse: the same with "
        "the steps numbered 1., 2., ...; paper: the examples of Tab. 6 (not in the paper; noted).",
        choices=EXAMPLE_STYLES, advanced=True)
    free_text_cap: int = param(
        32, "Tokens of free text a chain may write between two triplets before its answer line; a stretch that "
        "reaches it is cut there and the chain concludes (noted on its step); 0: no cap (the paper).",
        min=0, max=4096, advanced=True)
    sure_context_triplets: int = param(
        8, "When the question's reading is very sure (sure_context_at), the prompt shows this many graph "
        "triplets, those on the reading's planned relations first, instead of max_prompt_triplets (about half "
        "the prompt tokens); 0: always the pruned context (the paper). Noted with the reading's confidence.",
        min=0, max=5000, advanced=True)
    meeting_context: bool = param(
        True, "When the question names two or more graph entities and its reading (at least reading_sure_at "
        "sure) has a walk from each that reach entities in common, the prompt shows the triplets along those "
        "walks to where they meet first (at most 16), the pruned context after them, as many triplets as before; "
        "false: the pruned context only (the paper). Not in the paper; noted.", advanced=True)
    sure_context_at: float = param(
        0.9, "How sure the question's reading must be (its probability) for sure_context_triplets' smaller "
        "prompt (at 0.5 a sure but wrong reading hid the answer's triplet on the multi-domain dev benchmark); "
        "0: reading_sure_at, the guidance's own threshold.", min=0.0, max=1.0, advanced=True)
    guided_context_triplets: int = param(
        16, "When the question's reading is fairly sure (guided_context_at; by default reading_sure_at, where it "
        "guides the steps) but not very sure (under "
        "sure_context_at), the prompt shows this many graph triplets, the walks of the reading's likeliest plans "
        "first (those holding 90% of its probability, at most 3), instead of max_prompt_triplets; 0: the pruned "
        "context (the paper). Noted with the reading's confidence.", min=0, max=5000, advanced=True)
    guided_context_at: float = param(
        0.0, "How sure the question's reading must be (its probability) for guided_context_triplets' smaller prompt; "
        "0: reading_sure_at, the bar at which the reading guides the steps.", min=0.0, max=1.0, advanced=True)
    sure_context_pool: int = param(
        200, "When the prompt shows sure_context_triplets for a sure reading, the candidate triplets embedded to "
        "choose them from (instead of context_pool): the few it shows are mostly walked along the reading's plan, "
        "and embedding 1,000 candidates to pick the rest was a quarter of a whole-KB question's time "
        "(docs/history/benchmarks-2026.md, 'Tokens per question'); 0: context_pool as for any question.",
        min=0, max=100_000, advanced=True)

    # the algorithm as published (§2-§4): no question reading, no guidance, the paper's trie and conclusion
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {"paper": {
        "reader": "none", "auto_steps": False, "walk_to_depth": False, "walk_out_first": False,
        "stay_at_depth": False, "question_relations": False, "hop_order": False, "complete_answers": False,
        "chain_answers_first": False, "meet_topics": False, "conclude_at_depth": False, "answer_among_reached": False,
        "force_conclusion": False,
        "repeat_triplets": True, "reverse_readings": False, "skip_restatements": False, "unsure_relations": 0.0,
        "unsure_depth": 0.0, "context_pool": 0,
        "prompt_examples": "paper", "free_text_cap": 0, "sure_context_triplets": 0, "meeting_context": False,
        "sure_context_pool": 0, "guided_context_triplets": 0, "describe_relations": False, "plan_leads_answers": 0.0,
        "describe_other_languages": False}}


def run(request: MethodRequest, params: DogParams, rec: TraceRecorder) -> None:
    """Answer `request.question` with DoG; see the module docstring."""
    notes: list[str] = []
    topics = topic_entities(request, notes)
    # the question is read first: a sure reading's prompt shows a few triplets, chosen from fewer candidates
    reading = read_question(request, params, rec, topics)
    progress.stage("building the prompt from the graph")
    ctx = prepare(request, "dog", params, topics, notes, *_sure_pool(reading, params))
    if params.auto_steps and reading.read:
        budget = step_budget(reading, params.max_steps)
        if budget != params.max_steps:
            rec.trace.notes.append(reading.note("max_steps", budget))
            params = dataclasses.replace(params, max_steps=budget)
            ctx.params = params
            if isinstance(rec.trace.parameters, dict):
                rec.trace.parameters["max_steps"] = budget
    guidance = DogGuidance.from_reading(reading, params)
    guidance.plans = leading_plans(reading, params, topics)
    if guidance.depth_note:
        rec.trace.notes.append(guidance.depth_note)
    if guidance.past_horizon:
        rec.trace.notes.append(
            f"past_horizon: the question's reading plans {reading.hops} hops, the longest walk the reader sees, so "
            f"the question may ask more: the entities the chain's path reaches at hop {reading.hops} are not put "
            "before the model's own answers")
    _budget_prompt(request, ctx, reading, params, rec)
    describe_context(rec.trace, ctx)
    walk = None
    if params.gq_scope == "graph":
        from ..graph.capped_view import HubCappedView
        from ..graph.embeddings import load_embedder

        with progress.phase(progress.SUBGRAPH):
            walk = ctx.walk_graph = HubCappedView(request.graph, request.question, params.walk_cap,
                                                  embedder=load_embedder())
    with request.model.lock:
        _DogRun(request, ctx, rec, guidance).decode()
    if walk is not None and walk.cuts:
        rec.trace.notes.append(walk.cut_note())


def leading_plans(reading: QuestionReading, params: DogParams, topics: list[str]) -> list:
    """The reading's plans whose likeliest may lead the answers (`plan_leads_answers`), or [] where it does not
    apply: switched off, nothing read, one plan only (nothing to prefer it to), or a question naming two or more
    entities, whose answers are ranked by meeting them (`meet_topics`)."""
    if params.plan_leads_answers <= 0 or not reading.read or len(reading.plans) < 2 or len(topics) > 1:
        return []
    return list(reading.plans)


def _context_is_the_chain_s(params: DogParams) -> bool:
    """Whether the prompt's context is what the chain may write (`local_visibility`, ``gq_scope=prompt``): then
    no prompt budget applies (`_budget_prompt`) and the context is pruned as for any question (`_sure_pool`)."""
    return params.local_visibility or params.gq_scope != "graph"


def _sure_context_at(params: DogParams) -> float:
    """How sure a reading must be for the prompt's smaller context (`sure_context_at`; 0: the guidance's bar)."""
    return params.sure_context_at or params.reading_sure_at


def _sure_pool(reading: QuestionReading, params: DogParams) -> tuple[int | None, str]:
    """The candidates to embed for the prompt's context, and why (`sure_context_pool`), when the prompt will show
    only a sure reading's few triplets (`_budget_prompt`); (None, "") otherwise: ``context_pool``."""
    sure_at = _sure_context_at(params)
    if (not params.sure_context_pool or not params.sure_context_triplets or not params.context_pool
            or _context_is_the_chain_s(params) or not reading.guides(sure_at)
            or params.sure_context_pool >= params.context_pool):
        return None, ""
    return params.sure_context_pool, (
        f"at most {params.sure_context_pool} candidates embedded instead of {params.context_pool}, sure_context_pool: "
        f"the question's reading is sure ({reading.confidence:.2f} >= {sure_at:.2f}), so the prompt shows only "
        f"{params.sure_context_triplets} triplets, its plan's first")


def _budget_prompt(request: MethodRequest, ctx: DecodingContext, reading: QuestionReading, params: DogParams,
                   rec: TraceRecorder) -> None:
    """A sure reading's smaller prompt context, and a two-entity reading's meeting triplets first
    (`decoding.prompt_budget`), recorded in the trace's notes and extra."""
    if not params.sure_context_triplets and not params.meeting_context and not params.guided_context_triplets:
        return
    if _context_is_the_chain_s(params):
        why = "local_visibility" if params.local_visibility else "gq_scope=prompt"
        rec.trace.notes.append(f"prompt budget: sure_context_triplets and meeting_context not applied ({why}: the "
                               "prompt's context is what the chain may write)")
        return
    meeting, met = (meeting_triplets(request.graph, reading) if params.meeting_context
                    and reading.guides(params.reading_sure_at) else ([], []))
    if meeting:
        walks = {}
        for p in reading.plans:
            walks.setdefault(p.topic, p.text)
        rec.trace.notes.append(
            f"meeting_context: the question's entities' walks ({'; '.join(walks.values())}) meet at "
            f"{', '.join(met[:5])}{' ...' if len(met) > 5 else ''}; the {len(meeting)} triplets along them to there "
            f"are shown first, the pruned context after them (the reading is "
            f"{reading.confidence:.2f} sure)")
        rec.trace.extra["meeting_context"] = {"triplets": meeting, "met": met}
    guided = guided_context(ctx.context_ids, request.graph, reading, params.guided_context_at or params.reading_sure_at,
                            _sure_context_at(params), params.guided_context_triplets, first=meeting)
    if guided is not None:
        shown, budget = guided
    elif not params.sure_context_triplets:
        shown, budget = list(ctx.context_ids), None
    else:
        shown, budget = sure_context(ctx.context_ids, request.graph, reading,
                                     _sure_context_at(params), params.sure_context_triplets,
                                     first=meeting)
    if budget is not None and budget.applied:
        show_triplets(ctx, request, shown)
    elif meeting:  # as many triplets as the pruned context, those where the walks meet first
        show_triplets(ctx, request, list(dict.fromkeys([*meeting, *shown]))[:max(len(shown), len(meeting))])
    if budget is not None:
        rec.trace.notes.append(budget.note())
        rec.trace.extra["prompt_budget"] = budget.to_dict()


@dataclass
class DogGuidance:
    """What DoG layers on the paper's loop for one question, from its reading and the switches (empty: the paper)."""

    filters: list = field(default_factory=list)  # step filters, applied in order (`decoding.step_filters`)
    walk_out: WalkOut | None = None
    hops: int | None = None  # where a list completes (a sure reading's hops)
    question_uses: dict[str, int] = field(default_factory=dict)  # the path whose end may lead the answers
    order: list[str] = field(default_factory=list)
    rank_by_chain: bool = False
    past_horizon: bool = False  # the reading is open-ended: its hops do not decide which answers lead
    conclude: ConcludeAtDepth | None = None  # answer where the chain's path completes a sure plan
    not_the_topic: bool = False  # an answer that is the question's own entity gives way to the path's end
    depth_note: str = ""  # an unsure reading's depth guides the chain (`unsure_depth`): why, for the trace
    plans: list = field(default_factory=list)  # the reading's plans, when the likeliest may lead the answers

    @classmethod
    def from_reading(cls, reading: QuestionReading, params: "DogParams") -> "DogGuidance":
        filters: list = [NoRestatement()] if params.skip_restatements else []
        if not reading.guides(params.reading_sure_at):
            if params.unsure_relations and reading.read and reading.plans:
                relations, taken, held = likely_relations(reading.plans, params.unsure_relations)
                filters.append(PlannedRelations(relations, name="unsure_relations", whose=(
                    f"the relations of the question reading's {taken} most likely plan(s), {held:.0%} of its "
                    "probability")))
            walk_out, note = None, ""
            if params.unsure_depth and params.walk_to_depth and reading.read and reading.plans:
                depth, taken, held = likely_depth(reading.plans, params.unsure_depth)
                if depth >= 2:
                    walk_out = WalkOut(depth, first=params.walk_out_first, max_steps=params.max_steps)
                    note = (f"unsure_depth: the question's reading is not sure of its plan ({reading.confidence:.0%}), "
                            f"but its {taken} most likely plan(s), {held:.0%} of its probability, all walk at least "
                            f"{depth} hops: a chain that answers fewer hops out is taken back and walks on "
                            "(walk_to_depth), its relations left to the model")
            return cls(filters, walk_out, not_the_topic=params.chain_answers_first, depth_note=note)
        hops = reading.hops
        order = list(reading.order) if params.hop_order and reading.uses else []
        past = reading.open_ended and params.past_horizon  # the question may ask more hops than the reader plans
        if params.stay_at_depth and reading.uses:
            filters.append(WithinDepth(hops))
        if params.question_relations and reading.relations:
            filters.append(PlannedRelations(frozenset(reading.relations), dict(reading.uses), order,
                                            min_depth=hops if params.walk_to_depth else 0))
        walk_out = (WalkOut(hops, first=params.walk_out_first, max_steps=params.max_steps)
                    if params.walk_to_depth else None)
        # the chain is held to the plan (stay_at_depth) and the graph completes the list: the hop's other
        # triplets add nothing; an open-ended plan too, whose next hop the model's answer line may name
        conclude = (ConcludeAtDepth(tuple(reading.order), reading.confidence, params.answer_among_reached)
                    if params.conclude_at_depth and params.complete_answers and reading.uses and reading.order
                    else None)
        # an open-ended reading's hops are a lower bound: the answers are where the chain's path ends, not at its hop
        return cls(filters, walk_out, None if past else hops, dict(reading.uses),
                   list(reading.order) if params.hop_order else [], params.chain_answers_first, past, conclude,
                   params.chain_answers_first)


class _DogRun:
    """One DoG run: wires the chain step's guide and the chain beam together and records each round."""

    def __init__(self, request: MethodRequest, ctx: DecodingContext, rec: TraceRecorder,
                 guidance: DogGuidance | None = None) -> None:
        self.request = request
        self.guidance = guidance or DogGuidance()
        self.model = request.model
        self.ctx = ctx
        self.rec = rec
        self.trace = rec.trace
        self.params: DogParams = ctx.params  # type: ignore[assignment]

    def _prefill(self, prompt: PromptParts, generated: list[int]):
        """The prompt's KV state (a cached shared prefix is reused), counted as one model call."""
        ids = self.model.encode(prompt.text)
        self.rec.count_call(len(ids) + len(generated))
        before = getattr(self.model.counter, "prefix_tokens_reused", 0)
        fixed = self.model.fixed_tokens(prompt.shared_prefix, ids)  # the instructions and examples
        state = self.model.prefill(ids + generated, fixed=fixed)
        reused = getattr(self.model.counter, "prefix_tokens_reused", 0) - before
        self.trace.extra["prompt_tokens_cached"] = self.trace.extra.get("prompt_tokens_cached", 0) + reused
        return state

    def _reprompt(self, chain: BeamCandidate):
        """Local visibility (§5.2): a kept chain re-reads a prompt showing only its G_q."""
        return self._prefill(context_prompt(self.ctx, self.request, chain.subgraph.triplet_ids), chain.generated_ids)

    def decode(self) -> None:
        model, params, trace, ctx = self.model, self.params, self.trace, self.ctx
        passes_before = model.counter.forward_passes
        out_before = model.counter.tokens_out
        t0 = time.perf_counter()
        progress.stage("reading the question and the graph's triplets")
        base = self._prefill(ctx.prompt, [])
        trace.extra["prompt_tokens"] = len(base.ids)
        trace.extra["prefill_seconds"] = round(time.perf_counter() - t0, 4)
        t_decode, c_decode = time.perf_counter(), time.process_time()
        # G_q grows over ctx.walk_graph: the prompt's context, or the whole graph with hubs cut (gq_scope)
        with progress.phase(progress.SUBGRAPH):
            guides = DogGuides(model, ctx.walk_graph, params.max_steps, params.repeat_triplets,
                               params.reverse_readings)
            beam = ChainBeam(model, ctx.walk_graph, guides, params.beam_size, params.max_new_tokens,
                             force_conclusion=params.force_conclusion, strict=params.strict,
                             reprompt=self._reprompt if params.local_visibility else None,
                             filters=self.guidance.filters, walk_out=self.guidance.walk_out,
                             free_text_cap=params.free_text_cap, conclude=self.guidance.conclude,
                             step_numbers=params.prompt_examples != "bare", meet_topics=params.meet_topics)
            chains = beam.start(base, QueryCentricSubgraph(ctx.walk_graph, ctx.topics))
        finished: list[BeamCandidate] = []
        step = 0
        while chains:
            step += 1
            progress.stage(f"triplet step {step} of at most {params.max_steps}" if step <= params.max_steps
                           else "writing the answer line")
            # the round is let go before the next one runs: a parent none of whose chains was kept
            # frees its KV cache cells then (llama.cpp reuses them for the next round's tokens)
            chains = self._record_round(beam.advance(chains), finished)
        trace.notes.extend(beam.filters.summaries())
        trace.extra["decode_seconds"] = round(time.perf_counter() - t_decode, 4)
        trace.extra["decode_cpu_seconds"] = round(time.process_time() - c_decode, 4)
        with progress.phase(progress.ANSWERS):
            self._final(sorted(finished, key=lambda b: -b.score))
        passes = model.counter.forward_passes - passes_before
        n_tok = max(model.counter.tokens_out - out_before, 1)
        trace.extra["forward_passes_per_token"] = round((passes - self.rec.costs.model_calls) / n_tok, 4)
        trace.extra["trie_build_ms"] = [round(s * 1000, 3) for s in guides.build_seconds]

    # ------------------------------------------------------------- trace
    def _record_round(self, round_: BeamRound, finished: list[BeamCandidate]) -> list[BeamCandidate]:
        """Record a round's steps (ended chains, then each searched chain, then the beam); return the kept chains."""
        for done in round_.finished:
            self._record_finished(done)
            finished.append(done.chain)
        if round_.error is not None:  # strict: the constraint failure goes to the caller
            raise round_.error
        if round_.extensions:
            for searched in round_.searched:
                self.rec.step(self._triplet_step(searched))
            self.rec.step(self._beam_step(round_))
        return round_.kept

    def _triplet_step(self, searched: SearchedChain) -> Step:
        beam, result, graph = searched.chain, searched.search, self.request.graph
        best = searched.extensions[0]  # extensions are best first
        chosen = reading_of(graph, best.hypothesis.triplet_id)
        kept_tids = {triplet_of(e.hypothesis.triplet_id) for e in searched.extensions if e.kept}
        # one entry per graph triplet: the reading that was decoded (exact score) if any, else the best bound
        by_triplet = {}
        for rid, cs in result.candidates.items():
            tid = triplet_of(rid)
            if tid not in by_triplet or (cs.exact, cs.score) > (by_triplet[tid][1].exact, by_triplet[tid][1].score):
                by_triplet[tid] = (rid, cs)
        cands = []
        for tid, (rid, cs) in sorted(by_triplet.items(), key=lambda kv: (-kv[1][1].score, kv[0])):
            reading = reading_of(graph, rid)
            cands.append(
                Candidate(
                    label=reading.label, score=cs.score, triplet_id=tid, triplet=graph.triplet(tid).as_tuple,
                    prob=logprob_to_prob(cs.score), kept=tid in kept_tids, beam=beam.beam_id,
                    extra={"exact": cs.exact, "reversed": reading.reversed},
                )
            )
        notes = [e.hypothesis.note for e in searched.extensions if e.hypothesis.note]
        if searched.taken_back is not None:
            notes.insert(0, taken_back_note(searched.taken_back, went_on=True))
            self.trace.extra["answers_taken_back"] = self.trace.extra.get("answers_taken_back", 0) + 1
        if searched.narrowed is not None:
            notes.insert(0, narrowed_note(searched.narrowed))
        notes[:0] = searched.filter_notes
        return Step(
            index=0,
            kind="dog.triplet",
            title=f"Step {len(beam.chain) + 1} (beam {beam.beam_id}): {chosen.label}",
            beam=beam.beam_id,
            subgraph_before=sorted(beam.subgraph.triplet_ids),
            subgraph_after=best.chain.subgraph.triplet_ids,
            added_entities=sorted(best.chain.subgraph.visited - beam.subgraph.visited),
            candidates=cands,
            choice=chosen.label,
            chosen_triplet_id=chosen.triplet_id,
            model_text=searched.free_text,
            token_view=token_view(self.model, best.hypothesis.positions, self.params.token_view_cap),
            tokens_out=len(best.hypothesis.token_ids),
            seconds=round(time.perf_counter() - searched.started, 4),
            note="; ".join(notes),
            extra={
                "chain": list(best.chain.chain),
                "chain_score": best.chain.score,
                "triplet_score": best.hypothesis.score,
                "returned": [
                    {"triplet_id": triplet_of(e.hypothesis.triplet_id), "reversed": is_reversed(e.hypothesis.triplet_id),
                     "score": e.hypothesis.score, "kept": e.kept, "beam": e.chain.beam_id if e.kept else None}
                    for e in searched.extensions
                ],
                "forward_passes": result.forward_passes,
                **({"server_strategy": result.strategy} if result.strategy else {}),
                "trie_nodes": searched.trie.n_nodes,
                "opener": searched.opener,
                "reversed": chosen.reversed,  # written backwards; chosen_triplet_id is the graph triplet
                # chain triplets the step could not write again (repeat_triplets False)
                "excluded_repeats": [] if self.params.repeat_triplets else list(beam.chain),
            },
        )

    def _beam_step(self, round_: BeamRound) -> Step:
        graph = self.request.graph
        extensions = round_.extensions
        cands = []
        for e in sorted(extensions, key=lambda e: -e.chain.score):
            tid = triplet_of(e.hypothesis.triplet_id)
            cands.append(
                Candidate(
                    label=" | ".join(graph.triplet(t).linearized() for t in e.chain.chain),
                    score=e.chain.score,
                    triplet_id=tid,
                    triplet=graph.triplet(tid).as_tuple,
                    kept=e.kept,
                    beam=e.chain.beam_id if e.kept else e.parent.beam_id,
                    extra={"chain": list(e.chain.chain), "parent_beam": e.parent.beam_id},
                )
            )
        kept = sorted((e.chain for e in extensions if e.kept), key=lambda c: -c.score)
        return Step(
            index=0,
            kind="dog.beam",
            title=f"Beam after step {round_.number}: kept {len(kept)} of {len(extensions)} chains",
            candidates=cands,
            choice=cands[0].label if cands else None,
            extra={
                "chains": [list(c.chain) for c in kept],
                "chain_scores": [c.score for c in kept],
                "dropped": [list(c.chain) for c in round_.dropped],
            },
        )

    def _record_finished(self, done: FinishedChain) -> None:
        """A chain's constraint failure (if any) and its answer step; a forced conclusion is noted."""
        beam, trace = done.chain, self.trace
        if done.failure is not None:
            msg = f"beam {beam.beam_id}: {done.failure.message}; the chain was stopped (no unconstrained fallback)"
            trace.error = (trace.error + "; " if trace.error else "") + msg
            self.rec.step(Step(
                index=0, kind="dog.triplet", title=f"Constraint failure (beam {beam.beam_id})", beam=beam.beam_id,
                subgraph_before=beam.subgraph.triplet_ids, subgraph_after=beam.subgraph.triplet_ids,
                model_text=done.failure.free_text, note=msg,
                extra={"chain": list(beam.chain), "chain_score": beam.score, "error": True},
            ))
        forced_note = (conclusion_note(done.stop, done.dropped, done.appended, done.chosen_among)
                       if done.forced_conclusion else "")
        concluded = done.stop == "depth" and self.guidance.conclude is not None
        if concluded:  # noted once for the trace (its head is what `ask`/`show` print), and on each chain's step
            forced_note = self.guidance.conclude.note()
            trace.extra["concluded_at_depth"] = trace.extra.get("concluded_at_depth", 0) + 1
            if forced_note not in trace.notes:
                trace.notes.append(forced_note)
        elif forced_note:
            trace.extra["forced_conclusion"] = trace.extra.get("forced_conclusion", 0) + 1
        if done.stop == "cap":
            cut = f"free text cut at {self.params.free_text_cap} tokens (free_text_cap)"
            forced_note = f"{cut}; {forced_note}" if forced_note else cut
            trace.extra["free_text_cuts"] = trace.extra.get("free_text_cuts", 0) + 1
        if forced_note and not concluded:
            trace.notes.append(f"beam {beam.beam_id}: {forced_note}")
        answers = parse_answers(done.free_text) or parse_answers(beam.text)
        if done.unread:
            unread = (f"the last {done.unread} token{'s' if done.unread > 1 else ''} of the answer's name written "
                      "from the graph once it was the only name left (no model pass)")
            forced_note = f"{forced_note}; {unread}" if forced_note else unread
        if done.taken_back is not None:
            forced_note = "; ".join(n for n in (taken_back_note(done.taken_back, went_on=False), forced_note) if n)
            self.trace.extra["answers_taken_back"] = self.trace.extra.get("answers_taken_back", 0) + 1
        self.rec.step(Step(
            index=0,
            kind="dog.answer",
            title=f"Answer (beam {beam.beam_id}): {', '.join(answers) if answers else 'no answer marked'}",
            beam=beam.beam_id,
            subgraph_before=beam.subgraph.triplet_ids,
            subgraph_after=beam.subgraph.triplet_ids,
            choice=", ".join(answers) if answers else None,
            model_text=done.free_text,
            token_view=token_view(self.model, done.positions, self.params.token_view_cap) if done.positions else [],
            note=forced_note or {"eos": "", "stop": "", "length": "stopped at the token budget",
                                 "repeat": "stopped: the model was repeating itself"}.get(done.stop, done.stop),
            extra={"answers": answers, "chain": list(beam.chain), "chain_score": beam.score, "stop": done.stop,
                   "forced_conclusion": done.forced_conclusion, **({"unread": done.unread} if done.unread else {})},
        ))

    def _final(self, ranked: list[BeamCandidate]) -> None:
        trace, graph = self.trace, self.request.graph
        topics = self.ctx.topics
        trace.chains = [ground_chain(graph, graph.triplets_by_ids(b.chain), topics) for b in ranked]
        # triplets_by_ids keeps order only for existing ids; chains come from the graph, so all exist
        trace.chain_scores = [b.score for b in ranked]
        if ranked:
            best = ranked[0]
            texts = parse_answers(best.answer_text) or parse_answers(best.text)
            chain = graph.triplets_by_ids(best.chain) if self.params.complete_answers else None
            g = self.guidance
            trace.answers = resolve_answers(texts, graph, topics, trace.notes, complete_from=chain, hops=g.hops,
                                            rank_by_chain=g.rank_by_chain, question_uses=g.question_uses,
                                            question_order=g.order,
                                            chain_entities=[e for t in graph.triplets_by_ids(best.chain)
                                                            for e in (t.head, t.tail)],
                                            question=self.request.question, meet_topics=self.params.meet_topics,
                                            not_the_topic=g.not_the_topic)
            if g.plans:
                trace.answers, lead = lead_by_plan(trace.answers, graph.triplets_by_ids(best.chain), g.plans,
                                                   self.params.plan_leads_answers)
                if lead is not None:
                    trace.notes.append(lead.sentence())
                    trace.extra["plan_lead"] = dataclasses.asdict(lead)
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


def taken_back_note(taken: TakenBack, went_on: bool) -> str:
    """The trace's account of an answer line taken back because the chain stood too few hops out."""
    said = " ".join(taken.text.split())
    said = said if len(said) <= 120 else said[:117] + "..."
    head = (f"the chain wrote its answer {taken.depth} hop(s) from the question's entity, its reading says "
            f"{taken.min_depth}: {said!r} was taken back and "
            + ("a triplet opened" if taken.written.strip() == "<" else f"{taken.written.strip()!r} written"))
    if taken.offered:
        head += (f"; the next triplet was offered only from the chain's farthest entities: {taken.offered} of "
                 f"{taken.of} G_q triplets")
    return head + ("; it went on to this triplet" if went_on else "; it answered again, and that answer stands")


def narrowed_note(n: Narrowed) -> str:
    """The trace's account of a step offered only the triplets leading on from the chain's farthest entities."""
    why = f" and {n.steps_left} triplet(s) left" if n.steps_left <= n.min_depth - n.depth else ""
    return (f"the chain stood {n.depth} hop(s) from the question's entity, its reading says {n.min_depth}{why}: "
            f"offered only triplets leading on from its farthest entities ({n.offered} of {n.of} triplets)")
