"""RoK: Reasoning on Efficient Knowledge Paths (re-implementation of Algorithm 1).

Three model calls (the paper's promise):

1. ``rok.cot``      the model answers step by step; ``rok.link`` links the
                    entities it and the question mention (key entities);
2. ``rok.paths``    all paths of at most ``hops`` between key entities,
                    pairwise in order (bounded by ``max_paths`` per pair);
   ``rok.pagerank`` PageRank over the path subgraph, buckets by key-entity
                    count, top-k by mean PageRank;
   ``rok.branches`` first-order neighbour branches of the chosen paths, all
                    judged for relevance in ONE call;
3. ``rok.answer``   the answer from main paths plus kept branches, linked
                    back to graph entities.

Parameters: `RokParams`.
"""

from __future__ import annotations

import dataclasses
import re
import time
from dataclasses import dataclass
from typing import Any, ClassVar

from rapidfuzz import fuzz, process

from .. import progress
from ..graph.knowledge_graph import KnowledgeGraph
from ..graph.linking import normalize_name, resolve_entity
from ..models.generation import GenerationConfig
from ..parameters import MethodParams, param, preset_param
from ..reading.guidance import (agree_param, entity_free_param, cover_param, describe_languages_param, describe_param, distinct_param, domain_words_param, horizon_param,
                               answer_kind_param, every_relation_param, one_arrow_param, joint_param, listed_param, meet_param, order_param, phrase_param, quick_param, read_question,
                               kind_look_param, look_param, read_back_param, reader_param, stop_param, sure_param)
from ..rok import prompts
from ..rok.branches import SIBLING_RULES, Branch, candidate_branches, numbered_list, parse_relevance
from ..rok.key_entities import find_key_entities
from ..rok.paths import KGPath, PathSearchResult, neighbourhood_paths, pairwise_paths
from ..rok.ranking import rank_paths, subgraph_pagerank
from ..trace.faithfulness import check_chains, ground_chain
from ..trace.schema import Answer, Candidate, ChainTriplet, ModelCall, Step
from .base import MethodRequest, MethodSpec
from .recorder import TraceRecorder

@dataclass(frozen=True)
class RokParams(MethodParams):
    hops: int = param(2, "Longest path (in triplets) between key entities.", min=1, max=4)
    auto_hops: bool = param(True, "Raise hops to the hops the question's reading says (kgqa_core.reading); noted.",
                            advanced=True)
    max_paths: int = param(200, "Paths kept per pair of key entities.", min=1, max=10000, advanced=True)
    top_k: int = param(5, "Main paths chosen by mean PageRank.", min=1, max=50)
    damping: float = param(0.85, "PageRank damping factor.", min=0.01, max=0.99, advanced=True)
    max_key_entities: int = param(6, "Key entities linked from the question and the chain of thought.",
                                  min=1, max=50, advanced=True)
    min_link_score: float = param(0.65, "Lowest lexical score that links a mention to an entity.",
                                  min=0.0, max=1.0, advanced=True)
    embed_threshold: float = param(0.8, "Lowest embedding similarity that links a mention.", min=0.0, max=1.0,
                                   advanced=True)
    fanout: int = param(3, "Neighbour branches listed per path entity.", min=1, max=100, advanced=True)
    max_listed: int = param(8, "Tails listed per branch before it is summarised.", min=1, max=100, advanced=True)
    max_branches: int = param(40, "Branches judged in the one relevance call.", min=1, max=500, advanced=True)
    sibling_rule: str = param("compact", "How branches that run along a main path are shown.",
                              choices=SIBLING_RULES, advanced=True)
    max_group: int = param(100, "Triplets one hub branch may group.", min=1, max=10000, advanced=True)
    cot_max_tokens: int = param(128, "Tokens of the chain of thought.", min=1, max=2048, advanced=True)
    filter_max_tokens: int = param(64, "Tokens of the branch relevance answer.", min=1, max=1024, advanced=True)
    answer_max_tokens: int = param(48, "Tokens of the answer line.", min=1, max=512, advanced=True)
    use_embedder: bool = param(True, "Link key entities with the sentence embedder too (else lexical only).",
                               advanced=True)
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

    PRESETS: ClassVar[dict[str, dict[str, Any]]] = {"paper": {"auto_hops": False, "reader": "none", "describe_relations": False, "describe_other_languages": False}}


MAX_PATH_CANDIDATES_SHOWN = 60  # candidates listed in the PageRank step (all ids are in extra.paths)


class _Calls:
    """Runs generations and returns each with its trace record (the recorder counts it from the step)."""

    def __init__(self, request: MethodRequest, rec: TraceRecorder) -> None:
        self.model = request.model
        self.rec = rec

    def generate(self, purpose: str, user: str, max_new_tokens: int, prefix: str = "",
                 stop: tuple[str, ...] = (), non_empty_start: bool = False) -> tuple[str, ModelCall, Any]:
        prompt = self.model.chat_prompt(user, system=prompts.SYSTEM) + prefix
        processor = _NonEmptyStart(self.model) if non_empty_start else None
        gen = self.model.generate(prompt, GenerationConfig(max_new_tokens, stop_strings=stop, logits_processor=processor))
        return gen.text, self.model.call_record(purpose, gen, prompt), gen


class _NonEmptyStart:
    """Logits processor: the first generated token must carry visible text.

    The answer is read from one line after ``Answer:``; a small model that
    opens with a newline or end-of-turn would otherwise stop with an empty
    answer.  Only the first position is touched (greedy argmax is re-taken
    after masking blank tokens), so the rest of the decode is the model's.
    """

    bans_blank_first_token = True  # what it does, so a model server can do the same (ServerBackend.generate)

    def __init__(self, model: Any, tries: int = 32) -> None:
        self.model = model
        self.tries = tries

    def __call__(self, generated: list[int], logits: Any) -> Any:
        if generated:
            return logits
        logits = logits.clone()
        eos = getattr(self.model, "eos_ids", set())
        for _ in range(self.tries):
            best = int(logits.argmax())
            if best not in eos and self.model.decode([best]).strip():
                break
            logits[best] = float("-inf")
        return logits


def _step(rec: TraceRecorder, step: Step, started: float) -> Step:
    step.seconds = round(time.perf_counter() - started, 4)
    return rec.step(step)


def _path_triplets(graph: KnowledgeGraph, path: KGPath) -> str:
    """A path as its triplets in their real direction (``h -> r -> t | ...``)."""
    return " | ".join(graph.triplet(t).linearized() for t in path.triplet_ids)


def run(request: MethodRequest, p: RokParams, rec: TraceRecorder) -> None:
    """Answer ``request.question`` with RoK; every stage is a streamed trace step."""
    trace = rec.trace
    graph = request.graph
    calls = _Calls(request, rec)

    # ---- 1. CoT expansion -------------------------------------------------
    progress.stage("stage 1 of 6: chain of thought (key entities)")
    t0 = time.perf_counter()
    cot_text, cot_call, cot_gen = calls.generate("rok.cot", prompts.cot_user(request.question), p.cot_max_tokens)
    embedder = None
    if p.use_embedder:
        try:
            from ..graph.embeddings import load_embedder

            embedder = load_embedder()
        except Exception as exc:  # optional: linking stays lexical
            trace.notes.append(f"embedder failed to load ({exc}); lexical linking only")
    _step(rec, Step(
        index=0, kind="rok.cot", title="Chain of thought (key-entity expansion)",
        model_text=cot_text, model_calls=[cot_call],
        tokens_in=cot_gen.prompt_tokens, tokens_out=cot_gen.output_tokens,
    ), t0)

    progress.stage("stage 2 of 6: linking key entities to the graph")
    t0 = time.perf_counter()
    keys = find_key_entities(
        request.question, cot_text, graph, request.topic_entities, embedder,
        max_key_entities=p.max_key_entities, min_link_score=p.min_link_score,
        embed_threshold=p.embed_threshold,
    )
    key_entities = keys.key_entities
    link_cands = [
        Candidate(
            label=f"[{l.source}] {l.mention} → {l.entity}" if l.entity else f"[{l.source}] {l.mention} (not linked)",
            score=round(l.score, 4), kept=l.entity in key_entities if l.entity else False,
            extra=l.as_dict(),
        )
        for l in keys.links
    ]
    trace.notes.extend(keys.notes)
    _step(rec, Step(
        index=0, kind="rok.link", title=f"Linked {len(key_entities)} key entities",
        candidates=link_cands, added_entities=list(key_entities),
        choice=", ".join(key_entities),
        note="; ".join(keys.notes),
        extra={
            "key_entities": list(key_entities),
            "links": [l.as_dict() for l in keys.links],
            "unlinked": [l.mention for l in keys.unlinked],
            "embedder": keys.embedder or "lexical only",
        },
    ), t0)

    # ---- 2. main reasoning paths ------------------------------------------
    progress.stage("stage 3 of 6: paths between the key entities")
    t0 = time.perf_counter()
    search: PathSearchResult
    if p.auto_hops:
        reading = read_question(request, p, rec, request.topic_entities or key_entities[:1])
        if reading.read and reading.hops > p.hops:
            trace.notes.append(reading.note("hops", reading.hops))
            if isinstance(trace.parameters, dict):
                trace.parameters["hops"] = reading.hops
            p = dataclasses.replace(p, hops=reading.hops)
    if len(key_entities) >= 2:
        search = pairwise_paths(graph, key_entities, p.hops, p.max_paths)
        if not search.paths:
            fallback = neighbourhood_paths(graph, key_entities[:1], p.hops, p.max_paths)
            fallback.notes.insert(0, "no path of at most {} hops joins any two key entities; using paths out of {!r}".format(
                p.hops, key_entities[0]))
            fallback.pairs = search.pairs + fallback.pairs
            search = fallback
        else:
            # A question entity no path reaches would leave the paths to CoT
            # guesses alone; its own neighbourhood keeps it in the evidence.
            on_paths = {e for pth in search.paths for e in pth.entities}
            stranded = [e for e in keys.question_entities if e not in on_paths]
            if stranded:
                extra = neighbourhood_paths(graph, stranded, p.hops, p.max_paths)
                search.paths.extend(extra.paths)
                search.pairs.extend(extra.pairs)
                search.notes.append(
                    f"question entities on no path between key entities: {', '.join(stranded)}; "
                    f"added paths of at most {p['hops']} hops out of them")
                search.notes.extend(extra.notes)
    elif len(key_entities) == 1:
        search = neighbourhood_paths(graph, key_entities, p.hops, p.max_paths)
        search.notes.insert(0, f"only one key entity linked: using paths of at most {p['hops']} hops out of it")
    else:
        search = PathSearchResult(mode="none", notes=["no key entity linked: no paths"])
    paths = search.paths
    sub_ids = search.triplet_ids
    trace.notes.extend(n for n in search.notes if "cap hit" in n)
    _step(rec, Step(
        index=0, kind="rok.paths",
        title=f"{len(paths)} paths ({search.mode}), {len(sub_ids)} triplets",
        subgraph_after=sub_ids, added_entities=sorted(graph.entities_of(sub_ids)),
        note="; ".join(search.notes),
        extra={
            "key_entities": list(key_entities),
            "paths": [pth.triplet_ids for pth in paths],
            "path_entities": [list(pth.entities) for pth in paths],
            "pairs": [{"source": pr.source, "target": pr.target, "paths": pr.n_paths, "capped": pr.capped}
                      for pr in search.pairs],
            "mode": search.mode, "capped": search.capped,
        },
    ), t0)

    # ---- PageRank buckets ----------------------------------------------------
    progress.stage("stage 4 of 6: PageRank over the paths")
    t0 = time.perf_counter()
    pagerank = subgraph_pagerank(graph, sub_ids, p.damping)
    relevance = None
    if keys.question_entities and paths:  # which of the question entity's own paths it asks about
        from ..graph.hub_caps import relation_relevance

        relations = sorted({t.relation for t in graph.triplets_by_ids(sub_ids)})
        # the question's words first ("directed" -> directed_by), the embedding for other wordings ("author")
        words = relation_relevance(request.question, relations)
        meaning = relation_relevance(request.question, relations, embedder) if embedder is not None else {}
        relevance = {r: words.get(r, 0.0) + meaning.get(r, 0.0) for r in relations}
    ranking = rank_paths(paths, key_entities, pagerank, p.top_k, must_cover=keys.question_entities,
                         relation_relevance=relevance, graph=graph)
    selected = ranking.selected
    main_ids: list[int] = []
    for r in selected:
        for tid in r.path.triplet_ids:
            if tid not in main_ids:
                main_ids.append(tid)
    shown = ranking.ranked[:MAX_PATH_CANDIDATES_SHOWN]
    _step(rec, Step(
        index=0, kind="rok.pagerank",
        title=f"Top {len(selected)} of {len(paths)} paths by PageRank bucket",
        subgraph_before=sub_ids, subgraph_after=main_ids,
        candidates=[
            Candidate(label=r.path.text(graph), score=round(r.mean_pagerank, 6), kept=r.selected,
                      extra={"path": r.index, "bucket": r.key_count, "triplet_ids": r.path.triplet_ids})
            for r in shown
        ],
        choice=" || ".join(r.path.text(graph) for r in selected),
        note=(f"{len(ranking.ranked) - len(shown)} lower-ranked paths not listed" if len(ranking.ranked) > len(shown) else ""),
        extra={
            "pagerank": {e: round(s, 6) for e, s in sorted(pagerank.items(), key=lambda kv: -kv[1])},
            "buckets": {str(k): v for k, v in sorted(ranking.buckets.items(), reverse=True)},
            "selected": [r.index for r in selected],
            # the question entity's paths about the relation it asks for, read first (rank_paths)
            "asked": [r.index for r in selected if r.asked],
            "paths": [r.path.triplet_ids for r in selected],
            "damping": p.damping,
        },
    ), t0)

    # ---- neighbour branches (one call) ---------------------------------------
    progress.stage("stage 5 of 6: choosing neighbour branches")
    t0 = time.perf_counter()
    main_paths = [r.path for r in selected]
    if not main_paths and key_entities:
        # no path at all (isolated key entity): branches hang from the key entities themselves
        main_paths = [KGPath((e,), ()) for e in key_entities if graph.has_entity(e)]
    cands = candidate_branches(graph, main_paths, fanout=p.fanout, max_listed=p.max_listed,
                               max_branches=p.max_branches, sibling_rule=p.sibling_rule,
                               max_group=p.max_group)
    labels = [b.label for b in cands.branches]
    kept_branches: list[Branch] = []
    branch_calls: list[ModelCall] = []
    branch_text = ""
    judgement = None
    tin = tout = 0
    if labels:
        branch_text, call, gen = calls.generate(
            "rok.branches", prompts.branch_user(request.question, numbered_list(labels)), p.filter_max_tokens)
        branch_calls.append(call)
        tin, tout = gen.prompt_tokens, gen.output_tokens
        judgement = parse_relevance(branch_text, labels)
        kept_branches = [cands.branches[i - 1] for i in judgement.kept]
    notes = list(cands.notes)
    if judgement is not None and judgement.invalid:
        notes.append(f"{len(judgement.invalid)} items the model named are not candidates and were ignored")
    if not labels:
        notes.append("no neighbour branches to judge: relevance call skipped")
    kept_ids = [t for b in kept_branches for t in b.triplet_ids]
    evidence_ids = main_ids + [t for t in kept_ids if t not in main_ids]
    _step(rec, Step(
        index=0, kind="rok.branches",
        title=f"Kept {len(kept_branches)} of {len(labels)} neighbour branches",
        subgraph_before=main_ids, subgraph_after=evidence_ids,
        added_entities=sorted(graph.entities_of(kept_ids) - graph.entities_of(main_ids)),
        candidates=[
            Candidate(label=f"{i}. {b.label}", score=1.0 if b in kept_branches else 0.0,
                      triplet_id=b.triplet_ids[0] if len(b.triplet_ids) == 1 else None,
                      triplet=graph.triplet(b.triplet_ids[0]).as_tuple if len(b.triplet_ids) == 1 else None,
                      kept=b in kept_branches,
                      extra={"triplet_ids": b.triplet_ids, "anchor": b.anchor, "hidden": b.hidden})
            for i, b in enumerate(cands.branches, start=1)
        ],
        model_text=branch_text, model_calls=branch_calls, tokens_in=tin, tokens_out=tout,
        note="; ".join(notes),
        extra={
            "kept": judgement.kept if judgement else [],
            "rejected": judgement.rejected if judgement else [],
            "invalid": judgement.invalid if judgement else [],
            "invalid_count": len(judgement.invalid) if judgement else 0,
            "dropped_siblings": cands.dropped_siblings,
            "truncated": cands.truncated,
            "hub_groups": cands.hub_groups,
        },
    ), t0)

    # ---- 3. answer ------------------------------------------------------------
    progress.stage("stage 6 of 6: answering from the paths")
    t0 = time.perf_counter()
    path_texts = [_path_triplets(graph, pth) for pth in main_paths if pth.steps]
    user = prompts.answer_user(request.question, path_texts, [b.label for b in kept_branches])
    answer_text, call, gen = calls.generate("rok.answer", user, p.answer_max_tokens,
                                            prefix=prompts.ANSWER_PREFIX, stop=("\n",), non_empty_start=True)
    evidence_entities = graph.entities_of(evidence_ids) | set(key_entities)
    answers = link_answers(answer_text, graph, evidence_entities, exclude=set(request.topic_entities))
    chains, chain_scores, cited = _chains(graph, selected, kept_branches, answers, key_entities)
    trace.answers = answers
    trace.raw_output = answer_text.strip()
    trace.chains = chains
    trace.chain_scores = chain_scores
    with progress.phase(progress.ANSWERS):
        trace.faithfulness = check_chains(graph, chains, list(key_entities) or request.topic_entities, answers)
    _step(rec, Step(
        index=0, kind="rok.answer", title="Answer from main paths and kept branches",
        subgraph_before=evidence_ids, subgraph_after=evidence_ids,
        model_text=answer_text, model_calls=[call], tokens_in=gen.prompt_tokens, tokens_out=gen.output_tokens,
        choice=" | ".join(a.entity or a.text for a in answers),
        extra={
            "answers": [{"text": a.text, "entity": a.entity, "in_graph": a.in_graph, "score": a.score} for a in answers],
            "cited": cited,
            "evidence": evidence_ids,
        },
    ), t0)

    trace.extra = {
        "key_entities": list(key_entities),
        "paths": [r.path.triplet_ids for r in selected],
        "pagerank": {e: round(s, 6) for e, s in sorted(pagerank.items(), key=lambda kv: -kv[1])[:50]},
        "buckets": {str(k): len(v) for k, v in sorted(ranking.buckets.items(), reverse=True)},
        "path_mode": search.mode,
        "paths_capped": search.capped,
        "branches_kept": kept_ids,
        "cited": cited,
        "faithfulness_topics": "key entities",
    }
    trace.notes.append("faithfulness is checked from the key entities (RoK's seeds), not only the topic entities")


# ---------------------------------------------------------------- answers
_SPLIT = re.compile(r"\s*(?:\|| ; |;|\n)\s*")
_SOFT_SPLIT = re.compile(r"\s*(?:,|\band\b|\bor\b)\s*")


@progress.in_phase(progress.ANSWERS)
def link_answers(text: str, graph: KnowledgeGraph, evidence: set[str], exclude: set[str] = frozenset(),
                 limit: int = 10) -> list[Answer]:
    """The model's answer line as answers linked to graph entities where possible.

    Evidence entities are preferred (the answer should come from the shown
    paths); then any graph entity (``resolve_entity``).  When nothing
    resolves, evidence entity names found inside the text are used (a small
    model often answers with a sentence); otherwise the raw text is kept as
    an answer outside the graph.
    """
    from ..answers.chain_entities import map_to_chain

    # the prompt's "a | b" format, written as a table row by the model: "| 2007 |" is the answer 2007
    line = text.strip().strip("*| \t\n")
    line = re.sub(r"^(the )?answers?( is| are)?\s*[:\-]?\s*", "", line, flags=re.I).strip("*| \t\n")
    if not line:
        return []
    ev = sorted(evidence)
    ev_keys = {normalize_name(e): e for e in ev}

    def resolve(part: str) -> tuple[str | None, float]:
        part = part.strip(" \t\"'`*.,;:!?()[]")
        if not part:
            return None, 0.0
        key = normalize_name(part)
        if key in ev_keys:
            return ev_keys[key], 1.0 if ev_keys[key] == part else 0.95
        if ev and len(key) >= 4:
            best = process.extractOne(key, list(ev_keys), scorer=fuzz.ratio, score_cutoff=88.0)
            if best is not None:
                return ev_keys[best[0]], round(best[1] / 100.0, 4)
        entity, score = resolve_entity(part, graph)
        if entity is None and ev and resolve_entity(part, graph, threshold=1.0)[0] is None:
            # the evidence's entity in the model's words: a number with separators, a name without its
            # qualifier, another word ending (the rules DoG's answers follow, kgqa_core.answers.chain_entities)
            match = map_to_chain(part, ev, levels=("number", "qualified", "inflection"))
            if match is not None:
                return match.entity, match.score
        return entity, score

    # The prompt asks for "a | b": with a separator present, only an exact name may span it, so
    # "Sex and the City | 2008" is two answers, not a fuzzy match for the film "Sex and the City 2".
    if _SPLIT.search(line):
        exact = ev_keys.get(normalize_name(line))
        whole = (exact, 1.0) if exact else (None, 0.0)
    else:
        whole = resolve(line)
    parts: list[str]
    if whole[0] is not None:
        parts = [line]
    else:
        parts = [x for x in _SPLIT.split(line) if x.strip()]
        expanded: list[str] = []
        for part in parts:
            if resolve(part)[0] is None and _SOFT_SPLIT.search(part):
                expanded.extend(x for x in _SOFT_SPLIT.split(part) if x.strip())
            else:
                expanded.append(part)
        parts = expanded
    out: list[Answer] = []
    seen: set[str] = set()
    unresolved: list[str] = []
    for part in parts:
        ent, score = resolve(part)
        if ent is None:
            unresolved.append(part.strip())
            continue
        if ent not in seen:
            seen.add(ent)
            out.append(Answer(text=part.strip(), entity=ent, in_graph=True, score=score))
    if not out:
        folded = " " + normalize_name(line) + " "
        hits = [e for k, e in ev_keys.items() if len(k) >= 3 and f" {k} " in folded and e not in exclude]
        # longest names first, dropping names contained in a longer hit
        hits.sort(key=len, reverse=True)
        for e in hits:
            if not any(normalize_name(e) in normalize_name(h) for h in seen):
                seen.add(e)
                out.append(Answer(text=e, entity=e, in_graph=True, score=0.5))
    if not out:
        out = [Answer(text=u, entity=None, in_graph=False) for u in unresolved[:limit]]
    # A question's own entity is rarely its answer; models echo it first ("Sex and the City | 2008").
    # It is kept, but after the others, so it cannot take the first place (Hits@1) from them.
    if len(out) > 1:
        out.sort(key=lambda a: a.entity in exclude)
    return out[:limit]


def _chains(graph: KnowledgeGraph, selected, kept_branches: list[Branch], answers: list[Answer],
            key_entities: list[str]):
    """Chains the answer cites: main paths, then kept branches hung from their path.

    Chains that reach an answer entity come first; ``cited`` lists the
    evidence triplets touching an answer entity.
    """
    answer_ents = {a.entity for a in answers if a.entity}
    rows: list[tuple[list[int], float]] = []
    for r in selected:
        rows.append((r.path.triplet_ids, r.mean_pagerank))
    for b in kept_branches:
        host = next((r for r in selected if b.anchor in r.path.entities), None)
        prefix: list[int] = []
        score = 0.0
        if host is not None:
            idx = host.path.entities.index(b.anchor)
            prefix = host.path.triplet_ids[:idx]  # from the path's start up to the anchor
            score = host.mean_pagerank
        for tid in b.triplet_ids:
            rows.append((prefix + [tid], score))
    def reaches(ids: list[int]) -> bool:
        return bool(answer_ents & graph.entities_of(ids))
    rows.sort(key=lambda row: (not reaches(row[0]),))
    chains: list[list[ChainTriplet]] = []
    scores: list[float] = []
    for ids, score in rows:
        chains.append(ground_chain(graph, graph.triplets_by_ids(ids), key_entities))
        scores.append(round(score, 6))
    cited = sorted({tid for ids, _ in rows for tid in ids
                    if answer_ents & {graph.triplet(tid).head, graph.triplet(tid).tail}})
    return chains, scores, cited


SPEC = MethodSpec("rok", run, RokParams,
                  "RoK: CoT key-entity expansion, n-hop paths, PageRank, branch filtering")
