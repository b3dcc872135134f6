"""The wording reader: hops, named relations and their order, read from the question's words (MetaQA-fitted).

Kept for comparison (``reader=wording``), not a default: its synonyms and
phrase rules were written from MetaQA's dev wordings, and on graphs of other
domains they name the wrong relations or none (docs/benchmarks.md).  The
default reader chooses among the graph's own paths
(`kgqa_core.reading.readers`).

How many hops a question needs, read from its wording against the graph's relations.

A constant budget (DoG's 4 triplets, RoK's 2-hop paths) either cuts 3-hop
questions short or lets 1-hop chains ramble.  The question names each hop:
"who directed the films written by the writer of X" mentions *directed*,
*written* and *writer*, three words that are the words of relations the
graph holds around X (``directed_by``, ``written_by``).  `estimate_hops`
counts such relation-word mentions in the question (each position once),
using the relations of the triplets the method already has in hand (the
prompt context), so it follows the graph's own vocabulary rather than a
list of phrasings.  Words match by form, not meaning: the same word, two
forms of one stem ("acted", "actors"; "writer", "written"), the head of a
compound ("screenwriter" names ``written_by``), a common irregular past
("wrote"), or a plain synonym ("types" of films: genre).  Words naming one
relation count once when they form one phrase ("release years", "starred
which actors", "the director that directed X", "what year was X
released"); the topic entity's name is masked first, so it names nothing,
and a role word right after it is X's own ("the X director": a hop).  A
relation word next to a word of sharing ("the same actor of X", "films that
share directors with X", "whose actors also appear in X", "films for the
writer of X") names a hop there and back, and the question gets one hop
more, unless the question names that relation twice already ("the director
of X also directed"); "the same movie" with no relation word is two hops.
A question that names no relation word counts as one hop.  The estimate is
clamped to `MAX_HOPS`.  On all 39,138 MetaQA dev questions (vocabulary: the
KB's relations; benchmarks/hop_estimate.py) it is exact for all but one (100.0%);
counting exact words only, 33%.  The phrase, apposition and sharing rules were
written from the dev questions it missed, so this is a fit to MetaQA's
question templates (which its test split shares), not a held-out figure.

The estimate also reads the order of the hops (`HopEstimate.order`, from
the topic entity out: the relation word nearest its name first), which
DoG's ``hop_order`` uses to offer each hop only its own relation.

`dog_step_budget` turns it into DoG's ``max_steps``: two triplets per hop
(one to take the hop, one to spare for listing or a wrong turn), at least
the old constant 4, so only questions estimated at three hops get more.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:  # pragma: no cover
    from .reading import QuestionReading

from ..graph.hub_caps import relation_words

MAX_HOPS = 3
MIN_DOG_STEPS = 4
_WORD = re.compile(r"[^\W_]+")
# relation-name words that say nothing about which relation is meant
_GENERIC = frozenset("has have had is of in on by to for the a an with as at type id name value inverse".split())


@dataclass(frozen=True)
class HopEstimate:
    hops: int
    mentions: list[str]  # the question words that matched a relation, in question order
    shared: bool = False  # a relation word next to a word of sharing: one hop more (there and back)
    relations: list[str] = field(default_factory=list)  # the relations the mentions name, in question order
    # how many hops of a path each named relation accounts for (a shared one twice); empty when some hop's
    # relation is unnamed ("who appeared in the same movie with X")
    uses: dict[str, int] = field(default_factory=dict)
    # the relation of each hop, from the topic entity out: the words nearest the topic's name first ("which person
    # directed the movies written by X": written_by, then directed_by); empty when `uses` is, when the question
    # has no topic name in it, or when two mentions stand equally near it
    order: list[str] = field(default_factory=list)

    def note(self, budget_name: str, budget: int) -> str:
        said = ", ".join(repr(m) for m in self.mentions) if self.mentions else "no relation word"
        if self.shared:
            said += " (shared: there and back)"
        return f"{budget_name} {budget} from the question: {said} -> about {self.hops} hop(s)"


# a relation word next to one of these names a hop there and back ("the same actor of X")
_SHARING = frozenset("same share shares shared sharing also co together".split())
# these name a hop there and back even with no relation word beside them ("appeared in the same movie with X")
_SHARING_ALONE = frozenset("same together".split())
# "films for the writer of X" are the writer's films: the writer's relation there and back
_FOR = "for"
# "starred which actors", "released in which years": a wh-word between two words of one relation joins them
_WH = frozenset("which what".split())
# question words that are plain synonyms of a relation-name word ("what types of films": genre; the words
# or topics that describe an item are its tags; a person who appears in a film starred in it; an author wrote)
_SYNONYMS = {"type": "genre", "types": "genre", "kind": "genre", "kinds": "genre", "sort": "genre", "sorts": "genre",
             "category": "genre",
             "categories": "genre", "tongue": "language", "tongues": "language",
             "describe": "tags", "describes": "tags", "describing": "tags", "described": "tags",
             "terms": "tags", "topics": "tags", "keywords": "tags",
             "appear": "starred", "appears": "starred", "appeared": "starred", "appearing": "starred",
             "author": "write", "authors": "write", "authored": "write"}
# irregular past forms of verbs relation names use ("written_by" is asked as "who wrote X")
_IRREGULAR = {"wrote": "write", "spoke": "speak", "sang": "sing", "drew": "draw", "made": "make",
              "won": "win", "led": "lead", "built": "build", "took": "take", "gave": "give", "sold": "sell",
              "bought": "buy", "taught": "teach", "began": "begin", "grew": "grow", "held": "hold"}
_MIN_COMPOUND_HEAD = 5  # "screenwriter" -> "writer"; shorter tails match too much


def _same_word(a: str, b: str) -> bool:
    """Two forms of one word: equal, or one stem with a short ending ('writer'/'written', 'acted'/'actors')."""
    if a == b:
        return True
    n = len(os.path.commonprefix([a, b]))
    shorter = min(len(a), len(b))
    return (n >= 4 and n >= shorter - 3) or (n >= 3 and n >= shorter - 2)


def _relations_of(word: str, words: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """The relations `word` names: by its own form, its irregular base, or its compound head (several when shared)."""
    for form in (word, _IRREGULAR.get(word), _SYNONYMS.get(word)):
        if form:
            hit = next((r for rw, r in words.items() if _same_word(form, rw)), None)
            if hit is not None:
                return hit
    for start in range(1, len(word) - _MIN_COMPOUND_HEAD + 1):
        head = word[start:]
        hit = next((r for rw, r in words.items() if _same_word(head, rw)), None)
        if hit is not None:
            return hit
    return ()


_TOPIC = "qtopicentity"  # what a topic entity's name becomes in the question (no relation word matches it)


def mask_topics(question: str, topics: Iterable[str]) -> str:
    """`question` with each topic entity's name replaced by one placeholder word.

    A name is not a relation mention ("Writers' Block", "The Director"), and
    where the name sits tells which relation words wrap it.
    """
    for t in sorted({t for t in topics if t and t.strip()}, key=len, reverse=True):
        question = re.sub(rf"(?<!\w){re.escape(t.strip())}(?!\w)", f" {_TOPIC} ", question, flags=re.IGNORECASE)
    return question


_JOINERS = frozenset("that who whom whose was were is are did does".split())
_SKIP = _GENERIC | _SHARING | _WH | _JOINERS  # never a relation mention


def _one_phrase(between: list[str], word: str) -> bool:
    """Whether two words of one relation, `between` in between and `word` the second, name it once."""
    if not between:
        return True
    if _TOPIC in between:
        if between[-1] == _TOPIC and not word.endswith("ed"):
            return False  # "the films directed by the X director": X's director, a hop of its own
        # "what year was X released", "when was the film X released"
        return len(between) <= 4 and not any(t in _SHARING for t in between)
    return len(between) <= 2 and all(t in _WH or t in _JOINERS or t in _GENERIC for t in between) and any(
        t in _WH or t in _JOINERS for t in between)


def estimate_hops(question: str, relations: Iterable[str], topics: Iterable[str] = ()) -> HopEstimate:
    """Hops = question words naming a relation of `relations`, in [1, MAX_HOPS].

    Words naming one relation count once when they are one phrase: adjacent
    ("release years"), joined by a wh-word ("starred which actors",
    "released in which years") or a relative ("the director that
    directed"), or wrapped round the topic entity ("what year was X
    released").  A role word right before the topic is an apposition ("the
    writer X"), so "films for the writer X" is one hop and "films for the
    writer of X" two (there and back).
    """
    words: dict[str, tuple[str, ...]] = {}  # relation word -> the relations whose names hold it
    for r in dict.fromkeys(relations):
        for w in relation_words(r).casefold().split():
            if w not in _GENERIC and len(w) > 2 and r not in words.get(w, ()):
                words[w] = words.get(w, ()) + (r,)
    mentions: list[str] = []
    named: list[tuple[str, ...]] = []  # the relation(s) of each mention
    places: list[list[int]] = []  # the token positions of each mention (a phrase: all its words)
    shared_relations: list[tuple[str, ...]] = []
    sharing_distance: list[int] = []  # words between each shared mention and its word of sharing
    shared_mention: list[int] = []  # the index in `mentions` of each shared mention
    last_relations: tuple[str, ...] = ()
    last_pos = -2
    tokens = _WORD.findall(mask_topics(question, topics).casefold())
    for pos, w in enumerate(tokens):
        if (w in _SKIP and w not in _SYNONYMS) or w == _TOPIC:  # "what type of movie": a synonym (genre)
            continue
        hits = _relations_of(w, words)
        if not hits:
            continue
        if len(hits) > 1 and pos + 1 < len(tokens) and tokens[pos + 1] not in _SKIP and set(hits) & set(
                _relations_of(tokens[pos + 1], words)):
            continue  # "imdb rating": a word several relations share, the next word says which
        if set(hits) & set(last_relations) and _one_phrase(tokens[last_pos + 1:pos], w):
            last_pos = pos
            places[-1].append(pos)
            continue
        mentions.append(w)
        named.append(hits)
        places.append([pos])
        near = [abs(i - pos) for i in range(max(0, pos - 4), min(len(tokens), pos + 5)) if tokens[i] in _SHARING]
        if near:
            shared_relations.append(hits)
            sharing_distance.append(min(near))
            shared_mention.append(len(mentions) - 1)
        elif _FOR in tokens[max(0, pos - 2):pos] and tokens[pos + 1:pos + 2] == ["of"]:
            shared_relations.append(hits)
            sharing_distance.append(1)
            shared_mention.append(len(mentions) - 1)
        last_relations, last_pos = hits, pos
    # the relation nearest the word of sharing is the one walked there and back; when the question names it
    # twice ("the director of X also directed", "whose actors also appear in X") both legs are named already
    shared = bool(shared_relations) and named.count(
        shared_relations[min(range(len(sharing_distance)), key=sharing_distance.__getitem__)]) == 1
    if not shared and not shared_relations and any(t in _SHARING_ALONE for t in tokens):
        shared = True  # "who appeared in the same movie with X": a hop there and back, its relation unnamed
    hops = len(mentions) + int(shared) if mentions else 1 + int(shared)  # there and back is two hops
    # the relation walked there and back is the one nearest its word of sharing ("directed movies that
    # share actors with X": the actors)
    there_and_back = sorted((d, i) for i, (d, rs) in enumerate(zip(sharing_distance, shared_relations))
                            if named.count(rs) == 1)
    uses: dict[str, int] = {}
    for rs in named + ([shared_relations[i] for _, i in there_and_back[:1]] if shared else []):
        for r in rs:
            uses[r] = uses.get(r, 0) + 1
    if not mentions or (shared and not there_and_back) or hops > MAX_HOPS:
        uses = {}
    back = shared_mention[there_and_back[0][1]] if shared and there_and_back else None
    order = _hop_order(tokens, named, places, back) if uses else []
    return HopEstimate(max(1, min(MAX_HOPS, hops)), mentions, shared,
                       list(dict.fromkeys(r for rs in named for r in rs)), uses, order)


_AGENT_ENDINGS = ("er", "or", "ers", "ors", "ist", "ists")  # director, writers, actors: a person in a role


_AUXILIARIES = frozenset("did does do was is were has have had".split())  # "which films did X direct"


def _role_word(tokens: list[str], i: int) -> bool:
    """Whether the relation word at `i`, right after the topic's name, is the name's own role (a noun phrase
    with it: "the X director", "X written films"), not the sentence's verb ("X starred who", "the films
    written by X release")."""
    if tokens[i].endswith(_AGENT_ENDINGS):
        return True
    return i + 1 < len(tokens) and tokens[i + 1] not in ("who", "whom", "which", "what")


def _hop_order(tokens: list[str], named: list[tuple[str, ...]], places: list[list[int]],
               back: int | None) -> list[str]:
    """The relation of each hop from the topic entity out, or [] when the wording does not say.

    English nests a chain of relations round the entity it starts from.  A
    role word right after the name is the entity's own ("the X director",
    "X written films"), and so is a verb whose subject the name is ("which
    films did X direct"): the first hop.  Then the words before the name,
    nearest first ("which person directed the movies written by X":
    written_by, then directed_by), then the words after it, nearest first
    ("the movies directed by the director of X starred who": starring is
    the last hop).  A relation walked there and back (`back`, the mention
    beside a word of sharing) takes two hops at its place.
    benchmarks/hop_estimate.py --relations checks it on the MetaQA dev
    questions (docs/benchmarks.md, "Hop estimate and the order of the hops").
    """
    at = [i for i, t in enumerate(tokens) if t == _TOPIC]
    if len(at) != 1 or any(len(rs) != 1 for rs in named):
        return []
    topic = at[0]

    def rank(i: int) -> tuple[int, int]:
        before = [topic - p for p in places[i] if p < topic]
        after = [p - topic for p in places[i] if p > topic]
        subject = topic > 0 and tokens[topic - 1] in _AUXILIARIES  # "did X direct": the verb is X's own hop
        if after and min(after) == 1 and (subject or _role_word(tokens, topic + 1)):
            return (0, 1)
        if before:
            return (1, min(before))
        return (2, min(after))

    keys = [rank(i) for i in range(len(named))]
    if len(set(keys)) != len(keys):
        return []
    order: list[str] = []
    for i in sorted(range(len(named)), key=keys.__getitem__):
        order += [named[i][0]] * (2 if i == back else 1)
    return order


def relations_near(graph: object, entities: Iterable[str], cap: int = 200, fan: int = 20,
                   depth: int = MAX_HOPS) -> list[str]:
    """Relation names within `depth` hops of `entities`, reading at most `cap` triplets of any one entity.

    Each further hop reads at most `fan` new entities per starting entity (the
    first found), so a hub costs a bounded number of lookups on any graph
    store, and a 3-hop question's last relation ("the languages of the films
    ...") is in the vocabulary although it is three hops out.
    """
    from ..graph.hub_caps import capped_neighbours

    found: dict[str, None] = {}
    for ent in dict.fromkeys(entities):
        seen = {ent}
        frontier = [ent]
        for level in range(depth):
            reached: dict[str, None] = {}
            for e in frontier:
                for t in capped_neighbours(graph, e, cap, {})[0]:
                    found.setdefault(t.relation, None)
                    other = t.other(e)
                    if other not in seen:
                        reached.setdefault(other, None)
            frontier = list(reached)[:fan]
            seen.update(frontier)
    return list(found)


MAX_GRAPH_VOCABULARY = 500  # a local graph with at most this many relation names lends them all


def hop_vocabulary(graph: object, topics: Iterable[str]) -> list[str]:
    """The relation names a question's words are matched against: those near `topics`, then the graph's own.

    `relations_near` reads a bounded neighbourhood, so a relation three
    hops out that the first entities reached do not hold ("the languages of
    the films directed by the director of X", when X has no language) can be
    missing; a graph held in memory with a small relation vocabulary (MetaQA
    has 9) lends all of its names.  A remote store lends only what is near.
    """
    from ..graph.store import is_local_graph

    names = relations_near(graph, topics)
    every = getattr(graph, "relations", None) if is_local_graph(graph) else None
    if isinstance(every, (list, tuple)) and len(every) <= MAX_GRAPH_VOCABULARY:
        names = list(dict.fromkeys([*names, *every]))
    return names




class WordingReader:
    """`estimate_hops` as a `QuestionReader`: sure when the words name a relation of every hop."""

    name = "wording"

    def read(self, question: str, graph: object, topics: Iterable[str]) -> "QuestionReading":
        from .reading import QuestionReading

        topics = [t for t in topics if t and graph.has_entity(t)]  # type: ignore[attr-defined]
        est = estimate_hops(question, hop_vocabulary(graph, topics), topics)
        said = ", ".join(repr(m) for m in est.mentions) if est.mentions else "no relation word"
        if est.shared:
            said += " (shared: there and back)"
        return QuestionReading(reader=self.name, hops=est.hops, confidence=1.0 if est.uses else 0.5,
                               sure=bool(est.relations), relations=list(est.relations), uses=dict(est.uses),
                               order=list(est.order), mentions=list(est.mentions),
                               explanation=f"the question's words: {said} -> about {est.hops} hop(s)")
