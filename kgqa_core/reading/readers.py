"""The question readers: the graph's own paths chosen by the model, by the graph's lexicon alone, or by wording rules.

``paths`` (the default): the relation paths that exist from the topic
entities (`relation_paths`) are ranked by how close their relation names
(and the user's aliases for them, `RelationVocabulary`) come to the
question's wording in sentence-embedding space, and the model chooses among
the best few as one READS-style option choice scored by log-probabilities
(`kgqa_core.reads.scoring.ModelChooser`: debiased for length and listing
order).  Nothing is generated freely and nothing comes from a word list:
the plan is a path the graph holds, chosen by the model's reading of the
question.  The model's probabilities are then weighed by each walk's hop
alignment (`alignment.hop_alignment`: every hop matched to a different word
of the question), so a walk with hops the question never names loses to
one whose hops it does name (``align=0`` leaves the model's choice alone).
Its confidence is the resulting probability of the chosen relation
sequence.

The model reads in two looks (``quick``): first each walk is scored as the
model's own reply to the question, with no list (one short prompt, no
listing order to debias); when that reading, weighed by the alignment, is
at least ``quick`` sure (`QUICK_SURE_AT`), it stands.  Only a less sure
one lists the walks and has the model choose among them in two listing
orders, three to four times the prompt (``quick=0`` always lists them, the
reader before); for one entity's walks the second order is read only when
the first order's choice is not the quick look's walk or less sure than
``quick`` (``agree``, `AGREE`: two looks that agree settle the reading).

A question that names two or more entities names a walk from each ("the
borders of A and the borders of B"), and a word of it names a hop of one
walk only; scored one walk at a time, A's best walk takes every word (two
hops of borders).  So the walks are chosen together (``joint``,
`joint_choice`): each entity's likeliest walks are combined, and a
combination is scored by the model's probability of each walk times its
hops' alignment matched as one set, every word to one hop.

``lexicon``: the same ranking without the model (no model call); its
confidence is a softmax over the similarities, so it is rarely sure.

``wording``: the word-form rules of `kgqa_core.reading.wording`, written
from MetaQA's question templates; kept for comparison, not a default.

``none``: no reading (the papers' behaviour).
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..models.interface import PromptText
from .alignment import (COVER_WEIGHT, ENTITY_KIND_WEIGHT, ORDER_COST, PHRASE_GAIN, SPREAD_WEIGHT, answer_nouns,
                        described_nouns, domain_words, entity_kinds_text, hop_alignment, hop_words_text, kind_nouns,
                        joint_alignment, masked_question, plan_words, weigh)
from .examples import graph_examples
from .horizon import horizon_hop
from .paths import relation_paths
from .reading import QuestionReading, RelationPlan, uses_of
from .vocabulary import RelationVocabulary, embedded_text

READERS = ("paths", "lexicon", "wording", "none")
PER_LENGTH = 4  # the best paths of each length the model is offered
# The share of the offered places that go to the walks whose hops match the question's words best (`offered`).
ALIGNED_SHARE = 1 / 3
MAX_OPTIONS = 12
_LEXICON_TEMPERATURE = 0.05
# How much a walk's hop alignment (`alignment.hop_alignment`) weighs against the model's choice: a walk whose
# hops match question words 0.1 better in all gets exp(ALIGN_WEIGHT * 0.1) times the model's odds.  Chosen
# (with alignment.BASELINE) on recorded readings of 45 questions of the four dev domains, among 1-16 (and
# 0.25-0.45); 8 to 16 read alike there, 8 lost nothing on any domain (docs/history/benchmarks-2026.md,
# "Question reading").
ALIGN_WEIGHT = 8.0
# How sure the quick look (each walk scored as the model's reply to the question, no list) must be to stand without
# the listed choice.  On 35 dev questions of four domains (benchmarks/reading.py, docs/history/benchmarks-2026.md,
# "Question reading") thresholds from 0.6 to 0.95 all reached gold at least as often as listing always (30-31 of
# 35); 0.9 kept the quick look for 19 of them.
QUICK_SURE_AT = 0.9
# A question naming several entities: each one's likeliest walks (by the model, weighed by alignment) are combined
# with the others' (4 x 4 combinations for two entities; at most three entities are combined).
PER_TOPIC = 4
MAX_JOINED = 3
# A question naming several entities asks for what they share ("which of X's students is from Norway"): a
# combination of walks that reach no entity in common cannot answer it, and it is ranked as if its odds were
# multiplied by exp(-MEET_PENALTY) (0.05); its probability, and the reading's sureness, stay as they were.
# Soft: when no combination meets, all pay alike and nothing changes.
MEET_PENALTY = 3.0
# ... and the walks the model is offered hold the best-aligned pair that does meet: each entity's MEET_CANDIDATES
# best-aligned walks of up to MEET_HOPS hops are tried against each other.
MEET_CANDIDATES = 8
MEET_HOPS = 2
# The model scores each walk as the reply to the whole question, and for a question naming two entities no walk
# from one of them is that reply ("which of X's students is from Norway": it likes walks from X that go on for
# three hops); in the joint choice its log-odds count JOINT_MODEL_WEIGHT of themselves (a temperature of 5), the
# hops' alignment to the question's words as for one entity.  And the walks that join two entities through
# their answer are short: each hop past one per walk multiplies a combination's odds by exp(-SHORTER) (in its
# probability too, unlike MEET_PENALTY: replayed on the readings below, no reading it made sure was wrong, where
# meeting made sure readings of wrong pairs).  On the 25 two-entity dev questions (geography's and
# MetaQA's generated ones, the made-up university graph's), the joint reading reached the answer for 24 instead
# of 11 (docs/history/benchmarks-2026.md, "The model's odds and short walks in a joint choice"; replayed: the
# model weight 0.2 alone 19, the cost alone 13).
JOINT_MODEL_WEIGHT = 0.2
SHORTER = 1.0
# In the quick look a walk is scored as the model's reply, and where one walk is another one cut short, the model's
# choice between ending the reply there and going on is a reply's length, not only its reading: it liked "Michigan
# -southwest-> Illinois -legislature-> Illinois General Assembly" 27 times as much as the same walk going on to the
# party "which party does the legislature of the southwest of Michigan belong to?" asks for, so the short walk stood
# 92% sure.  There the log-odds of ending against going on count STOP_WEIGHT of themselves (`temper_stops`); other
# choices between walks are the model's own, and so are all of them for walks from two entities (the joint choice
# weighs the model's odds less and shorter walks first, `JOINT_MODEL_WEIGHT`, `SHORTER`: tempered on top of that, a
# geography question read "new jersey -> borders -> country" for New Jersey's neighbours).  Replayed on the recorded
# quick and listed looks of 119 one-entity dev questions of seven graphs (docs/history/benchmarks-2026.md, "Where
# a walk ends"):
# the reading reached gold for 88 instead of 85 at 0.3-0.5 (three DBpedia walks one hop short, now listed), none
# lost; 0.2 lost one, 0 two; 1 is the model's choice as it was.  With the 135M model it can cost: see that section.
STOP_WEIGHT = 0.5
# An unsure quick look lists the walks, in two orders to cancel out a preference for a place in the list; with AGREE,
# the second order is not read when the first one's choice (weighed by the alignment, as always) is the quick look's
# walk and at least as sure as the quick look must be to stand (QUICK_SURE_AT): two looks that agree settle it, at
# half the list's tokens.  Walks from one entity only.  A less sure first order is not settled: one order is sharper
# than two, and a reading it made 54% sure (the second order would have left it at 41%) guided a MetaQA chain to a
# wrong answer (docs/history/benchmarks-2026.md, "Two looks that agree").
AGREE = True
# A walk over the same relations as one already listed that reaches the same entities (a relation the graph holds
# both ways, "A borders B" and "B borders A", walked the other way round: `paths.relation_paths`' ``twin_of``) is the
# same walk in other words: with DISTINCT an unsure first look's list holds it once (`distinct_walks`), and its place
# is not filled by another walk, so the model chooses among the same walks for fewer tokens.  Off by default: on the
# 24 geography dev questions (GeoQuery's `borders` is held both ways) the list read 36% fewer prompt tokens a question
# but DoG answered 21 against 23 (two unsure readings moved across the guidance's bar, `reading_sure_at`, one each
# way: a list without its repeats is sharper); on the family graph (`spouse` both ways) the same 13 of 14
# (docs/history/benchmarks-2026.md, "A walk listed once").
DISTINCT = False
# Where the model is told what some of the walks' relations mean (the user's vocabulary, or its own descriptions of
# names the embedder cannot read, `describe_relations`), the first look's prompt names every relation of its walks,
# the told ones with their meaning, so that no relation stands out to be copied for being the only one named
# (`_relations_told`).  False: the told relations alone (the prompt before it).  Measured in docs/benchmarks.md,
# "Every relation named".
EVERY_RELATION = True
# The first look's replies write a hop walked backwards with the forward arrow and "(reverse)" after its relation
# (`reply_text`), so the walks part at the relation's name, not at the arrow: where one walk alone went forwards,
# the model's liking for the forward arrow went to it ("what unwanted reactions can Drovex Medica's medicines cause"
# read as `headquartered_in`, 99.5% sure).  On since measured with DoG (docs/benchmarks.md, "One arrow"): 109 of
# 124 dev questions of six graphs against 107, no answer lost.
ONE_ARROW = True
# Worked questions of the user's graph before the first look's question (`examples.graph_examples`, LPKG's idea);
# 0: none (the first look as measured everywhere else).
EXAMPLES = 0
# An unsure reading of a one-entity question (its best walk under READ_BACK_UNDER) weighs each of its READ_BACK_WALKS
# likeliest walks also by how likely the model finds the question's own words written after that walk (the noisy
# channel: log P(question | walk), times READ_BACK): a walk that leaves part of the question unsaid makes those words
# unlikely, which the reader's look from the question to the walk cannot see ("which subdivision does the south of
# the birth place of X belong to" read as birthPlace -> south, 62%).  0: off.  Measured in docs/benchmarks.md, "The
# question read back from its walks".
READ_BACK = 0.5
READ_BACK_WALKS = 3
READ_BACK_UNDER = QUICK_SURE_AT
READ_BACK_HEAD = "Each walk through a knowledge graph below is followed by the question it answers.\n\n"
# Places in the offer for the walks whose relations the model finds the question asks about (`relation_look`: each
# relation's log-probability after the question against with no question), so a walk whose relations the embedder
# misses as paraphrases ("licences" for distributed_under) is still scored by the model.  0: the offer is the
# embedder's and the alignment's alone.  Off: on the dev questions whose offer it changed, the reading reached gold
# for five more and three fewer (a walk added to the list moves a 1.5B's choice among the others too), and DoG
# answered 13 of the software graph's 18 with and without it (docs/benchmarks.md, "The model's relation look").
LOOK_PLACES = 0
# Where the quick look was unsure and the walks were listed, the reading's choice is the listed look's log-odds and
# the quick look's together, the quick look's counting this much (a product of two judges, `blended_choice`).  Why:
# the quick look scores each walk as a reply on its own, so one walk's odds against another do not move with what
# else is offered; the listed look's do (a 1.5B's choice among listed walks shifts when a walk is added or removed),
# but it sees the walks side by side.  0 (kept): the listed look alone.  0.5 read 31 of 52 listed dev questions
# right against the list's 36: an unsure quick look is the worse judge, and the list is there to correct it
# (docs/benchmarks.md, "The two looks together").  A reader option for benchmarks, not a method parameter.
BLEND = 0.0
# An unsure reading of a one-entity question whose answer noun ("which country") is known weighs its likeliest walks
# also by how likely the model finds that noun as the kind of thing each reaches, a few of its facts in the graph
# before it (`kind_look.kind_look`: log P(noun | facts, "<entity> is a"), times KIND_LOOK).  0: off.  At 1 the reading
# reached gold for 23 of the 41 dev questions it acted on against 18, none lost (docs/benchmarks.md, "The kind of
# thing each likely walk reaches"); but DoG end to end on those 41 answered 29 against 28 (4 gained, 3 lost: the
# right walk not among those looked at, a verb taken for the noun), so it stays off.
KIND_LOOK = 0.0
# The first look scores each walk only where the walks part at a relation (or at the walk's end), not where they part
# at an entity's name (`entity_free_ids`): each walk's text is the first walk the graph gave along its relations, so
# two walks can part at the name of the film each passes, and the model's liking for one title then decided between
# relations it never compared ("who are the directors of the movies written by Martin Goldsmith": the one walk through
# "The Narrow Margin" took all the probability of a title starting "The", 99.5% sure, against eleven through "Detour").
ENTITY_FREE = True


def lexicon_scores(question: str, topics: Sequence[str], plans: Sequence[RelationPlan],
                   vocabulary: RelationVocabulary | None = None, embedder: Any = None) -> list[float]:
    """Each plan's closeness to the question: the mean over its hops of its relation's similarity to the question.

    A relation's similarity is the cosine of sentence embeddings of its
    words (and the user's aliases) and of the question with its entities
    masked; without an embedder, the share of its content stems the question
    holds.  The mean, not the whole path's text, so a hop the question does
    not ask for costs a path as much as a hop it does ask for gains it.
    """
    from ..graph.hub_caps import content_stems

    q = masked_question(question, topics)
    relations = sorted({h.relation for p in plans for h in p.hops})
    texts = [embedded_text(r, vocabulary) for r in relations]
    if embedder is not None and relations:
        sims = embedder.encode(texts) @ embedder.encode([q])[0]
        score = {r: float(x) for r, x in zip(relations, sims)}
    else:
        qs = content_stems(q)
        score = {r: len(content_stems(t) & qs) / max(1, len(content_stems(t))) for r, t in zip(relations, texts)}
    return [sum(score[h.relation] for h in p.hops) / len(p.hops) for p in plans]


def shortlist(plans: Sequence[RelationPlan], scores: Sequence[float], per_length: int = PER_LENGTH,
              limit: int = MAX_OPTIONS) -> list[int]:
    """Indices of the plans offered to the model: the best `per_length` of each length, then the best overall."""
    order = sorted(range(len(plans)), key=lambda i: -scores[i])
    picked: list[int] = []
    for n in sorted({len(p.hops) for p in plans}):
        picked += [i for i in order if len(plans[i].hops) == n][:per_length]
    for i in order:
        if len(picked) >= limit:
            break
        if i not in picked:
            picked.append(i)
    return sorted(picked[:limit], key=lambda i: -scores[i])


def offered(plans: Sequence[RelationPlan], scores: Sequence[float], aligned: Sequence[float] | None,
            limit: int = MAX_OPTIONS, share: float = ALIGNED_SHARE) -> list[int]:
    """The walks the model chooses among: the lexicon's shortlist, and the best-aligned walks it missed.

    Without an alignment, the lexicon's `shortlist`.  With one, `share` of
    the places (a third; one per length first) go to the walks whose hops match the
    question's words best, so a walk the mean closeness ranks low (a short
    relation name next to a longer one) can still be chosen.  The rest is the
    shortlist cut to the places left, closest first, so a length the lexicon
    ranks low may keep only its best-aligned walk: sharing those places out by
    length first offered more one-hop walks, which the 1.5B then took for
    questions asking more (DoG 80 against 85 on the 101 dev questions it changed;
    docs/history/benchmarks-2026.md, "Every length's places in the offer").
    """
    if aligned is None:
        return shortlist(plans, scores, limit=limit)
    by_alignment = shortlist(plans, aligned, per_length=1, limit=max(1, int(limit * share + 1e-9)))
    rest = [i for i in shortlist(plans, scores, limit=limit) if i not in by_alignment]
    return by_alignment + rest[: limit - len(by_alignment)]


def _grouped(plans: Sequence[RelationPlan], probs: Sequence[float]) -> list[tuple[float, RelationPlan]]:
    """Plans with their probability summed over plans of the same topic and relation sequence (directions aside)."""
    total: dict[tuple[str, tuple[str, ...]], float] = {}
    best: dict[tuple[str, tuple[str, ...]], tuple[float, RelationPlan]] = {}
    for p, pr in zip(plans, probs):
        key = (p.topic, tuple(p.relations))
        total[key] = total.get(key, 0.0) + pr
        if key not in best or pr > best[key][0]:
            best[key] = (pr, p)
    out = [(total[k], _with_confidence(best[k][1], total[k])) for k in best]
    return sorted(out, key=lambda x: -x[0])


def _with_confidence(plan: RelationPlan, confidence: float) -> RelationPlan:
    from dataclasses import replace

    return replace(plan, confidence=float(confidence))


def joint_choice(picked: Sequence[RelationPlan], probs: Sequence[float], weighed: Sequence[float], question: str,
                 topics: Sequence[str], vocabulary: RelationVocabulary | None, embedder: Any, align: float,
                 phrase_gain: float = PHRASE_GAIN, per_topic: int = PER_TOPIC, cover: float = 0.0,
                 among: Sequence[str] = (),
                 spread: float | None = None, graph: Any = None, meet: float = MEET_PENALTY,
                 also: Sequence[RelationPlan] = (), ends: dict | None = None, shorter: float = SHORTER,
                 model_weight: float = JOINT_MODEL_WEIGHT,
                 order: float | None = None, kind: float | None = None) -> list[tuple[float, tuple[RelationPlan, ...]]]:
    """For a question whose walks leave from two or more of its entities: one walk per entity, chosen together.

    Each entity's `per_topic` likeliest walks (by `weighed`: the model's probability weighed by the walk's own
    alignment) are combined with the others'.  A combination scores the model's probability of each of its
    walks among its entity's walks (`probs`, renormalised per entity), times ``exp(align * a)`` where ``a`` is
    the combination's `joint_alignment`: its walks' hops matched to different words of the question, so a word
    names a hop of one entity's walk only (``cover`` and ``among``: what a relation-naming word left to no hop
    costs, judged against ``among``, as `joint_alignment`).  With `graph`, a combination whose walks reach no
    entity in common (other than the question's own) pays ``meet`` in log-odds (`MEET_PENALTY`): the question
    asks for what its entities share, so walks that never meet do not read it (the order changes; each
    combination's probability stays the model's and the alignment's, so the reading is no surer for it); each
    hop past one per walk costs a combination ``shorter`` in log-odds (`SHORTER`); the model's
    log-probabilities count ``model_weight`` of themselves (`JOINT_MODEL_WEIGHT`: it scored each walk as the
    reply to the whole question, which no walk from one entity is); ``order`` and ``kind``: as `joint_alignment`'s; the
    walks in `also` (the pair that meets, `meeting_pair`) join their entity's likeliest however the model ranks
    them (`ends`: where each walk ends, shared with `meeting_pair`, `walks_meet`).  Returns (probability, walks)
    best first, the probability a softmax over the combinations; [] when
    the walks leave from fewer than two entities.

    Examples
    --------
    >>> from kgqa_core.graph.embeddings import load_embedder
    >>> from kgqa_core.reading.reading import PlanHop, RelationPlan
    >>> one = lambda t, *rs: RelationPlan(t, tuple(PlanHop(r) for r in rs))  # noqa: E731
    >>> walks = [one("massachusetts", "borders", "borders"), one("massachusetts", "borders"), one("new york", "borders")]
    >>> best = joint_choice(walks, [0.6, 0.3, 0.1], [0.6, 0.3, 0.1], "the borders of massachusetts and the borders of "
    ...                     "new york", ["massachusetts", "new york"], None, load_embedder(), align=8.0)[0][1]
    >>> [p.text for p in best]
    ['massachusetts -> borders', 'new york -> borders']
    """
    by_topic: dict[str, list[tuple[float, float, RelationPlan]]] = {}
    for p, pr, w in zip(picked, probs, weighed):
        by_topic.setdefault(p.topic, []).append((w, pr, p))
    if len(by_topic) < 2:
        return []
    candidates = []
    for items in list(by_topic.values())[:MAX_JOINED]:
        z = sum(pr for _, pr, _ in items) or 1.0
        best = sorted(items, key=lambda x: -x[0])[:per_topic]
        best += [x for x in items if any(x[2] is a for a in also) and all(x[2] is not b[2] for b in best)]
        candidates.append([(pr / z, p) for _, pr, p in best])
    combos = list(itertools.product(*candidates))
    aligned = joint_alignment(question, topics, [[p for _, p in c] for c in combos], vocabulary, embedder,
                              phrase_gain=phrase_gain, cover=cover, among=among, spread=spread,
                              order=order, kind=kind) if align else None
    logits = [model_weight * sum(math.log(max(pr, 1e-12)) for pr, _ in c) + (align * aligned[i] if aligned else 0.0)
              for i, c in enumerate(combos)]
    from ..reads.scoring import softmax

    if shorter:  # two entities are joined through their answer: a short junction is the likelier reading
        logits = [x - shorter * sum(len(p.hops) - 1 for _, p in c) for x, c in zip(logits, combos)]
    probs = softmax(logits)
    order = probs
    if graph is not None and meet:
        # meeting decides the order, not how sure the reading is: a wrong pair that meets, made likelier only
        # because the others do not, must not start to guide the chain (a sure reading narrows its steps)
        met = walks_meet(graph, [[p for _, p in c] for c in combos], topics, ends)
        order = softmax([x - (0.0 if m else meet) for x, m in zip(logits, met)])
    ranked = sorted(range(len(combos)), key=lambda i: (-order[i], i))
    return [(probs[i], tuple(p for _, p in combos[i])) for i in ranked]


def walks_meet(graph: Any, combos: Sequence[Sequence[RelationPlan]], topics: Sequence[str],
               ends: dict | None = None) -> list[bool]:
    """Whether the walks of each combination reach some entity in common, other than the question's own.

    Each walk is followed as the reader walks (`paths.plan_ends`: the same capped neighbours and fan), once
    however many combinations hold it; `ends` (a dict the caller keeps) carries where each walk ends from one
    call to the next, so one reading follows each walk once.

    Examples
    --------
    >>> from kgqa_core.graph.knowledge_graph import KnowledgeGraph
    >>> from kgqa_core.reading.reading import PlanHop, RelationPlan
    >>> g = KnowledgeGraph.from_triplets([("Leo", "advisor", "Karl"), ("Leo", "nationality", "Norway"),
    ...                                   ("Nils", "advisor", "Karl"), ("Karl", "nationality", "Denmark")])
    >>> students = RelationPlan("Karl", (PlanHop("advisor", False),))
    >>> norwegians = RelationPlan("Norway", (PlanHop("nationality", False),))
    >>> own = RelationPlan("Karl", (PlanHop("nationality"),))
    >>> walks_meet(g, [[students, norwegians], [own, norwegians]], ["Karl", "Norway"])
    [True, False]
    """
    from .paths import plan_ends

    skip = set(topics)
    ends = {} if ends is None else ends

    def reached(p: RelationPlan) -> set[str]:
        key = (p.topic, tuple((h.relation, h.forward) for h in p.hops))
        if key not in ends:
            ends[key] = set(plan_ends(graph, p)) - skip
        return ends[key]

    return [bool(set.intersection(*(reached(p) for p in combo))) if combo else False for combo in combos]


def meeting_pair(graph: Any, plans: Sequence[RelationPlan], scores: Sequence[float], topics: Sequence[str],
                 per_topic: int = MEET_CANDIDATES, max_hops: int = MEET_HOPS,
                 pair_score: Any = None, ends: dict | None = None) -> list[int]:
    """Indices of the best pair of walks from the question's first two entities that reach an entity in common.

    Why: the walks the model is offered are each entity's best alone; for "which student of Sara Nord comes from
    Denmark" those are what Sara Nord works at and what lies in Denmark, which never meet, and the pair that does
    (her students, Denmark's people) is not among them.  Each entity's `per_topic` best walks (by `scores`) of up
    to `max_hops` hops are tried against each other; of the pairs that meet, the one `pair_score` (pairs of
    walks -> one score each; None: the summed `scores`) ranks first wins.  [] when the walks leave from fewer
    than two entities or no pair meets.  `ends`: as `walks_meet`.
    """
    order = sorted(range(len(plans)), key=lambda i: -scores[i])
    by_topic: dict[str, list[int]] = {}
    for i in order:
        if len(plans[i].hops) <= max_hops:
            mine = by_topic.setdefault(plans[i].topic, [])
            if len(mine) < per_topic:
                mine.append(i)
    names = [t for t in dict.fromkeys(topics) if t in by_topic][:2]
    if len(names) < 2:
        return []
    pairs = [(i, j) for i in by_topic[names[0]] for j in by_topic[names[1]]]
    met = walks_meet(graph, [[plans[i], plans[j]] for i, j in pairs], topics, ends)
    meeting = [p for p, m in zip(pairs, met) if m]
    if not meeting:
        return []
    ranks = (pair_score([[plans[i], plans[j]] for i, j in meeting]) if pair_score is not None
             else [scores[i] + scores[j] for i, j in meeting])
    return list(meeting[max(range(len(meeting)), key=lambda k: (ranks[k], -k))])


def joined_ranking(ranked: list[tuple[float, RelationPlan]], joint: list[tuple[float, tuple[RelationPlan, ...]]]
                   ) -> list[tuple[float, RelationPlan]]:
    """`ranked` with the best combination's walks first (each with the combination's probability), in the order
    their entities' walks were offered; the rest after, as ranked."""
    conf, combo = joint[0]
    keys = {(p.topic, tuple(p.relations)) for p in combo}
    lead = [(conf, _with_confidence(p, conf)) for p in combo]
    return lead + [(c, p) for c, p in ranked if (p.topic, tuple(p.relations)) not in keys]


def reading_from_plans(reader: str, ranked: list[tuple[float, RelationPlan]], topics: Sequence[str],
                       how: str) -> QuestionReading:
    """The reading a ranked plan list gives: the best plan's hops, relations and order; one topic's plan per topic."""
    if not ranked:
        return QuestionReading(reader=reader, explanation=f"{how}: no relation path leaves the topic entity")
    conf, best = ranked[0]
    plans = [p for _, p in ranked]
    others = []
    for t in topics:
        if t != best.topic:
            mine = next((p for p in plans if p.topic == t), None)
            if mine is not None:
                others.append(mine)
    explanation = f"{how}: {best.text} ({len(best.hops)} hop(s), {conf:.0%} sure)"
    if not others:
        rels = best.relations
        return QuestionReading(reader=reader, hops=len(best.hops), confidence=conf, sure=True,
                               relations=list(dict.fromkeys(rels)), uses=uses_of(rels), order=list(rels),
                               plans=plans, explanation=explanation)
    # several topic entities: each one's best path; the relations of all, in no one order
    rels = list(dict.fromkeys(best.relations + [r for p in others for r in p.relations]))
    explanation += "; and " + "; ".join(p.text for p in others)
    return QuestionReading(reader=reader, hops=max(len(p.hops) for p in [best, *others]), confidence=conf,
                           sure=True, relations=rels, plans=plans, explanation=explanation)


class LexiconReader:
    """The graph's paths ranked by their relation names' similarity to the question (no model call)."""

    name = "lexicon"

    def __init__(self, vocabulary: RelationVocabulary | None = None, embedder: Any = None,
                 max_hops: int = 3) -> None:
        self.vocabulary = vocabulary
        self.embedder = embedder
        self.max_hops = max_hops

    def candidates(self, question: str, graph: Any, topics: Sequence[str]) -> tuple[list[RelationPlan], list[float]]:
        plans = relation_paths(graph, topics, self.max_hops)
        return plans, lexicon_scores(question, topics, plans, self.vocabulary, self.embedder)

    def read(self, question: str, graph: Any, topics: Sequence[str]) -> QuestionReading:
        started = time.perf_counter()
        plans, scores = self.candidates(question, graph, topics)
        if not plans:
            return reading_from_plans(self.name, [], topics, "the graph's relation names")
        top = max(scores)
        weights = [math.exp((s - top) / _LEXICON_TEMPERATURE) for s in scores]
        z = sum(weights)
        reading = reading_from_plans(self.name, _grouped(plans, [w / z for w in weights])[:MAX_OPTIONS], topics,
                                     "closest relation names").at_horizon(self.max_hops)
        reading.seconds = time.perf_counter() - started
        return reading


@dataclass
class WalkOffer:
    """What `ModelPathReader.offer` hands the looks: every walk from the entities, those offered, and why."""

    plans: list[RelationPlan]
    aligned_all: list[float] | None = None  # each walk's hop alignment
    indices: list[int] = field(default_factory=list)  # the walks offered, in order
    meeting: list[int] = field(default_factory=list)  # the pair of walks that meet, offered too
    look: Any = None  # the model's relation look (`relation_look.RelationLook`), when taken
    looked: list[int] = field(default_factory=list)  # the walks only the look offered
    ends: dict = field(default_factory=dict)  # where each walk ends, followed once

    @property
    def one_entity(self) -> bool:
        """The walks leave from one entity of the question (fewer than two)."""
        return len({p.topic for p in self.plans}) < 2

    @property
    def among(self) -> list[str]:
        """Every relation a question word may name: those of all the walks."""
        return sorted({h.relation for p in self.plans for h in p.hops})


class ModelPathReader:
    """The model chooses, among the graph's paths closest to the question's words, the one the question walks.

    ``listed`` (default): the walks are listed in the prompt and the model
    copies one (READS-style option choice, debiased over ``permutations``
    listing orders).  ``listed=False``: no list; each walk is scored as the
    model's reply to the question alone, renormalised where the walks branch
    (`trie_logprobs`), like DoG's constrained decoding of one path: no list
    means no listing order to debias and a prompt a third as long.
    ``quick`` (default `QUICK_SURE_AT`): the unlisted look first, and the
    listed choice only when that look is less sure than ``quick``; 0 lists
    the walks always.  ``quick_options`` (0: ``max_options``): the unlisted
    look scores that many walks, and an unsure one lists its best
    ``max_options`` (a walk the lexicon ranks low can still be read; measured
    in docs/history/benchmarks-2026.md, "A wider quick look", and off by default).
    """

    name = "paths"

    def __init__(self, model: Any, vocabulary: RelationVocabulary | None = None, embedder: Any = None,
                 max_hops: int = 3, permutations: int = 2, listed: bool = True,
                 max_options: int = MAX_OPTIONS, align: float = ALIGN_WEIGHT,
                 quick: float = QUICK_SURE_AT, quick_options: int = 0, phrase_gain: float = PHRASE_GAIN,
                 joint: bool = True, cover: float = COVER_WEIGHT, horizon: bool = True,
                 spread: float = SPREAD_WEIGHT, meet: float = MEET_PENALTY, shorter: float = SHORTER,
                 joint_model: float = JOINT_MODEL_WEIGHT, aligned_share: float = ALIGNED_SHARE,
                 order: float = ORDER_COST, stop: float = STOP_WEIGHT, agree: bool = AGREE,
                 distinct: bool = DISTINCT, examples: int = EXAMPLES, kind: float = ENTITY_KIND_WEIGHT,
                 every: bool = EVERY_RELATION, one_arrow: bool = ONE_ARROW, read_back: float = READ_BACK,
                 look: int = LOOK_PLACES, blend: float = BLEND, kind_look: float = KIND_LOOK,
                 entity_free: bool = ENTITY_FREE) -> None:
        self.model = model
        self.entity_free = entity_free  # the first look's walks part only at relations (`entity_free_ids`)
        self.kind_look = kind_look  # the model's judgement of the kind of thing each likely walk reaches weighs it
        self.blend = blend  # the quick look's share in an unsure reading's choice among the listed walks
        self.look = look  # places in the offer for the walks the model's relation look likes best (`LOOK_PLACES`)
        self.read_back = read_back  # the question read back from each likely walk weighs it (`weigh_read_back`)
        # the first look's replies write every hop with the same forward arrow (`reply_text`)
        self.one_arrow = one_arrow
        # the first look's prompt names every relation of the walks once some of them are told (`_relations_told`)
        self.every = every
        # a walk gains where its end entity's name says the kind of thing the answer noun asks for (`_entity_kinds`)
        self.kind = kind
        self.examples = examples  # worked questions of the user's graph before the first look's question
        self.distinct = distinct  # a walk listed once, not again the other way round over a two-way relation
        # one entity's walks: the list's second order is not read when its first agrees with the quick look, as sure
        self.agree = agree
        self.stop = stop  # the quick look's choice between ending a walk and going on counts this much (`temper_stops`)
        self.order = order  # a walk's hops named in the question the other way round cost it (`alignment.ORDER_COST`)
        self.aligned_share = aligned_share  # the offered places that go to the best-aligned walks (`offered`)
        self.joint_model = joint_model  # how much the model's log-odds count in a joint choice (`joint_choice`)
        self.shorter = shorter  # a joint choice's hops past one per walk move it down (`joint_choice`)
        self.meet = meet  # a joint choice's walks that reach no entity in common pay this (`joint_choice`)
        # a word about as close to all the walks' relations names no forward hop (`alignment.spread_discount`)
        self.spread = spread
        self.horizon = horizon  # one hop past max_hops where a word of the question names it (`horizon.horizon_hop`)
        self.cover = cover  # a word that names a relation and no hop of the walk costs it (`alignment.COVER_AT`)
        self.joint = joint  # a question naming several entities: one walk per entity, chosen together
        self.align = align
        self.phrase_gain = phrase_gain  # adjacent words naming one relation are one word (`alignment.join_phrases`)
        self.quick = quick
        # walks the quick look scores (0: max_options); when more, a list shows the quick look's best max_options
        self.quick_options = quick_options
        self.lexicon = LexiconReader(vocabulary, embedder, max_hops)
        self.permutations = permutations
        self.listed = listed
        self.max_options = max_options

    def offer(self, question: str, graph: Any, topics: Sequence[str]) -> "WalkOffer":
        """The walks the model's looks will score: the embedder's shortlist, the best-aligned walks, the pair that
        meets and (with ``look``) the walks the model's relation look likes; and each walk's alignment."""
        plans, scores = self.lexicon.candidates(question, graph, topics)
        if not plans:
            return WalkOffer(plans=[])
        offer = WalkOffer(plans=list(plans))
        one_entity, among = offer.one_entity, offer.among
        # words a walk leaves to no hop cost it only when one walk answers the question: with walks from two
        # entities, the words one leaves are the other's (the combination pays for them, `joint_choice`)
        cover = self.cover if one_entity else 0.0
        aligned_all = hop_alignment(question, topics, plans, self.lexicon.vocabulary, self.lexicon.embedder,
                                    phrase_gain=self.phrase_gain, cover=cover,
                                    spread=self.spread, order=self.order, kind=self.kind) if self.align else None
        quick = not self.listed or self.quick > 0
        ends = offer.ends  # where each walk ends, followed once for the meeting pair and the joint choice
        indices = offered(plans, scores, aligned_all, max(self.max_options, self.quick_options if quick else 0),
                          share=self.aligned_share)
        if self.joint and self.meet and not one_entity:
            # the pair of walks that meet and whose hops take the question's words best is offered too
            def pair_score(pairs):
                return joint_alignment(question, topics, pairs, self.lexicon.vocabulary, self.lexicon.embedder,
                                       phrase_gain=self.phrase_gain, cover=self.cover, among=among,
                                       spread=self.spread, order=self.order, kind=self.kind) or [0.0] * len(pairs)

            meeting = meeting_pair(graph, plans, aligned_all or scores, topics,
                                   pair_score=pair_score if self.align else None, ends=ends)
            indices += [i for i in meeting if i not in indices]
        else:
            meeting = []
        look = None  # the model's look at which relations the question asks about
        looked: list[int] = []
        if self.look:
            from .relation_look import relation_look

            look = relation_look(self.model, question, [h.relation for p in plans for h in p.hops],
                                 self.lexicon.vocabulary)
            # by the look alone, two of each length first; ranked with the word matching as well (each ranking's
            # standard scores summed, one of each length first) it read worse on the dev questions it changed
            # (docs/benchmarks.md, "The model's relation look")
            liked = shortlist(plans, [look.walk_score(p) for p in plans], per_length=2, limit=self.look)
            looked = [i for i in liked if i not in indices]
            indices += looked
        offer.aligned_all, offer.indices, offer.meeting = aligned_all, indices, meeting
        offer.look, offer.looked = look, looked
        return offer

    def read(self, question: str, graph: Any, topics: Sequence[str]) -> QuestionReading:
        from ..reads.scoring import ModelChooser

        started = time.perf_counter()
        offer = self.offer(question, graph, topics)
        plans = offer.plans
        if not plans:
            return reading_from_plans(self.name, [], topics, "the graph's paths")
        one_entity, among, aligned_all = offer.one_entity, offer.among, offer.aligned_all
        # as for the words a walk leaves (`offer`): with walks from two entities the joint choice weighs the model's
        # odds less already, and the shorter walks first (`joint_choice`), so ending a walk is not tempered
        stop = self.stop if one_entity else 1.0
        indices, meeting, look, looked, ends = offer.indices, offer.meeting, offer.look, offer.looked, offer.ends
        quick = not self.listed or self.quick > 0
        listed_as = "the walks were"  # what an unsure quick look hands on to the list
        first: dict[str, int] = {}  # each walk's text once, for the first plan offered that writes it
        for i in indices:
            first.setdefault(_option_text(plans[i]), i)
        options, kept = list(first), list(first.values())
        picked = [plans[i] for i in kept]
        met = {_option_text(plans[i]) for i in meeting}  # the pair that meets: kept in every list shown
        aligned = [aligned_all[i] for i in kept] if aligned_all is not None else None
        weighed = ", weighed by how its hops match words of the question" if aligned is not None else ""
        looks = []  # (decision, ranked plans, how) of each look the model took
        first_walks: list[RelationPlan] = []  # the walks the first look's prompt names the relations of
        if quick:
            worked = graph_examples(graph, self.examples) if self.examples else ""
            decision = _unlisted_choice(self.model, question, topics, self.lexicon.vocabulary, picked, options,
                                        stop=stop, examples=worked, every=self.every, one_arrow=self.one_arrow,
                                        entity_free=self.entity_free)
            how = "the model's reply to the question (each walk scored as its answer, none listed)" + weighed
            probs = self._probs(decision, aligned)
            looks.append((decision, _grouped(picked, probs), how))
            shown = (list(picked), aligned)  # the walks the last look scored, and their alignments
            first_walks = list(picked)
            if len(options) > self.max_options:  # the list shows the quick look's best walks, in the offered order
                listed_as = f"its best {self.max_options} of the {len(options)} walks it scored were"
                best = sorted(sorted(range(len(options)), key=lambda i: (options[i] not in met, -probs[i]))
                              [: self.max_options])
                options, picked = [options[i] for i in best], [picked[i] for i in best]
                aligned = [aligned[i] for i in best] if aligned is not None else None
        quick_sure = looks[0][1][0][0] if looks else 0.0  # the quick look's probability of its best walk
        listing = self.listed and (not looks or quick_sure < self.quick)  # the walks are listed for the model
        twins: list[tuple[RelationPlan, RelationPlan]] = []  # (a walk not listed, the listed walk it repeats)
        if listing and self.distinct:
            keep, twins = distinct_walks(picked)
            options, picked = [options[i] for i in keep], [picked[i] for i in keep]
            aligned = [aligned[i] for i in keep] if aligned is not None else None
        agreed = False  # the first listing order chose the quick look's walk, so the second was not read
        if listing:
            settled = None
            if self.agree and looks and one_entity:
                liked = looks[0][1][0][1]  # the quick look's best walk (either form of a walk listed once)

                def settled(first: Any) -> bool:  # the first listing order chose the quick look's walk, as sure
                    nonlocal agreed
                    mine = _grouped(picked, self._probs(first, aligned))
                    agreed = bool(mine) and mine[0][1].walk_key == liked.walk_key and mine[0][0] >= self.quick
                    return agreed

            decision = ModelChooser(self.model, permutations=self.permutations).choose(
                "reading", plan_prompt(question, topics, self.lexicon.vocabulary, picked), options, settled=settled)
            how = "the model's choice among the walks listed" + weighed
            if self.blend and looks:
                decision = blended_choice(decision, looks[0][0], twins, self.blend)
                how = (f"the model's choice among the walks listed and its reply to the question together (the "
                       f"reply's log-odds x {self.blend:g}, the list's x {1 - self.blend:g}: the reply scores each "
                       "walk on its own, so what else is listed does not move it, `reading_blend`)" + weighed)
            looks.append((decision, _grouped(picked, self._probs(decision, aligned)), how))
            shown = (list(picked), aligned)
        decision, ranked, how = looks[-1]
        joined = False  # one walk per entity, chosen together: the question's words are shared among them
        if self.joint:
            joint = joint_choice(shown[0], [o.prob for o in decision.options], self._probs(decision, shown[1]),
                                 question, topics, self.lexicon.vocabulary, self.lexicon.embedder, self.align,
                                 self.phrase_gain, cover=self.cover,
                                 among=among, spread=self.spread, graph=graph, meet=self.meet,
                                 also=[p for p in shown[0] if _option_text(p) in met], ends=ends,
                                 shorter=self.shorter, model_weight=self.joint_model, order=self.order,
                                 kind=self.kind)
            if joint:
                joined = True
                ranked = joined_ranking(ranked, joint)
                how += (f"; the walks of the question's {len(joint[0][1])} entities chosen together, each word of the "
                        "question naming a hop of one walk only")
                if self.joint_model != 1.0:
                    how += (f", the model's preference counting less (its log-odds x {self.joint_model:g}: it judged "
                            "each walk as the reply to the whole question, which no walk from one entity is)")
                if self.shorter:
                    how += ", shorter walks first (two entities are joined through their answer)"
                if self.meet:
                    how += (", walks that reach no entity in common ranked as unlikely (the question asks for "
                            "what its entities share, `reading_meet`)")
        backs: dict[str, float] = {}  # log P(question | walk) of the likeliest walks, when read back
        read_order: list[RelationPlan] = []
        back_calls: list[Any] = []  # the read-back's model call (not a look: it chooses nothing)
        unsure = len(ranked) >= 2 and ranked[0][0] < READ_BACK_UNDER  # before the read-back makes it surer
        if self.read_back and one_entity and not joined and unsure:
            walks = [plan for _, plan in ranked[:READ_BACK_WALKS]]
            read, back_call = read_back(self.model, question, walks)
            back_calls.append(back_call)
            backs = {plan.text: b for plan, b in zip(walks, read)}
            before_back = ranked[0][1]
            ranked = weigh_read_back(ranked, read, self.read_back)
            read_order = [plan for _, plan in ranked[:len(walks)]]  # as weighed (the horizon may lengthen the first)
        kinds = None  # the model's judgement of the kind of thing each likely walk reaches
        if self.kind_look and one_entity and not joined and unsure:
            from .kind_look import kind_look

            nouns = kind_nouns(question, topics)
            walks = [plan for _, plan in ranked[:READ_BACK_WALKS]]
            if nouns and len({p.example for p in walks}) > 1:
                kinds = kind_look(self.model, graph, nouns[0], walks, self.lexicon.vocabulary)
                back_calls.extend(kinds.calls)
                before_kind = ranked[0][1]
                ranked = weigh_read_back(ranked, [kinds.walk_score(p) for p in walks], self.kind_look)
        past = None  # one more hop, named by a word of the question, past the longest walk planned
        if self.horizon and not joined and ranked and len(ranked[0][1].hops) >= self.lexicon.max_hops:
            past = horizon_hop(question, topics, graph, ranked[0][1], self.lexicon.vocabulary,
                               self.lexicon.embedder, self.phrase_gain, spread=self.spread)
            if past is not None:
                ranked = [(ranked[0][0], past.plan), *ranked[1:]]
        reading = reading_from_plans(self.name, ranked, topics, how)
        if backs:
            reading.explanation += (
                f"; the reading was under {READ_BACK_UNDER:.0%} sure, so the question was read back from its "
                f"{len(backs)} likeliest walks (how likely the model finds the question's words written after each "
                f"walk: a walk that leaves part of the question unsaid makes those words unlikely), that "
                f"log-probability times {self.read_back:g} added to each walk's own (`reading_read_back`): " + ", ".join(
                    f"{plan.text} {backs[plan.text]:.1f}" for plan in read_order)
                + ("" if read_order[0].text == before_back.text else
                   f"; before it, {before_back.text} was the likeliest"))
        if kinds is not None:
            reading.explanation += (
                f"; the question names the kind of thing it asks for, '{kinds.noun}', so the model was asked how "
                "likely that word is as the kind of thing each of its likeliest walks reaches, a few of that entity's "
                f"facts in the graph before it (the log-probability against the likeliest entity's, times "
                f"{self.kind_look:g}, added to the walk's, `reading_kind_look`): " + ", ".join(
                    f"{e} {kinds.below_best(e):+.1f}" for e in kinds.log_kind)
                + ("" if ranked[0][1].walk_key == before_kind.walk_key else
                   f"; before it, {before_kind.text} was the likeliest"))
        if looks and stop != 1.0 and any(o.startswith((p + " -", p + " <-")) for p in options for o in options):
            how_much = "half" if stop == 0.5 else f"{stop:g} of"
            reading.explanation += (f"; where one walk is another cut short, the model's choice between ending the "
                                    f"walk and going on counted {how_much} its odds in the first look (a reply that "
                                    "ends sooner is likelier for being shorter, `reading_stop_weight`)")
        if self.listed and self.quick > 0:
            reading.explanation += (
                f"; the model's reply to the question alone was {quick_sure:.0%} sure (at least "
                f"{self.quick:.0%} needed), so the walks were not listed" if len(looks) == 1 else
                f"; the model's reply to the question alone was only {quick_sure:.0%} sure (under "
                f"{self.quick:.0%}), so {listed_as} listed for it to choose among")
            if agreed:
                reading.explanation += (f"; listed in one order, the model chose the walk its reply to the question "
                                        f"had liked best, at least {self.quick:.0%} sure, so the list was not read "
                                        "again in another order (two looks agreed, `reading_agree`)")
        if first_walks and self.entity_free and self.one_arrow and len(first_walks) > 1:
            reading.explanation += ("; its first look compared the walks only where they part at a relation or end, "
                                    "not where they pass other entities: an entity's name counted for no walk "
                                    "(`reading_entity_free`)")
        if first_walks and self.every and _relations_told(self.lexicon.vocabulary, first_walks, True):
            named = len({h.relation for p in first_walks for h in p.hops})
            reading.explanation += (f"; its first look was told the names of all {named} relations of its walks, the "
                                    "described ones with their meaning, so that a described one would not stand out "
                                    "to be copied (`reading_every_relation`)")
        if twins:
            both = sorted({a.relation for t, o in twins for a, b in zip(t.hops, o.hops) if a.forward != b.forward})
            reading.explanation += (f"; {len(twins)} walk(s) that reach the same entities as a walk listed, over the "
                                    "same relations the other way round (the graph holds "
                                    + ", ".join(both) + " both ways), were not listed again (`reading_distinct`)")
        if past is None:
            reading.at_horizon(self.lexicon.max_hops)
        else:
            hop = past.plan.hops[-1]
            reading.explanation += (
                f"; {self.lexicon.max_hops} hops is the longest walk the reader plans, but '{past.word}' names no hop "
                f"of it and names {hop.label} ({past.closeness:.2f}), which the graph has from where it ends: one "
                f"hop more (`reading_horizon`)")
        if aligned_all is not None and reading.plans:
            matches, left = plan_words(question, topics, reading.plans[0], self.lexicon.vocabulary,
                                       self.lexicon.embedder, among=among, phrase_gain=self.phrase_gain,
                                       spread=self.spread)
            if matches:
                reading.explanation += f"; its hops and the question's words: {hop_words_text(matches)}"
            if self.order and sum(1 for _, w, _ in matches if w) >= 2:
                reading.explanation += ("; a walk's hops are read in the order the question names them, outwards from "
                                        "its entity (a walk whose hops it names the other way round pays, "
                                        "`reading_order`)")
            if left and self.cover and not joined:
                reading.explanation += ("; words of the question that name a relation but no hop of it (each cost "
                                        "the walk, `reading_cover`): " + ", ".join(
                                            f"'{w}' ~ {r} ({x:.2f})" for w, r, x in left))
            said = {part for _, w, _ in matches for part in w.split()}  # a near paraphrase still names its hop
            described = [(w, why) for w, why in described_nouns(question, topics) if w not in said]
            if described:
                reading.explanation += ("; " + ", ".join(f"'{w}' says {why}" for w, why in described)
                                        + (", so it names no hop of its own" if len(described) == 1 else
                                           ", so they name no hop of their own"))
            kinds = answer_nouns(question, topics)
            if kinds:
                reading.explanation += ("; " + ", ".join(f"'{w}'" for w in kinds) + " (the noun which/what asks "
                                        "with) says what kind of thing the answer is, so it names no hop of its own: "
                                        "a walk whose last hop reaches such a thing gains, one whose last hop plainly "
                                        "does not pays")
                ends = entity_kinds_text(question, topics, reading.plans[0], self.lexicon.embedder) if self.kind else ""
                if ends:
                    reading.explanation += f"; {ends}"
            domain = domain_words(question, topics, among, self.lexicon.vocabulary, self.lexicon.embedder,
                                  self.phrase_gain, self.spread)
            if domain:
                reading.explanation += ("; words about as close to most of the walks' relations as to any one (words "
                                        "of the graph's whole domain), so they name a hop only where it is walked "
                                        "backwards, to what its relation's name does not say "
                                        "(`reading_domain_words`): " + ", ".join(
                                            f"'{w}' (median {m:.2f})" for w, m in domain))
        reading.seconds = time.perf_counter() - started
        if look is not None:
            best = sorted(look.gain.items(), key=lambda x: -x[1])[:4]
            reading.explanation += (
                "; the model was asked which relations the question asks about (each relation's log-probability "
                "after the question against with no question, `reading_look`): " + ", ".join(
                    f"{r} {g:+.1f}" for r, g in best)
                + (f", so {len(looked)} walk(s) the word matching had left out were offered too: "
                   + "; ".join(plans[i].text for i in looked) if looked else ""))
        # in the order they were made: the relation look before the looks at the walks, the read-back after them
        before_looks = look.calls if look is not None else []
        reading.calls = before_looks + [c for d, _, _ in looks for c in d.calls] + back_calls
        reading.forward_passes = sum(c.forward_passes for c in before_looks + back_calls) + sum(
            d.forward_passes for d, _, _ in looks)
        return reading

    def _probs(self, decision: Any, aligned: Sequence[float] | None) -> list[float]:
        """The model's probability of each walk, weighed by its hop alignment when there is one."""
        probs = [o.prob for o in decision.options]
        return weigh(probs, aligned, self.align) if aligned is not None else probs


def blended_choice(listed: Any, quick: Any, twins: Sequence[tuple[RelationPlan, RelationPlan]],
                   weight: float) -> Any:
    """The listed look's decision with the quick look's log-odds mixed in: each listed walk scores
    ``weight * log q + (1 - weight) * log l``, q its probability in the quick look (summed over the forms of a walk
    listed once, `distinct_walks`), l its probability in the list; renormalised over the listed walks.

    Why: a product of experts keeps what each judge sees.  The quick look scores every walk as a reply of its own
    (its odds between two walks are the same whatever else is offered); the list sets the walks side by side but its
    choice among them moves with what else is listed.

    Returns
    -------
    A `Decision` over the listed options, with the list's model calls.

    Examples
    --------
    >>> from kgqa_core.reads.scoring import decision_from_scores
    >>> import math
    >>> listed = decision_from_scores(["a", "b"], [math.log(0.6), math.log(0.4)])
    >>> quick = decision_from_scores(["a", "b", "c"], [math.log(0.1), math.log(0.8), math.log(0.1)])
    >>> [round(o.prob, 2) for o in blended_choice(listed, quick, [], 0.5).options]
    [0.3, 0.7]
    """
    from ..reads.scoring import decision_from_scores

    mass = {o.text: o.prob for o in quick.options}
    for twin, kept in twins:  # a walk listed once: the quick look scored each of its forms
        mass[_option_text(kept)] = mass.get(_option_text(kept), 0.0) + mass.get(_option_text(twin), 0.0)
    texts = [o.text for o in listed.options]
    scores = [weight * math.log(max(mass.get(t, 0.0), 1e-12)) + (1.0 - weight) * math.log(max(o.prob, 1e-12))
              for t, o in zip(texts, listed.options)]
    per_order = [list(x) for x in zip(*(o.per_order for o in listed.options))]  # per option -> per listing order
    blended = decision_from_scores(texts, scores, per_order)
    blended.calls, blended.forward_passes = listed.calls, listed.forward_passes
    blended.tokens_in, blended.seconds = listed.tokens_in, listed.seconds
    blended.note = listed.note
    return blended


def distinct_walks(plans: Sequence[RelationPlan]) -> tuple[list[int], list[tuple[RelationPlan, RelationPlan]]]:
    """The walks of `plans` to list, each once: a plan that is another's twin (`RelationPlan.twin_of`: the same
    relations, the other way round over a relation the graph holds both ways, to the same entities) is left out.

    Why only in the list: there a walk written twice is a walk offered twice, which the model is likelier to copy
    for it, and its tokens are read again; in the first look each form is scored as a reply, and the reading adds
    up the forms of one walk (`_grouped`), so nothing is counted twice there.

    Returns
    -------
    The indices kept, in order, and each plan left out with the kept plan it repeats.
    """
    walked: dict[str, RelationPlan] = {}  # each walk kept, under its first path's text
    keep, twins = [], []
    for i, p in enumerate(plans):
        same = walked.get(p.walk_key)
        if same is not None:
            twins.append((p, same))
            continue
        walked[p.walk_key] = p
        keep.append(i)
    return keep, twins


def temper_stops(options: Sequence[str], logprobs: Sequence[float], weight: float) -> list[float]:
    """The quick look's log-probabilities with each choice between ending a walk and going on tempered.

    Where an option's walk is another's cut short (the other goes on from where it ends: ``A`` and
    ``A -r-> B``), the log-odds of ending against going on are multiplied by ``weight`` (`STOP_WEIGHT`); the walks
    that go on share what they gain or lose in proportion, so every other choice keeps the model's odds and the
    probabilities still sum as before.  ``weight`` 1 changes nothing.

    >>> lp = [math.log(0.9), math.log(0.06), math.log(0.04)]
    >>> out = temper_stops(["X -r-> Y", "X -r-> Y -s-> Z", "X -r-> Y -t-> W"], lp, 0.5)
    >>> [round(math.exp(v), 2) for v in out]
    [0.75, 0.15, 0.1]
    """
    if weight == 1.0 or len(options) < 2:
        return list(logprobs)
    probs = [math.exp(v) for v in logprobs]
    for i in sorted(range(len(options)), key=lambda i: -len(options[i])):
        goes_on = [j for j in range(len(options)) if j != i and options[j].startswith((options[i] + " -",
                                                                                      options[i] + " <-"))]
        rest = sum(probs[j] for j in goes_on)
        if not goes_on or rest <= 0.0 or probs[i] <= 0.0:
            continue
        total, end = probs[i] + rest, probs[i] / (probs[i] + rest)
        end = end ** weight / (end ** weight + (1.0 - end) ** weight)
        probs[i] = total * end
        for j in goes_on:
            probs[j] *= total * (1.0 - end) / rest
    return [math.log(max(p, 1e-300)) for p in probs]


def _unlisted_choice(model: Any, question: str, topics: Sequence[str], vocabulary: RelationVocabulary | None,
                     plans: Sequence[RelationPlan], options: list[str], stop: float = STOP_WEIGHT,
                     examples: str = "", every: bool = False, one_arrow: bool = False,
                     entity_free: bool = False) -> Any:
    """Each walk scored as the reply to the question (no list), renormalised where the walks branch (with
    ``entity_free``, only where they branch at a relation or the walk's end: `entity_free_ids`)."""
    from ..reads.scoring import ModelChooser, decision_from_scores, trie_logprobs

    if len(options) == 1:
        return decision_from_scores(options, [0.0])
    started = time.perf_counter()
    parts = unlisted_prompt(question, topics, vocabulary, plans, examples, every=every, one_arrow=one_arrow)
    replies = [reply_text(p) for p in plans] if one_arrow else list(options)
    prompt = model.chat_prompt(parts.head + parts.tail, system=parts.system)
    prompt = PromptText(prompt, parts.fixed_text(prompt))  # its instructions: read once, kept whole
    terminator = ModelChooser(model).terminator
    with model.lock:
        before = model.counter.snapshot()
        scores = model.score_continuations(prompt, [o + terminator for o in replies])
        after = model.counter.snapshot()
    ids, lps = [s.token_ids for s in scores], [s.token_logprobs for s in scores]
    if entity_free and one_arrow:
        ids, lps = map(list, zip(*(entity_free_ids(model, plan, s.token_ids, s.token_logprobs)
                                   for plan, s in zip(plans, scores))))
    combined = temper_stops(replies, trie_logprobs(ids, lps), stop)
    decision = decision_from_scores(options, combined, [combined])
    call = model.call_record("reads.reading (walks scored as replies)", scores, prompt)
    call.forward_passes = after[0] - before[0]
    decision.calls = [call]
    decision.forward_passes = after[0] - before[0]
    decision.tokens_in = after[1] - before[1]
    decision.seconds = time.perf_counter() - started
    return decision


ENTITY_TOKEN = -1  # what stands for an entity's name in `entity_free_ids`: no token of any vocabulary


def entity_spans(plan: RelationPlan) -> list[tuple[int, int]]:
    """Where the names of the entities a walk passes after its first stand in its reply (`reply_text`).

    >>> from kgqa_core.reading.reading import PlanHop
    >>> plan = RelationPlan("Ann", (PlanHop("spouse"), PlanHop("born_in", False)), walk=("Ann", "Bob", "Delft"))
    >>> text = reply_text(plan)
    >>> [text[a:b] for a, b in entity_spans(plan)]
    ['Bob', 'Delft']
    """
    return plan.walk_spans(one_arrow=True)[1]


def entity_free_ids(model: Any, plan: RelationPlan, token_ids: Sequence[int],
                    token_logprobs: Sequence[float]) -> tuple[list[int], list[float]]:
    """`token_ids` and `token_logprobs` (the walk's reply as scored) with each run of tokens inside the name of an
    entity the walk passes (not the question's entity it starts from) as one `ENTITY_TOKEN` of log-probability 0:
    in the walks' prefix tree every walk then passes the same "entity", so they part only at relations and ends,
    and no entity's name counts for or against a walk (`trie_logprobs` costs nothing where every walk goes on
    alike).  A relation's tokens keep the log-probabilities they had after the entity's real name.

    Where the tokens do not decode back to the reply (a tokenizer that changes the text), they are returned as they
    are: the walk is scored as before.
    """
    text = reply_text(plan)
    whole = model.decode(token_ids)
    shift = whole.find(text)
    if shift < 0:
        return list(token_ids), list(token_logprobs)
    spans = [(a + shift, b + shift) for a, b in entity_spans(plan)]
    ids: list[int] = []
    lps: list[float] = []
    start, run = 0, False
    for k, (tok, lp) in enumerate(zip(token_ids, token_logprobs)):
        end = len(model.decode(token_ids[:k + 1]))
        piece = whole[start:end]
        first = start + len(piece) - len(piece.lstrip())  # where the token's text starts, its leading space aside
        inside = bool(piece.strip()) and any(a <= first and end <= b for a, b in spans)
        start = end
        if inside:
            if not run:
                ids.append(ENTITY_TOKEN)
                lps.append(0.0)
            run = True
            continue
        run = False
        ids.append(tok)
        lps.append(lp)
    return ids, lps


def read_back(model: Any, question: str, plans: Sequence[RelationPlan]) -> tuple[list[float], Any]:
    """log P(question | walk) for each of `plans`: the question's tokens scored after ``Walk: <plan>``, one batch.

    Why the question after the walk, and not the walk after the question (as the reader's looks score it): a walk
    that leaves a relation of the question unsaid still reads as a fine reply to it, but the question's words for
    that relation are unlikely after it.  The walks share the fixed first line (read once, `PromptText`).

    Returns
    -------
    The log-probabilities, in the order of `plans`, and the model call's trace record.
    """
    head = PromptText(READ_BACK_HEAD, READ_BACK_HEAD)
    asked = model.encode(" " + question)
    continuations = [f"Walk: {plan.text}\nQuestion: {question}" for plan in plans]
    with model.lock:
        before = model.counter.snapshot()
        scores = model.score_continuations(head, continuations)
        after = model.counter.snapshot()
    backs = []
    for plan, score in zip(plans, scores):
        n = len(asked)
        if list(score.token_ids[-n:]) == list(asked):
            backs.append(float(sum(score.token_logprobs[-n:])))
        else:  # the question's first token merged with what precedes it: score it after its own prompt
            alone = model.score_continuations(PromptText(READ_BACK_HEAD + f"Walk: {plan.text}\nQuestion:",
                                                         READ_BACK_HEAD), [" " + question])
            backs.append(float(alone[0].total))
    call = model.call_record("reads.reading (the question read back from its walks)", scores, head)
    call.forward_passes = after[0] - before[0]
    return backs, call


def weigh_read_back(ranked: list[tuple[float, RelationPlan]], backs: Sequence[float],
                    weight: float) -> list[tuple[float, RelationPlan]]:
    """`ranked` with its first ``len(backs)`` walks weighed by the question read back from them, best first.

    Each walk's log-probability gains ``weight`` x its read-back log-probability; the walks share the probability
    they held together before (the rest of the ranking keeps theirs), so only their order and split change; each
    plan's own ``confidence`` is its new probability.

    >>> from kgqa_core.reading.reading import PlanHop
    >>> a, b, c = (RelationPlan("X", (PlanHop(r),)) for r in ("south", "west", "north"))
    >>> out = weigh_read_back([(0.6, a), (0.3, b), (0.1, c)], [-20.0, -16.0], 0.5)
    >>> [(round(p, 3), plan.relations[0], round(plan.confidence, 3)) for p, plan in out]
    [(0.708, 'west', 0.708), (0.192, 'south', 0.192), (0.1, 'north', 0.0)]
    """
    k = len(backs)
    top = ranked[:k]
    mass = sum(p for p, _ in top)
    logs = [math.log(max(p, 1e-300)) + weight * b for (p, _), b in zip(top, backs)]
    peak = max(logs)
    raw = [math.exp(v - peak) for v in logs]
    total = sum(raw)
    weighed = sorted(((mass * r / total, plan) for r, (_, plan) in zip(raw, top)), key=lambda x: -x[0])
    return [(p, _with_confidence(plan, p)) for p, plan in weighed] + list(ranked[k:])


def reply_text(plan: RelationPlan) -> str:
    """The walk as the first look's reply with `ONE_ARROW`: ``Ann -spouse-> Bob -place_of_birth (reverse)-> Delft``.

    Why: written with two arrows, a walk is first a choice of arrow and only then of relation, and scored token by
    token where the walks part (`trie_logprobs`), the one walk from an entity written with a forward arrow takes all
    of the model's liking for a forward arrow: "Drovex Medica -headquartered_in-> ..." was read 99.5% sure for "what
    unwanted reactions can Drovex Medica's medicines cause", every other walk from the company going backwards.  With
    one arrow the walks part at the relation's name.
    """
    return plan.walk_text(one_arrow=True)


def _option_text(plan: RelationPlan) -> str:
    """The plan as one walk of the graph, entity by entity: the model sees what kind of entity each hop reaches."""
    return plan.example_text


def _relations_told(vocabulary: RelationVocabulary | None, plans: Sequence[RelationPlan],
                    every: bool = False) -> str:
    """What the user's vocabulary says the walks' relations mean, as a prompt paragraph ("" when nothing).

    ``every``: once something is told, the paragraph names every relation of the walks, the told ones with their
    meaning.  Why: in the first look the model writes its walk, and a relation name it has just read is likelier to
    be copied; told of one relation alone ("interacts_with: collaborates with"), a 1.5B took that relation 99.7% sure
    for "what illness is X prescribed for", where without the paragraph it gave `treats` its place among the rest.
    """
    relations = sorted({h.relation for p in plans for h in p.hops})
    said = {r: vocabulary.describe([r]) for r in relations} if vocabulary else {}  # [] or ["relation: words"]
    if not any(said.values()):
        return ""
    if every:
        lines = [said[r][0] if said[r] else r for r in relations]
        return "The walks' relations, and what some of them mean:\n" + "\n".join(lines) + "\n\n"
    return "What the relations mean:\n" + "\n".join(said[r][0] for r in relations if said[r]) + "\n\n"


def plan_prompt(question: str, topics: Sequence[str], vocabulary: RelationVocabulary | None,
                plans: Sequence[RelationPlan]):
    """The option prompt for the path choice: the question, its entities, what the relations mean (when told)."""
    from ..reads.scoring import PromptParts

    told = _relations_told(vocabulary, plans)
    names = ", ".join(t for t in topics if t)
    fixed = (  # the fixed text first: read once per session (the prefix cache), not once per question
        "Below is a question and some walks through a knowledge graph that start at the question's entity. "
        "'A -relation-> B' means A has that relation to B; 'A <-relation- B' means B has it to A. "
        "Which walk ends at an answer to the question? It must follow the relations the question asks about, "
        "no more and no fewer.\n\n"
    )
    head = fixed + told + f"The question's entity: {names}\nQuestion: {question}\n\nWalks:\n"
    return PromptParts(head=head, tail="Reply with one walk, copied exactly.", fixed=fixed)


def unlisted_prompt(question: str, topics: Sequence[str], vocabulary: RelationVocabulary | None,
                    plans: Sequence[RelationPlan], examples: str = "", every: bool = False, one_arrow: bool = False):
    """The prompt whose reply is one walk, written out entity by entity (no list of walks); `examples`
    (`examples.graph_examples`: worked questions of the graph, the same for all its questions) after the
    instructions, part of the fixed text; ``every``: see `_relations_told`."""
    from ..reads.scoring import PromptParts

    told = _relations_told(vocabulary, plans, every)
    names = ", ".join(t for t in topics if t)
    backwards = "'A -relation (reverse)-> B'" if one_arrow else "'A <-relation- B'"
    fixed = (  # the fixed text first: read once per session (the prefix cache), not once per question
        "Walk through a knowledge graph from the question's entity to an answer of the question. "
        f"Write the walk as 'A -relation-> B' for each step ({backwards} when B has the relation to A). "
        "It must follow the relations the question asks about, no more and no fewer.\n\n"
    ) + examples
    head = fixed + told + f"The question's entity: {names}\nQuestion: {question}\n"
    return PromptParts(head=head, tail="", fixed=fixed)


def _flag(value: Any) -> bool:
    """A reader option's yes or no (``1``, ``true`` or ``yes`` for yes)."""
    return str(value).lower() in ("1", "true", "yes")


READER_OPTIONS = {"max_hops": int, "permutations": int, "listed": _flag, "max_options": int, "align": float,
                  "quick": float, "quick_options": int, "phrase_gain": float, "cover": float, "joint": _flag,
                  "meet": float, "shorter": float, "joint_model": float, "aligned_share": float, "order": float,
                  "stop": float, "agree": _flag, "distinct": _flag, "examples": int, "horizon": _flag, "kind": float,
                  "every": _flag, "one_arrow": _flag, "spread": float, "read_back": float,
                  "look": int, "blend": float, "kind_look": float,
                  "entity_free": _flag}


def make_reader(name: str, model: Any = None, vocabulary: RelationVocabulary | None = None) -> Any:
    """The reader called `name` (one of `READERS`), or None for ``none``.

    ``paths:listed=false,permutations=1`` passes options to `ModelPathReader` (benchmarks compare variants).
    """
    name, _, opts = name.partition(":")
    options: dict[str, Any] = {}
    for item in filter(None, opts.split(",")):
        key, _, value = item.partition("=")
        if key not in READER_OPTIONS:
            raise ValueError(f"unknown reader option {key!r}; choose among: {', '.join(READER_OPTIONS)}")
        options[key] = READER_OPTIONS[key](value)
    if name == "none":
        return None
    if name == "wording":
        from .wording import WordingReader

        return WordingReader()
    from ..graph.embeddings import load_embedder

    embedder = load_embedder()
    if name == "lexicon" or model is None:
        return LexiconReader(vocabulary, embedder)
    if name == "paths":
        return ModelPathReader(model, vocabulary, embedder, **options)
    raise ValueError(f"unknown question reader {name!r}; choose one of: {', '.join(READERS)}")
