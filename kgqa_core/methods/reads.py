"""READS: search, prune and answer as discriminative choices (training-free re-implementation).

The paper (§3-4) fine-tunes Llama-2 for three subtasks; here every decision
is a choice among options scored by the local model's log-probabilities
(`kgqa_core.reads.scoring`: trie-normalised option probabilities averaged over
listing orders, against length and position bias):

1. **Search** (Eq. 6): from the start entity, repeatedly choose one
   (semantic node, relation) expansion that exists in the graph, or ``None``.
   Each choice adds a semantic node to S_k and its triplets to G_k.
2. **Prune** (Eq. 7): choose constraints (position, operator, value) over the
   entities, numbers and dates the question mentions, until ``None``; each
   prunes the subtrees of G_k that violate it.
3. **Answer** (Eq. 8): choose the node of S_k that holds the answer (not a
   constraint position); all its entities in G_k are the answers, ordered by
   how many root paths of G_k reach them.

Answers are always graph entities: they are read off G_k, never generated.

Parameters: `ReadsParams`.  ``stop_penalty`` (1.5) is subtracted from the
log-score of ``None`` in search decisions: an untrained model stops too early (cf. the paper's App. G).  On 11 MetaQA dev
stop decisions with qwen2.5-coder-1.5b, None led the right continuation by
0.7-2.9 nats on 2-hop questions and by 1.4-6.9 on 1-hop ones; 1.5 lets the
clearer 2-hop cases go on without extending any 1-hop search there.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Any, ClassVar

from .. import progress
from ..graph.knowledge_graph import KnowledgeGraph
from ..parameters import MethodParams, param, preset_param
from ..reads.abstract_structure import AbstractStructure
from ..reads.constraints import (
    ConstraintOption,
    apply_constraint,
    constraint_entities,
    constraint_options,
    parse_question_values,
)
from ..reads.options import NONE_OPTION, answer_options, rank_pool, search_options
from ..reads.prompts import answer_prompt, prune_prompt, search_prompt
from ..reads.scoring import LENGTH_NORMS, Chooser, Decision, ModelChooser, decision_from_scores, with_penalty
from ..reading.guidance import (agree_param, entity_free_param, cover_param, describe_languages_param, describe_param, distinct_param, domain_words_param, horizon_param,
                               answer_kind_param, every_relation_param, one_arrow_param, joint_param, listed_param, meet_param, order_param, phrase_param, quick_param, read_question,
                               kind_look_param, look_param, read_back_param, reader_param, stop_param, sure_param)
from ..reading.reading import MAX_HOPS as READER_HORIZON
from ..reading.reading import QuestionReading, plan_allows
from ..trace.schema import Answer, Candidate, ChainTriplet, Step, Trace
from .base import MethodRequest, MethodSpec, run_method
from .recorder import TraceRecorder

@dataclass(frozen=True)
class ReadsParams(MethodParams):
    max_depth: int = param(3, "Deepest node level of the abstract structure.", min=1, max=6, advanced=True)
    max_pool: int = param(30, "Search options shown per decision (larger pools pre-ranked by similarity).",
                          min=1, max=200, advanced=True)
    max_search_steps: int = param(5, "Search decisions (node expansions) at most.", min=0, max=20)
    max_prune_steps: int = param(3, "Constraint decisions at most.", min=0, max=10, advanced=True)
    permutations: int = param(2, "Listing orders each decision is scored in (against position bias).",
                              min=1, max=8)
    length_norm: str = param("trie", "How option log-probabilities are normalised for length.",
                             choices=LENGTH_NORMS, advanced=True)
    examples: int = param(2, "Entity names shown per node (0: the paper's bare type_id).", min=0, max=10,
                          advanced=True)
    max_node_triplets: int = param(1000, "Triplets one expansion may add.", min=1, max=100000, advanced=True)
    max_chains: int = param(20, "Answer chains recorded.", min=1, max=1000, advanced=True)
    stop_penalty: float = param(1.5, "Subtracted from the log-score of None in search decisions.",
                                min=0.0, max=20.0, advanced=True)
    auto_search_steps: bool = param(
        True, "Offer None only once a path is as many expansions deep as the question names hops, and keep "
        "the last decisions for reaching that depth (the question's reading, kgqa_core.reading); noted.", advanced=True)
    question_relations: bool = param(
        True, "Offer only expansions along the relations the question's reading plans, each as many times on a path "
        "as the question names it (the question's reading, kgqa_core.reading); all when none is there (not in the paper; "
        "noted).", advanced=True)
    hop_order: bool = param(
        True, "With question_relations: when the question's reading orders the relations it plans (the word "
        "nearest the topic entity's name is the first hop, kgqa_core.reading), an expansion to a "
        "hop is offered only along that hop's relation (not in the paper; noted).", advanced=True)
    meet_topics: bool = param(
        True, "When the question names two or more graph entities, the answer position's entities with a triplet "
        "to the most of them are the answers and the others are left out, the question's own entities after "
        "(kgqa_core.answers.meeting; not in the paper; noted).", advanced=True)
    reader: str = reader_param()
    reading_sure_at: float = sure_param()
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
    preset: str = preset_param()

    # the paper's search / prune / answer, scored by joint log-probabilities in the order listed
    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {"paper": {
        "auto_search_steps": False, "question_relations": False, "hop_order": False, "reader": "none",
        "stop_penalty": 0.0, "meet_topics": False, "describe_relations": False, "describe_other_languages": False}}


_MAX_LISTED_ENTITIES = 200


class ReadsError(ValueError):
    """A question READS cannot start on (no topic entity, nothing to retrieve)."""


def run(request: MethodRequest, chooser: Chooser | None = None) -> Trace:
    """Answer ``request.question`` with READS; ``chooser`` replaces the model's choices (tests)."""
    spec = dataclasses.replace(SPEC, run=functools.partial(_run, chooser=chooser))
    return run_method(spec, request)


def _run(request: MethodRequest, params: ReadsParams, rec: TraceRecorder, chooser: Chooser | None = None) -> None:
    rec.trace.parameters["scorer"] = "model" if chooser is None else type(chooser).__name__
    if chooser is None:
        chooser = ModelChooser(request.model, permutations=params.permutations, length_norm=params.length_norm)
    _Reads(request, rec, chooser, params).run()


class _Reads:
    """One READS run: the state shared by its three subtasks."""

    def __init__(self, request: MethodRequest, rec: TraceRecorder, chooser: Chooser, params: ReadsParams) -> None:
        self.request = request
        self.graph: KnowledgeGraph = request.graph
        self.question = request.question
        self.rec = rec
        self.trace = rec.trace
        self.chooser = chooser
        self.params = params
        self.examples = params.examples
        self.structure: AbstractStructure | None = None
        self.applied: list[ConstraintOption] = []
        self._embed = None
        self._min_depth = 1  # the depth the question names (set by search)
        self._estimate = None  # the question's reading when sure (kgqa_core.reading), read once by search

    # ------------------------------------------------------------ driver
    def run(self) -> None:
        root, others = self._topic_entities()
        self.trace.topic_entities = [root, *others]
        self.structure = AbstractStructure(root)
        self.search()
        self.prune(others)
        self.answer()

    def _topic_entities(self) -> tuple[str, list[str]]:
        from ..graph.linking import UnknownEntityError, link_entities

        given = [t for t in self.request.topic_entities if t]
        try:
            found = link_entities(self.question, self.graph, given or None)
        except UnknownEntityError as exc:
            raise ReadsError(str(exc)) from None
        names = list(dict.fromkeys(c.entity for c in found if self.graph.has_entity(c.entity)))
        if not names:
            raise ReadsError(
                "no topic entity: none was given and none of the question's reading planss an entity of "
                f"graph {self.graph.name!r}; pick the topic entity by hand"
            )
        if not given:
            names = names[:1]
            self.trace.notes.append(f"topic entity {names[0]!r} found by entity linking")
        return _start_entity(names, self.trace.notes)

    # ------------------------------------------------------------ search
    def search(self) -> None:
        s = self.structure
        assert s is not None
        stopped = "max_search_steps"
        min_depth = self._min_depth = self._min_search_steps()
        budget = self.params.max_search_steps
        max_depth = self.params.max_depth
        if self._estimate is not None and max_depth >= READER_HORIZON and self._estimate.hops > max_depth:
            # the reading walks past the reader's horizon, further than the structure goes: so may the search (a
            # structure set shallower than the horizon stays as set)
            max_depth = self._estimate.hops
            self.trace.notes.append(f"max_depth {max_depth} (not {self.params.max_depth}) from the question's "
                                    f"reading, which walks {max_depth} hops: {self._estimate.explanation}")
        for step in range(budget):
            progress.stage(f"search step {step + 1} of at most {budget}: choosing a relation")
            pool = search_options(self.graph, s, max_depth, self.params.max_node_triplets)
            if not pool:
                stopped = "no expansion left"
                break
            reached = max(n.depth for n in s.nodes.values())
            named_note = ""
            if self.params.question_relations and self._estimate is not None:
                pool, named_note = _keep_named_relations(pool, s, self._estimate, reached >= max(1, min_depth),
                                                         ordered=self.params.hop_order)
                if not pool:
                    stopped = "nothing the question names left"
                    self.trace.notes.append(named_note)
                    break
            deeper, depth_note = _keep_depth_reachable(pool, s, reached, min_depth, budget - step)
            if depth_note:
                pool = deeper
            ranked = rank_pool(self.question, pool, self.params.max_pool, self._embed_texts)
            # None only once a path is as deep as the hops the question names: a chooser that
            # takes every relation out of the root has not answered a 3-hop question
            offer_none = reached >= max(1, min_depth)
            texts = ([NONE_OPTION] if offer_none else []) + [o.text for o in ranked.options]
            before = s.triplet_ids()
            decision = self._choose("search", search_prompt(self.question, s, self.examples), texts)
            penalty = self.params.stop_penalty
            if offer_none and penalty and len(texts) > 1:
                with_penalty(decision, 0, penalty)
            chosen_text = decision.chosen.text
            notes = [n for n in (named_note, depth_note) if n]
            if ranked.cut:
                notes.append(
                    f"{ranked.total} expansions, cut to the {len(ranked.options)} most similar to the "
                    f"question ({ranked.method} ranking)"
                )
            added: list[str] = []
            node_id = None
            if chosen_text != NONE_OPTION:
                option = ranked.options[texts.index(chosen_text) - (1 if offer_none else 0)]
                node = s.add_node(option.node_id, option.relation, option.inverse, option.links)
                node_id = node.id
                added = node.entities
                if option.truncated_from:
                    notes.append(
                        f"{option.text} reaches {option.truncated_from} triplets; kept the first "
                        f"{len(option.links)} (max_node_triplets)"
                    )
            candidates = []
            for i, opt in enumerate(decision.options):
                extra: dict[str, Any] = {"per_order": opt.per_order, "mean_token_logprob": opt.mean_token_logprob}
                if opt.text == NONE_OPTION:
                    extra["stop"] = True
                else:
                    o = ranked.options[i - (1 if offer_none else 0)]
                    extra.update(
                        node=o.node_id, relation=o.relation, inverse=o.inverse,
                        entities=len(o.entities), triplets=len(o.links),
                    )
                candidates.append(_candidate(opt, i == decision.choice, extra))
            title = "stop searching" if node_id is None else f"retrieve {chosen_text} -> {node_id}"
            self._step(
                "reads.search", title, decision, candidates, before, added, notes,
                {"new_node": node_id, "pool_total": ranked.total, "pool_ranking": ranked.method,
                 "stop_penalty": penalty if offer_none else 0.0},
            )
            if node_id is None:
                stopped = "None chosen"
                break
        self.trace.extra["search_stopped_by"] = stopped

    def _min_search_steps(self) -> int:
        """The depth a path must reach before None is offered: the hops a sure reading says, else 1.

        An untrained chooser stops after the first hop on most 2-hop
        questions (the paper's App. G); a question whose reading plans two
        relations ("the directors of the films written by X") needs a path
        two expansions deep, not two expansions of the root.  An unsure
        reading changes nothing (the paper's search).
        """
        if not (self.params.auto_search_steps or self.params.question_relations):
            return 1
        assert self.structure is not None
        reading = read_question(self.request, self.params, self.rec, self.trace.topic_entities)
        if not reading.guides(self.params.reading_sure_at):
            return 1
        self._estimate = reading
        if not self.params.auto_search_steps:
            return 1
        steps = min(reading.hops, self.params.max_search_steps)
        if steps > 1:
            self.trace.notes.append(reading.note("min_search_steps", steps)
                                    + "; None is offered once a path is that many expansions deep")
        return steps

    def _embed_texts(self, texts: list[str]):
        """Sentence embeddings for pool ranking; loads the embedder on first use only."""
        if self._embed is None:
            from ..graph.embeddings import load_embedder

            self._embed = load_embedder() or False
        if self._embed is False:
            raise RuntimeError("no sentence embedder installed")
        return self._embed.encode(texts)

    def _choose(self, kind: str, parts, texts: list[str]) -> Decision:
        """Ask the chooser, unless the pool leaves no choice."""
        if len(texts) == 1:
            decision = decision_from_scores(texts, [0.0])
            decision.note = "only one option: no model call"
            return decision
        return self.chooser.choose(kind, parts, texts)

    # ------------------------------------------------------------- prune
    def prune(self, other_topics: list[str]) -> None:
        progress.stage("pruning with the question's constraints")
        s = self.structure
        assert s is not None
        linked = list(other_topics)
        try:
            from ..graph.linking import link_entities

            linked += [c.entity for c in link_entities(self.question, self.graph)]
        except Exception:
            pass
        values = constraint_entities(self.question, s, linked) + parse_question_values(self.question)
        self.trace.extra["constraint_values"] = [
            {"text": v.text, "kind": v.kind, "source": v.source} for v in values
        ]
        for _ in range(self.params.max_prune_steps):
            options = constraint_options(s, values, self.question, self.applied)
            if not options:
                if not self.applied:
                    self._empty_step(
                        "reads.prune", "no constraint to apply",
                        "no constraint option prunes G_k"
                        + (f" (values from the question: {', '.join(v.text for v in values)})" if values else " (the question names no constraint value in G_k)"),
                    )
                break
            texts = [NONE_OPTION] + [o.text for o in options]
            before = s.triplet_ids()
            parts = prune_prompt(self.question, s, [v.text for v in values], [a.text for a in self.applied], self.examples)
            decision = self._choose("prune", parts, texts)
            chosen = decision.chosen.text
            removed: set[int] = set()
            if chosen != NONE_OPTION:
                option = options[texts.index(chosen) - 1]
                removed = apply_constraint(s, option)
                self.applied.append(option)
            candidates = [
                _candidate(
                    opt, i == decision.choice,
                    {"per_order": opt.per_order, "mean_token_logprob": opt.mean_token_logprob}
                    | ({"stop": True} if i == 0 else {
                        "position": options[i - 1].position, "operator": options[i - 1].operator,
                        "value": options[i - 1].value.text if options[i - 1].value else None,
                    }),
                )
                for i, opt in enumerate(decision.options)
            ]
            title = "no further constraint" if chosen == NONE_OPTION else f"constraint {chosen}"
            notes = [f"pruned {len(removed)} triplets"] if removed else []
            self._step("reads.prune", title, decision, candidates, before, [], notes, {"removed_triplets": sorted(removed)})
            if chosen == NONE_OPTION:
                break
        self.trace.extra["constraints_applied"] = [a.text for a in self.applied]

    # ------------------------------------------------------------ answer
    def answer(self) -> None:
        progress.stage("choosing the answer")
        s = self.structure
        assert s is not None
        used = {a.position for a in self.applied}
        options, depth_notes = _keep_deep_answers(answer_options(s, used), s, self._min_depth)
        self.trace.extra["retrieved_triplets"] = s.triplet_ids()
        self.trace.extra["abstract_structure"] = s.to_dict()
        if not options:
            self._empty_step("reads.answer", "no answer position", "S_k has no node besides the start entity")
            raise ReadsError("READS retrieved nothing from the start entity, so there is no answer position")
        texts = [o.text for o in options]
        before = s.triplet_ids()
        decision = self._choose("answer", answer_prompt(self.question, s, [a.text for a in self.applied], self.examples), texts)
        node = s[options[decision.choice].node_id]
        support = _path_counts(s, node.id)
        best = max(support.values()) if support else 1
        order = sorted(node.entities, key=lambda e: -support.get(e, 0))  # stable: graph order on ties
        prob = decision.chosen.prob
        self.trace.answers = [
            Answer(text=e, entity=e, in_graph=self.graph.has_entity(e), score=round(prob * support.get(e, 0) / best, 6))
            for e in order
        ]
        if self.params.meet_topics:
            self._meet_topics()
            order = [a.text for a in self.trace.answers]
        chains = [_chain_to(s, node.id, e) for e in order[: self.params.max_chains]]
        candidates = [
            _candidate(opt, i == decision.choice, {"node": options[i].node_id, "per_order": opt.per_order,
                                                     "mean_token_logprob": opt.mean_token_logprob})
            for i, opt in enumerate(decision.options)
        ]
        self._step(
            "reads.answer", f"answer position {node.id} ({len(order)} entities)", decision, candidates,
            before, order[:_MAX_LISTED_ENTITIES], depth_notes, {"answer_node": node.id},
        )
        from ..trace.faithfulness import check_chains, ground_chain

        topics = self.trace.topic_entities
        with progress.phase(progress.ANSWERS):
            self.trace.chains = [ground_chain(self.graph, chain, topics) for chain in chains]
            self.trace.chain_scores = [a.score or 0.0 for a in self.trace.answers[: len(chains)]]
            self.trace.faithfulness = check_chains(self.graph, self.trace.chains, topics, self.trace.answers)
        self.trace.raw_output = ", ".join(order)
        self.trace.extra["answer_node"] = node.id
        self.trace.extra["linearized_structure"] = s.linearize(self.examples)

    def _meet_topics(self) -> None:
        """The answers with a triplet to more of the question's entities first (`kgqa_core.answers.meeting`), noted."""
        from ..answers.meeting import meet_topics

        with progress.phase(progress.ANSWERS):
            meeting = meet_topics(self.trace.answers, self.graph, self.trace.topic_entities)
        if meeting is not None:
            self.trace.answers = meeting.answers
            self.trace.notes.append(meeting.note)

    # ------------------------------------------------------------- steps
    def _step(
        self,
        kind: str,
        title: str,
        decision: Decision,
        candidates: list[Candidate],
        before: list[int],
        added: list[str],
        notes: list[str],
        extra: dict[str, Any],
    ) -> None:
        s = self.structure
        assert s is not None
        if decision.note:
            notes = [*notes, decision.note]
        if len(added) > _MAX_LISTED_ENTITIES:
            notes.append(f"{len(added)} entities added; the first {_MAX_LISTED_ENTITIES} are listed")
        step = Step(
            index=0,
            kind=kind,
            title=title,
            subgraph_before=before,
            subgraph_after=s.triplet_ids(),
            added_entities=added[:_MAX_LISTED_ENTITIES],
            candidates=candidates,
            choice=decision.chosen.text,
            model_calls=decision.calls,
            tokens_in=decision.tokens_in,
            seconds=round(decision.seconds, 4),
            note="; ".join(notes),
            extra={
                "abstract_structure": s.to_dict(),
                "linearized_structure": s.linearize(self.examples),
                "forward_passes": decision.forward_passes,
                **extra,
            },
        )
        self.rec.step(step)

    def _empty_step(self, kind: str, title: str, note: str) -> None:
        s = self.structure
        assert s is not None
        ids = s.triplet_ids()
        step = Step(
            index=0, kind=kind, title=title, subgraph_before=ids, subgraph_after=ids, note=note,
            extra={"abstract_structure": s.to_dict(), "linearized_structure": s.linearize(self.examples)},
        )
        self.rec.step(step)


def _keep_depth_reachable(
    pool: list, structure: AbstractStructure, reached: int, min_depth: int, steps_left: int
) -> tuple[list, str]:
    """The expansions that still let a path reach `min_depth` within `steps_left` decisions, and a note.

    When the decisions left are just enough to take the deepest path down to
    the hops the question names, only expansions of the deepest nodes stay
    in the pool (an expansion of a shallower node would leave the question
    unanswerable at its depth); otherwise, or when no deepest node can be
    expanded, the pool is unchanged and the note empty.
    """
    needed = min_depth - reached
    if needed <= 0 or steps_left > needed:
        return pool, ""
    deepest = [o for o in pool if structure[o.node_id].depth == reached]
    if not deepest or len(deepest) == len(pool):
        return pool, ""
    return deepest, (
        f"{steps_left} search decision(s) left for {needed} more hop(s): only expansions of the deepest "
        f"node(s) offered ({len(deepest)} of {len(pool)})"
    )


def _start_entity(names: list[str], notes: list[str]) -> tuple[str, list[str]]:
    """The entity the search starts from and the others (constraints): the first that is not a number or date.

    READS never expands a number or a date (`search_options`: following a
    value back to everything that has it is a flood), so a search started
    from one ("the entities with elevation 4317 and the mountain of
    colorado") retrieved nothing; the value is a constraint instead.  Noted.
    """
    from ..reads.abstract_structure import detect_type

    literal = [detect_type(n) in ("num", "date") for n in names]
    if not literal[0] or all(literal):
        return names[0], names[1:]
    k = literal.index(False)
    notes.append(f"the search starts from {names[k]!r}, not {names[0]!r}: READS does not expand a number or a date, "
                 f"so {names[0]!r} is a constraint")
    return names[k], names[:k] + names[k + 1:]


def _keep_named_relations(pool: list, structure: AbstractStructure, estimate: QuestionReading,
                          deep_enough: bool = False, ordered: bool = False) -> tuple[list, str]:
    """The expansions along relations the question names, each at most as often on a path as it is named, and a note.

    "What types are the movies written by the screenwriter of X" names
    `has_genre` once and `written_by` twice: after `written_by` and
    `written_by (reverse)` only `has_genre` may follow (the chooser took
    `written_by` a third time, back toward where it came from).  With no
    count for every hop (a sharing word with no relation beside it) each
    named relation may repeat.  When none fits: empty (the search stops)
    once a path is `deep_enough`, else unchanged, with no note; unchanged
    too when the question names none.  `ordered` (``hop_order``): when the
    reading orders the relations (`QuestionReading.order`), an expansion to hop
    k walks only hop k's relation ("which person directed the movies written
    by X": the films he wrote first).
    """
    named, uses = set(estimate.relations), estimate.uses
    if not named:
        return pool, ""
    order = list(getattr(estimate, "order", [])) if ordered and uses else []
    said = ", ".join(f"{r} x{uses[r]}" if uses else r for r in (uses or estimate.relations))
    if order:
        said += f"; in the question's order {' -> '.join(order)}"

    def fits(option: Any) -> bool:
        if option.relation not in named:
            return False
        if not uses:
            return True
        walked = [structure[n].relation for n in structure.path_from_root(option.node_id)[1:]]
        return plan_allows(walked, option.relation, uses, order)

    kept = [o for o in pool if fits(o)]
    if not kept and deep_enough:
        return [], (f"search stopped: a path is as deep as the question names and no expansion along the "
                    f"relations it names ({said}) is left")
    if not kept or len(kept) == len(pool):
        return pool, ""
    return kept, f"expansions along the relations the question names ({said}): {len(kept)} of {len(pool)} offered"


def _keep_deep_answers(options: list, structure: AbstractStructure, min_depth: int) -> tuple[list, list[str]]:
    """The answer positions as deep as the hops the question names (or the deepest there are), and a note.

    A node one hop from the root answers a 1-hop question; when the question
    names three hops and the search reached three, the entities one hop out
    (the film's director, where the question asks for his films' years) are
    the path's way there, not its end.  `min_depth` 1 keeps every option.
    """
    if min_depth <= 1 or not options:
        return options, []
    deepest = max(structure[o.node_id].depth for o in options)
    target = min(min_depth, deepest)
    kept = [o for o in options if structure[o.node_id].depth >= target]
    if len(kept) == len(options):
        return options, []
    return kept, [f"answer positions at depth >= {target} offered (the question names about {min_depth} "
                  f"hop(s)): {len(kept)} of {len(options)}"]


def _candidate(opt, kept: bool, extra: dict[str, Any]) -> Candidate:
    return Candidate(label=opt.text, score=round(opt.logprob, 6), prob=round(opt.prob, 6), kept=kept, extra=extra)


def _path_counts(s: AbstractStructure, node_id: str) -> dict[str, int]:
    """How many root-to-entity paths of G_k reach each entity at ``node_id``."""
    counts = {s.root_id: 1}
    for nid in s.path_from_root(node_id)[1:]:
        nxt: dict[str, int] = {}
        for link in s[nid].links:
            nxt[link.entity] = nxt.get(link.entity, 0) + counts.get(link.parent_entity, 0)
        counts = nxt
    return counts


def _chain_to(s: AbstractStructure, node_id: str, entity: str) -> list[ChainTriplet]:
    """One path of G_k from the start entity to ``entity``, as triplets in graph direction."""
    out: list[ChainTriplet] = []
    current, nid = entity, node_id
    while s[nid].parent is not None:
        node = s[nid]
        link = next(l for l in node.links if l.entity == current)
        if node.inverse:
            head, tail = current, link.parent_entity
        else:
            head, tail = link.parent_entity, current
        out.append(ChainTriplet(head=head, relation=node.relation or "", tail=tail, triplet_id=link.triplet_id, in_graph=True))
        current, nid = link.parent_entity, node.parent
    return out[::-1]


SPEC = MethodSpec("reads", _run, ReadsParams,
                  "READS: discriminative search / prune / answer scored by log-probabilities")
