"""Complete a list answer from the graph: every entity the chain's relation path reaches.

A deviation from DoG and CoT as published (documented in docs/benchmarks.md
with its ablation).  A chain that ends ``< Disclosure -> starred_actors ->
Demi Moore >`` for "who acted in Disclosure" names one actor; the question
asks for all of them, and the graph holds them all.  The papers score the
entities the model wrote, so a correct chain with a short list loses F1
(DoG's answer F1 trails its Hits@1 on list questions for this reason alone).

The rule, applied after the model's answers are parsed and linked:

* the chain's last triplet ``(h, r, t)`` must be grounded in the graph;
* one of the model's answers (not a topic entity of the question) must be
  an entity on one side of it: a tail of ``(h, r, ?)`` (the chain read the
  triplet forwards and answered with its tail) or a head of ``(?, r, t)``
  (a backward reading, answered with its head);
* then every other entity on that side joins the answers, after the
  model's own (whose order is kept, so Hits@1 is unchanged), each marked
  ``Answer.completed_from_graph``.

A chain that is a *path* from a topic entity completes along the whole path
(`complete_along_path`): ``< Forever Young -> starred_actors -> Jamie Lee
Curtis > < Jamie Lee Curtis -> starred_actors (reverse) -> The Fog >`` for
"films with the same actor as Forever Young" reads the relation path
(starred_actors, starred_actors reversed) from Forever Young, and the answer
set is every entity the graph reaches along it -- the films of *every* actor
of Forever Young, which is what the question asks (the last-triplet rule
would add only Jamie Lee Curtis's films).  Triplets that list siblings of the
step before (same entity, relation and direction: the model enumerating)
leave the path as it is; the path ends at a triplet that leaves it (one
that starts from neither the path's end nor the step's source), and a
triplet that starts again from the topic entity begins another path
("Quality Street -> release_year -> 1937", then "Quality Street ->
starred_actors -> Katharine Hepburn" and on: the second is the path the
question asks about when the answer lies at its end).  The path
is used only when the model's first answer is among the entities its end
reaches, so it never replaces the model's reading of the question, only
completes it; else the last-triplet rule applies.

Names are compared up to case: an answer "comedy" (which a KB may also hold
as a tag) is the genre "Comedy" the path reaches, and is not added twice.

Topic entities are never added (the question is about them).  At most
`MAX_COMPLETED_ANSWERS` are added; a relation that holds more (a genre's
thousands of films, read backwards) is cut and the cut is noted.  Only
`GraphView.neighbours` of the one anchor entity is read, so the completion
costs one neighbourhood lookup on any graph store.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ..graph.chain_walk import path_segments, walk_chain
from ..graph.store import is_local_graph
from ..trace.schema import Answer

MAX_COMPLETED_ANSWERS = 100
MAX_PATH_FRONTIER = 500  # entities expanded per hop of a path; more (a genre's films) are cut and noted


@dataclass(frozen=True)
class Completion:
    """The answers after completion and what was added, for the trace."""

    answers: list[Answer]
    anchor: str  # the entity the relation is read from
    relation: str
    direction: str  # "tails": every t of (anchor, r, t); "heads": every h of (h, r, anchor); "path": below
    added: list[str] = field(default_factory=list)
    held: int = 0  # how many entities the graph holds on that side
    cut: int = 0  # left out by MAX_COMPLETED_ANSWERS
    path: list[tuple[str, bool]] = field(default_factory=list)  # (relation, read forwards) from `anchor`
    frontier_cut: int = 0  # entities of an intermediate hop not expanded (MAX_PATH_FRONTIER)
    walked: int = 0  # hops the chain walked along its path (more than `path` when completed at the question's hop)
    ranked_after: list[str] = field(default_factory=list)  # the model's answers its path does not reach, moved behind
    from_chain: bool = False  # no answer of the model's is at the path's end: the entities there lead
    instead_of_topic: bool = False  # the model answered with the question's own entity: the path's end leads

    @property
    def note(self) -> str:
        if self.direction == "path":
            steps = " ".join(f"-{r}{'' if fwd else ' (reverse)'}-> ?" for r, fwd in self.path)
            side = f"every entity the graph reaches along {self.anchor} {steps}"
            where = f"the chain walks {len(self.path)} hop(s) from the question's entity to the answer; it names"
            if self.walked > len(self.path):
                where = (f"the chain walks {self.walked} hop(s) from the question's entity, the question names "
                         f"{len(self.path)} and the answer is there; that hop names")
        else:
            side = (f"every tail of ({self.anchor}, {self.relation}, ?)" if self.direction == "tails"
                    else f"every head of (?, {self.relation}, {self.anchor})")
            where = "the chain's last triplet names"
        if self.instead_of_topic:
            text = (f"answers from the chain: the model answered with the question's own entity "
                    f"({', '.join(self.ranked_after)}), which a question about it does not ask for; {side} comes "
                    f"first ({len(self.added)} answer(s)), the model's own after")
        elif self.from_chain:
            text = (f"answers from the chain: no answer the model wrote is where the chain's path ends "
                    f"({len(self.path)} hop(s), the question's); {side} comes first ({len(self.added)} answer(s)), "
                    f"the model's own after")
        else:
            text = (f"answers completed from the graph: {where} {side}; "
                    f"{len(self.added)} answer(s) added after the model's own")
        if self.ranked_after and not self.from_chain:
            text += (f"; the model's answer(s) {', '.join(self.ranked_after)} are not where the chain's path ends "
                     f"and are ranked after those it reaches")
        if self.cut:
            text += f" (cut at {len(self.added)} of {self.held}; {self.cut} left out)"
        if self.frontier_cut:
            text += f" ({self.frontier_cut} intermediate entities past {MAX_PATH_FRONTIER} per hop not followed)"
        return text


def _side(graph: Any, anchor: str, relation: str, anchor_is_head: bool) -> list[str]:
    """Entities at the other end of `relation` from `anchor`, in graph order, without repeats."""
    out: dict[str, None] = {}
    for t in graph.neighbours(anchor):
        if t.relation != relation:
            continue
        if anchor_is_head and t.head == anchor:
            out[t.tail] = None
        elif not anchor_is_head and t.tail == anchor:
            out[t.head] = None
    return list(out)



def _added(answers: Sequence[Answer], others: Sequence[str], topics: set[str], anchor: str,
           max_added: int) -> tuple[list[Answer], list[str], int] | None:
    """The answers with `others` the model did not give appended (marked), the added names, and how many were cut."""
    given = {n.casefold() for a in answers for n in (a.entity, a.text) if n}
    extra = [e for e in others if e.casefold() not in given and e not in topics and e != anchor]
    if not extra:
        return None
    kept = extra[:max_added]
    added = [Answer(text=e, entity=e, in_graph=True, score=None, completed_from_graph=True) for e in kept]
    return list(answers) + added, kept, len(extra) - len(kept)


def complete_from_last_triplet(
    answers: Sequence[Answer],
    last: Any,
    graph: Any,
    topics: Sequence[str] = (),
    max_added: int = MAX_COMPLETED_ANSWERS,
) -> Completion | None:
    """`answers` completed from the relation of `last` (a graph `Triplet`), or None when the rule does not apply.

    None when no answer (other than a topic entity) is an entity on either
    side of `last`, or when the graph holds nothing beyond what the model
    already answered.
    """
    topic_set = set(topics)
    named = [a.entity for a in answers if a.entity and a.entity not in topic_set]
    if not named or last is None:
        return None
    named_set = {n.casefold() for n in named}
    for anchor, anchor_is_head in ((last.head, True), (last.tail, False)):
        others = _side(graph, anchor, last.relation, anchor_is_head)
        if anchor.casefold() in named_set or not named_set & {o.casefold() for o in others}:
            continue
        done = _added(answers, others, topic_set, anchor, max_added)
        if done is None:
            return None
        completed, kept, cut = done
        return Completion(completed, anchor, last.relation, "tails" if anchor_is_head else "heads",
                          added=kept, held=len(others), cut=cut)
    return None


def chain_paths(chain: Sequence[Any], topics: Sequence[str]) -> list[tuple[str, list[tuple[str, bool]]]]:
    """The relation paths the chain walks from a topic entity, latest first (empty when it does not start at one).

    A chain may survey the topic entity before it takes the hop it needs
    (a restart, `kgqa_core.graph.chain_walk`); each start is one path.
    Listed siblings leave a path as it is.
    """
    return path_segments(walk_chain(chain, topics))


def chain_path(chain: Sequence[Any], topics: Sequence[str]) -> tuple[str, list[tuple[str, bool]]] | None:
    """The latest of `chain_paths`, or None."""
    paths = chain_paths(chain, topics)
    return paths[0] if paths else None


def reach(graph: Any, source: str, path: Sequence[tuple[str, bool]],
          max_frontier: int = MAX_PATH_FRONTIER) -> tuple[list[list[str]], int]:
    """The entities reached from `source` after each hop of `path` (graph order, no repeats), and how many
    entities of an intermediate hop were not followed (`max_frontier`).

    `source` itself is never reached: "the films directed by the director
    of Raw Deal" are his *other* films, and the languages, actors or
    directors of those (on all 3-hop dev templates checked, the gold
    answers are exactly the entities reached without coming back through
    the question's entity).
    """
    local = is_local_graph(graph)
    frontier = [source]
    levels: list[list[str]] = []
    skipped = 0
    for relation, fwd in path:
        if len(frontier) > max_frontier:
            skipped += len(frontier) - max_frontier
            frontier = frontier[:max_frontier]
        around = ({e: graph.neighbours(e) for e in frontier} if local
                  else graph.neighbours_batch(frontier, "out" if fwd else "in", [relation]).triplets)
        nxt: dict[str, None] = {}
        for e in frontier:
            for t in around.get(e, ()):
                if t.relation != relation:
                    continue
                if fwd and t.head == e:
                    nxt[t.tail] = None
                elif not fwd and t.tail == e:
                    nxt[t.head] = None
        nxt.pop(source, None)  # a path does not come back through its own start (MetaQA's gold never does)
        frontier = list(nxt)
        levels.append(frontier)
        if not frontier:
            break
    return levels, skipped


def complete_along_path(
    answers: Sequence[Answer],
    chain: Sequence[Any],
    graph: Any,
    topics: Sequence[str] = (),
    max_added: int = MAX_COMPLETED_ANSWERS,
    hops: int | None = None,
) -> Completion | None:
    """`answers` completed with every entity the chain's relation path reaches from its topic entity.

    A path is the chain's hops from a topic entity up to a step off it or
    a restart from the topic (`chain_paths`; the latest that holds the
    answer is used): a chain that wrote one more triplet off its path after
    listing its answers still completes along the hops that led to them, and
    one that surveyed the topic's other facts first completes along the hops
    it took after.  None when the model's first answer (other than a topic
    entity) is not among the entities a whole path reaches (an answer picked up half-way
    is not completed: the path's end is what the chain says the question
    asks for), or the graph holds nothing beyond what the model answered.

    With `hops` (how many hops the question names,
    `kgqa_core.reading`) a path that walks further than that
    completes at that hop when the first answer is there: "who starred in
    Cemetery Man" answered from a chain that went on to a co-star's other
    film completes with Cemetery Man's actors, not the co-stars' co-stars.
    """
    return _along_path(answers, chain, graph, topics, max_added, hops)[0]


def _along_path(answers: Sequence[Answer], chain: Sequence[Any], graph: Any, topics: Sequence[str],
                max_added: int, hops: int | None, rank_by_chain: bool = False,
                question_uses: Mapping[str, int] | None = None,
                question_order: Sequence[str] = (), not_the_topic: bool = False) -> tuple[Completion | None, bool]:
    """`complete_along_path`, and whether some path's end (or the question's hop) holds the answer it completes.

    With `rank_by_chain`, the model's answers a path's end holds lead and
    the others follow (`Completion.ranked_after`), whether the first that
    is held comes first or later, and whether those before it are entities
    elsewhere in the graph or none at all; and when no answer of the model's is at a
    path's end, the entities the latest path reaches at the question's hop
    come first (`Completion.from_chain`), when that path walks exactly the
    relations the question names (`question_uses`: each relation and how
    many hops it accounts for, `kgqa_core.reading.QuestionReading.uses`),
    and in the order of `question_order` when that is given
    (`HopEstimate.order`: "which person directed the movies written by X" is
    his films, then their directors; a chain that took the films he directed
    first says nothing about the answer).  With `not_the_topic`, an answer
    line that names only the question's own entity, after a chain that came
    back to it, gives way to what the chain's path reaches beside it
    (`_instead_of_topic`), whether or not the question's reading was sure.
    """
    topic_set = set(topics)
    named = [a.entity for a in answers if a.entity and a.entity not in topic_set]
    paths = []
    for source, path in chain_paths(chain, topics):
        levels, skipped = reach(graph, source, path)
        if len(levels) == len(path):
            paths.append((source, path, levels, skipped))
    strict = bool(rank_by_chain and hops)
    found = _held_answer(answers, named if rank_by_chain else named[:1], paths, hops, strict, topic_set, max_added)
    if found is not None:
        return found
    lead = _chain_end_first(answers, chain, paths, hops, topic_set, max_added, question_uses or {},
                            question_order) if strict else None
    if lead is None and not_the_topic:
        lead = _instead_of_topic(answers, walk_chain(chain, topics), paths, hops, topic_set, max_added)
    if lead is not None:
        return lead, False
    if not strict:
        return None, False
    # no path reaches the question's hop: the model's first answer at a shorter path's end, as without the switch
    return _held_answer(answers, named[:1], paths, hops, False, topic_set, max_added) or (None, False)


def _held_answer(answers: Sequence[Answer], names: Sequence[str], paths: Sequence[tuple], hops: int | None,
                 strict: bool, topic_set: set[str], max_added: int) -> tuple[Completion | None, bool] | None:
    """Completion at the first path end holding one of `names` (in order), or None when none does.

    `strict`: only the question's hop counts (or the end of a path that went further and holds it there).
    """
    for i, name in enumerate(names):
        for source, path, levels, skipped in paths:
            at = _level_holding(levels, name, hops, strict)
            if at is None:
                continue
            reached = levels[at - 1]
            # with the chain's answers first (`strict`), an answer before this one that the path does not reach
            # (one the graph does not hold: "Broadway musical" for the tag "broadway") goes behind it
            ordered, moved = (list(answers), []) if i == 0 and not strict else _reached_first(
                answers, reached, topic_set)
            done = _added(ordered, reached, topic_set, source, max_added)
            if done is None and not moved:
                return None, True
            completed, kept, cut = done if done is not None else (ordered, [], 0)
            return Completion(completed, source, path[at - 1][0], "path", added=kept, held=len(reached), cut=cut,
                              path=list(path[:at]), frontier_cut=skipped, walked=len(path),
                              ranked_after=moved), True
    return None


def _level_holding(levels: Sequence[Sequence[str]], name: str, hops: int | None, strict: bool = False) -> int | None:
    """The hop (1-based) of a path whose entities hold `name`: the question's hop when it is short of the path's
    end and holds it, else the end; None when neither does (`strict`: nor when the path is short of `hops`)."""
    if strict and hops is not None and len(levels) < hops:
        return None
    if hops is not None and 0 < hops < len(levels) and _holds(levels[hops - 1], name):
        return hops
    return len(levels) if levels and _holds(levels[-1], name) else None


def _reached_first(answers: Sequence[Answer], reached: Sequence[str],
                   topic_set: set[str]) -> tuple[list[Answer], list[str]]:
    """`answers` with those in `reached` first (the model's order kept on each side), and the names moved behind."""
    folded = {e.casefold() for e in reached}
    inside = [a for a in answers if (a.entity or a.text).casefold() in folded]
    outside = [a for a in answers if all(a is not b for b in inside)]
    return inside + outside, [a.text for a in outside if (a.entity or a.text) not in topic_set]


def _chain_end_first(answers: Sequence[Answer], chain: Sequence[Any], paths: Sequence[tuple], hops: int,
                     topic_set: set[str], max_added: int, question_uses: Mapping[str, int],
                     question_order: Sequence[str] = ()) -> Completion | None:
    """The entities the latest path reaching the question's hop stands on there, before the model's answers.

    The model's answer line may name what no step of its chain reached
    ("... Widows' Peak is in Japanese. Therefore, the answer is Japanese"
    after ``< Widows' Peak -> in_language -> Irish >``); the chain is the
    grounded part, so its answers lead.  Not when the model's first answer is
    an entity the chain itself wrote, at another hop: that answer is
    grounded too, and the reading's hop count may be what is wrong ("which
    film did Luke Wilson write the story for" read as two hops, 54% sure: the
    film, not its director).  The entities the chain wrote come
    first, then the others the graph holds there.  Only a path whose first
    `hops` hops walk the relations the question names, each as often as
    named, is read so: a chain that wandered off (the films' writers where
    the question asks for their genres) says nothing about the answer.
    """
    if not question_uses:
        return None
    written = {n: None for t in chain for n in (t.head, t.tail)}
    own = next((a.entity for a in answers if a.entity and a.entity not in topic_set), None)
    if own is not None and own in written:
        # the model answered with an entity its own chain wrote, at another hop than the reading's: the grounded
        # answer it chose stands (on the dev runs the path's end led 24 times over such answers, right once)
        return None
    for source, path, levels, skipped in paths:
        if len(path) < hops or not levels[hops - 1] or Counter(r for r, _ in path[:hops]) != Counter(question_uses):
            continue
        if question_order and [r for r, _ in path[:hops]] != list(question_order):
            continue
        there = {e: None for e in levels[hops - 1] if e not in topic_set}  # `reach` never returns `source`
        reached = [e for e in written if e in there] + [e for e in there if e not in written]
        if not reached:
            continue
        kept = reached[:max_added]
        lead = [Answer(text=e, entity=e, in_graph=True, score=None, completed_from_graph=True) for e in kept]
        kept_folded = {e.casefold() for e in kept}
        model = [a for a in answers if (a.entity or a.text).casefold() not in kept_folded]
        return Completion(lead + model, source, path[hops - 1][0], "path", added=kept, held=len(reached),
                          cut=len(reached) - len(kept), path=list(path[:hops]), frontier_cut=skipped,
                          walked=len(path), ranked_after=[a.text for a in model], from_chain=True)
    return None


def _instead_of_topic(answers: Sequence[Answer], steps: Sequence[Any], paths: Sequence[tuple], hops: int | None,
                      topic_set: set[str], max_added: int) -> Completion | None:
    """The entities the chain's latest path ends at, before the model's answer when that names only the question's
    own entity.

    A question asks about its entity, not for it ("Sara Nord's daughter's father is who"); a chain that walked
    back to it (``< Sara Nord -> children -> Alma Lind > < Alma Lind -> parents -> Sara Nord >``) and an
    answer line that names it say the model took the way home, while the path it walked (children, then
    parents) reaches the answer beside it (Jonas Ek).  Only when the chain's last hop came back to the
    question's entity, no answer of the model's is another entity of the graph, and only the latest path that
    reaches something else; at the question's hop when the path walked further.  A chain that went elsewhere
    and an answer line that names the question's entity anyway say nothing about where the answer is.
    """
    if not any(a.entity in topic_set for a in answers if a.entity) or any(
            a.entity and a.entity not in topic_set for a in answers):
        return None
    if len(steps) < 2 or steps[-1].kind != "hop" or steps[-1].target not in topic_set:
        return None
    for source, path, levels, skipped in paths:
        at = min(hops, len(levels)) if hops else len(levels)
        there = [e for e in levels[at - 1] if e not in topic_set] if at else []
        if not there:
            continue
        kept = there[:max_added]
        lead = [Answer(text=e, entity=e, in_graph=True, score=None, completed_from_graph=True) for e in kept]
        return Completion(lead + list(answers), source, path[at - 1][0], "path", added=kept, held=len(there),
                          cut=len(there) - len(kept), path=list(path[:at]), frontier_cut=skipped, walked=len(path),
                          ranked_after=[a.text for a in answers], from_chain=True, instead_of_topic=True)
    return None


def _holds(level: Sequence[str], name: str) -> bool:
    folded = name.casefold()
    return any(e.casefold() == folded for e in level)


def complete_from_chain(
    answers: Sequence[Answer],
    chain: Sequence[Any],
    graph: Any,
    topics: Sequence[str] = (),
    max_added: int = MAX_COMPLETED_ANSWERS,
    hops: int | None = None,
    rank_by_chain: bool = False,
    question_uses: Mapping[str, int] | None = None,
    question_order: Sequence[str] = (),
    not_the_topic: bool = False,
) -> Completion | None:
    """Completion along the chain's path from a topic entity, else from its last triplet (module docstring).

    With `rank_by_chain` the answers the chain's path reaches (at the
    question's `hops`) lead: the model's answers it does not reach are
    ranked after, and when it reaches none of them the path's own end comes
    first when it walks the question's relations (`question_uses`, in
    the order of `question_order` when given; `_along_path`).  This changes the first answer, so it is its own switch
    (DoG's ``chain_answers_first``), and so is `not_the_topic` (the same
    switch in DoG: an answer that is the question's own entity, after a chain
    that came back to it, gives way to the path's end).

    A path whose end holds the model's answer and nothing more is the
    answer complete: the last triplet, a fact the chain wrote after (a
    film's language, whose other films are no answer), is not read then.
    """
    if not chain:
        return None
    along, held = _along_path(answers, chain, graph, topics, max_added, hops, rank_by_chain, question_uses,
                              question_order, not_the_topic)
    if along is not None or held:
        return along
    return complete_from_last_triplet(answers, chain[-1], graph, topics, max_added)
