"""How well a walk's hops line up with the question's own words, one word per hop.

Why: a small model choosing among the graph's walks likes long walks that
repeat one relation ("texas -borders-> louisiana -borders-> ... -borders->")
even when the question names that relation once and another one not at all
("the capitals of the states that border texas").  The lexicon's mean
closeness of each hop to the whole question cannot see this: a repeated hop
is as close as its first use.  Here each hop must be matched to a different
content word of the question (an optimal one-to-one assignment over
sentence-embedding similarities), so a hop the question does not ask for
finds no word left to match and costs the walk, and a relation the question
names twice may be walked twice.

Two adjacent words that name one relation better than either alone ("high
points" and `highest point`, "death place" and `deathPlace`) are one phrase,
matched to one hop: otherwise the walk that adds a hop for the second word
(`highest point` then `elevation` for "high") outscores the one the question
asks for.

Two words apart that name one relation far better together ("what
position does X play" and `plays_position`, "the country where Y holds
citizenship" and `country of citizenship`) are one phrase too, but only
when together they are a near paraphrase of it (`APART_AT`): looser pairs
of words apart ("movies ... director") are as often two hops' words.

The question words that ask for the kind of the answer ("where": a place;
"when": a time; "who": a person) name no hop of their own, but the last hop
answers them: a walk's last hop (walked forward, so its relation names what
it reaches) that no content word names is not charged for that when such a
word is at least `COVER_AT` close to it ("where is the club X plays for"
and `is_in_country`).  They never add more than that: "where was X born"
still prefers `place_of_birth` to a walk one hop further.  The wh-words are
English grammar, the same in any domain.

The noun that an interrogative "which" or "what" asks with ("which company
is X produced by", "the films of X were in which genres") says what kind of
thing the answer is, so it is kept out of the words that name hops: as one
of them it named a hop past the answer ("company" and `manufacturer` back
again, to the company's other cars; "genres" and `has_genre` back again).
Instead a walk whose last hop is walked forward (its relation's name says
what it reaches) gains the noun's closeness to that relation above
`COVER_AT`, and pays, as for a relation-naming word left unsaid, when that
hop is not close to a noun that names some relation of the graph.  The
determiner is told from a relative "which" by its place (it opens the
question or follows a preposition), which is grammar again, not a word
list; `ANSWER_NOUNS` off is the reading before it.

Nothing here is written from a dataset's wording: the words are the
question's (its entity names masked, English function words left out), the
relations' words are the graph's (and the user's aliases), and the
similarities come from the sentence-embedding model.
"""

from __future__ import annotations

import functools
import re
from typing import Any, Sequence

import numpy as np

from ..graph.words import STOP_WORDS
from .reading import RelationPlan
from .vocabulary import RelationVocabulary, embedded_text

# A hop matched to a word this close to it or closer adds to a walk; one matched less closely (or to nothing)
# takes away.  The cosine of unrelated single words in MiniLM's space lies around 0.1-0.3, of a relation's
# words and a paraphrase of them around 0.5 and up.
BASELINE = 0.35
# Two adjacent words are one phrase when some relation is this much closer to the two together than to either
# alone, and at least PHRASE_AT close (a paraphrase).  Checked on the dev questions of four domains (no model):
# at 0.1 it joins "high points", "death place", "chief town", "alma mater", "head coach", "release year(s)",
# "acted films"; at 0.05 also "starred movies" ("who starred movies for the director of X", where "movies" names
# a hop of its own).  0 joins nothing.
PHRASE_GAIN = 0.1
PHRASE_AT = 0.5
# A word of the question this close to some relation of the graph's walks (or closer) names a relation; a walk
# that leaves it to no hop pays ``cover`` x (its closeness - COVER_AT) (`joint_alignment`).  Without it a walk is
# only paid for the words it takes, so a one-hop walk that takes "written" costs nothing for leaving "types" and
# "screenwriter" of a three-hop question unnamed.  0.45 lies between unrelated words (0.1-0.3) and paraphrases
# (0.5 and up); checked without the model on the dev questions of four domains (docs/history/benchmarks-2026.md,
# "Words no hop names").
COVER_AT = 0.45
COVER_WEIGHT = 1.0
# Two words apart (not side by side) are one phrase only when some relation is this close to them together (and
# PHRASE_GAIN closer than to either alone).  Checked without the model on the dev questions of four domains: at 0.75
# it joins "chief ... officer", "country ... citizenship", "country ... originated", "place ... died"; below it
# also "movies ... director" (0.64, to `starred_actors`) and "premier ... open", two hops' words.
APART_AT = 0.75
# Question words that ask for the kind of the answer: they name no hop, but a walk's last hop may answer them
# (English grammar, not a domain's words; "what"/"which" say nothing of the kind).
ANSWER_WORDS = ("where", "when", "who", "whom")
# The noun an interrogative "which"/"what" asks with ("which movies did X direct", "in which country is Y") says what
# kind of thing the answer is, like "where" and "who": it names no hop of its own (a walk that gives it one walks
# past the answer), and a walk's last forward hop gains or pays by its closeness to it (`_answer_noun_score`;
# English grammar: the determiner opens the question or follows a preposition; a relative "which" follows a noun).
# Without the model, on 94 dev questions of four domains, the best-aligned walk reached gold for 60 against 51 (58
# before `NOUN_STANDS_OUT`; benchmarks/alignment_choice.py, docs/history/benchmarks-2026.md, "The answer's kind").
# ANSWER_NOUN_NAMES off: the noun only cancels the cost of an unnamed last hop, as "where" does (51 of 94:
# DBpedia's "which division ..." lost the relation its noun names).
ANSWER_NOUNS = True
ANSWER_NOUN_NAMES = True
# The noun of a copular question ("what are the films that ...", "which is the river that ...") asks for the answer's
# kind as "which films" does (English grammar: a wh-word, a form of "be", "the", then a noun phrase whose last word is
# its head: "what is the official language of ..." asks for a language, and "official" may still name a hop).
COPULAR_NOUNS = False
# A "which"/"what" asked in place, its noun the question's last word ("the screenwriter of X also wrote which films",
# "X's wife practises which religion"), asks for the answer's kind as an opening one does (English grammar: a relative
# "which" opens a clause, a verb and what follows it, so it is not followed by one last word).  Before it, "films"
# there was a content word naming a hop of its own (`starred_actors`, the closest relation to it), so a walk one
# hop longer read the question, 62% sure; on the dev questions that ask so (two MetaQA, one family, one university
# question) DoG answered 4 of 4 with it against 3 (docs/benchmarks.md, "A which asked in place").
IN_SITU_NOUNS = True
_COPULAS = frozenset({"is", "are", "was", "were"})
_WH_DETERMINERS = frozenset({"which", "what"})
_PREPOSITIONS = frozenset("of in for to with from by on at about into onto under over after before during "
                          "through among between".split())
# A word about as close to most of the relations the question's walks offer as to any one of them is a word of the
# graph's whole domain ("movies" in a film graph: a median 0.38-0.44 over its relations, where a word that names one
# relation lies at 0.15-0.35 from the rest), not the name of a relation: with `reading_domain_words` on, its closeness
# to every relation walked forward is lowered by SPREAD_ON x (its median closeness - SPREAD_FLOOR), where there are at
# least SPREAD_AMONG relations to judge by, but not where it is a near paraphrase of the relation (SPREAD_KEEP or
# closer: "east" and `east` among the compass relations, which are all close to each other) or stands out from the
# rest for it (SPREAD_STANDS_OUT above the word's median: "born" and `place_of_birth` in a people graph whose kinship
# relations are all near "born").  The floor is the top of where unrelated words lie (0.1-0.3).  Without the model it
# read 52 of 94 dev walks right against 50; with it, DoG on 60 MetaQA whole-KB questions was right as often with it as
# without (50 of 60: two questions gained, two lost), so it is off by default (SPREAD_WEIGHT 0;
# docs/history/benchmarks-2026.md, "Words of the whole domain").
SPREAD_ON = 3.0
SPREAD_WEIGHT = 0.0
SPREAD_FLOOR = 0.3
SPREAD_AMONG = 5
SPREAD_KEEP = APART_AT
SPREAD_STANDS_OUT = 0.2
# An answer noun names a relation (for `_answer_noun_score`) only where it stands out for it by this much above its
# median closeness to the walks' relations, or is a near paraphrase of it (SPREAD_KEEP), when there are SPREAD_AMONG
# relations or more to judge by: "films" is 0.54 close to `starred_actors` and about as close to every relation of a
# film graph, so it confirms no last hop (the rule of `reading_domain_words`, applied to the answer's kind only).
# Without the model: 60 of 94 dev walks against 58 (docs/history/benchmarks-2026.md, "The answer's kind");
# 0 turns it off.
NOUN_STANDS_OUT = SPREAD_STANDS_OUT
# The answer's kind read off the entity a walk reaches, not only its last relation's name: "in which country was
# X's band formed" asks for a country; `formed_in` reaches a city and `formed_in -> located_in` a country, but no
# relation is called "country", so the names alone cannot tell them apart.  The entity's name often can, to the
# embedder ("Norway" is 0.64 close to "country", "Bergen" 0.34).  A walk gains ENTITY_KIND_WEIGHT x (the closeness of
# an answer noun to the name of the entity it reaches (its example), above ENTITY_KIND_AT).  Off by default (0): without
# the model (benchmarks/alignment_choice.py, 268 dev questions of three held-out domains and four made-up graphs) the
# best-aligned walk reached gold for 153 at weight 1 and 155 at weight 2 against 151, losing none; but with the model
# DoG at 2 gave the same answers on 144 dev questions of four domains and, on the made-up graphs, gained one (music)
# and lost three (pharmacology, family), where a wrong walk ends at an entity named like the answer's kind as readily
# ("arthritis" for "which illness"; docs/benchmarks.md, "The answer's kind from the entity reached").
ENTITY_KIND_AT = COVER_AT
ENTITY_KIND_WEIGHT = 0.0
# A walk's hops in the order the question names them: English nests its relations outwards from the entity they
# start at ("the directors of the movies written by X", "X's wife's ethnicity", "the films that X starred in"), so
# the word of a walk's first hop stands nearer the entity's name than the word of its second.  Each pair of a walk's
# hops whose words stand the other way round costs the walk ORDER_COST (`_order_inversions`); 0 turns it off.  English
# grammar, not a domain's words; only hops matched to words count (not the answer's kind).  Off by default: without
# the model it read one more of 132 dev walks right (0.05-0.2 alike), but with it (0.1) no reading of 73 dev
# questions of seven graphs changed, and on the MetaQA questions DoG misses it moved the reading from one wrong walk to
# another: what misleads there is a word of the whole domain ("movies") naming a hop
# (docs/history/benchmarks-2026.md, "The order of a walk's hops").
ORDER_COST = 0.0
# A noun between an article and an entity's name ("who directed the movie Heat", "the river Thames") says what that
# entity is, not a relation to walk from it: it names a hop only where it is a near paraphrase of a relation
# (`SPREAD_KEEP` or closer: "the state that has the capital Atlanta" and `capital`), else its closeness to every
# relation counts as 0 (`_appositive_nouns`; English grammar: the article before it and the name after it).  Without
# it the 135M read "who directed the movie Heat" as directed_by, then directed_by back to another film ("movie" naming
# the second hop) once the walks' ends were tempered (`reading_stop_weight`).  False: the reading before it.
APPOSITIVES = True
# A noun followed by a participle, "by" and an entity's name ("the films written by X", "the sport played by Y", "the
# students supervised by Z") is the kind of thing the participle's relation reaches from that entity: the participle
# names the hop, and the noun names none of its own, as an appositive noun names none (`_agent_nouns`; English
# grammar: a passive participle's agent phrase; "the movies starred by actors in X", whose agent is no entity's
# name, is left as it was: there the noun names the hop back).  Only a near paraphrase of a relation still names it
# (`SPREAD_KEEP`: "the sport played by Y" where the graph has `sport`).  Without it "who are the directors of the
# films starred by X" read as starred_actors, directed_by and back over directed_by to films ("films" naming the
# third hop), and "the films written by X starred which actors" one hop past the actors
# (docs/history/benchmarks-2026.md, "A noun before a participle and an entity as its agent").  False: the
# reading before it.
AGENT_NOUNS = True
# The noun a question asks for its answer with ("what states ..."), said again of other entities ("what states border
# states that border colorado"), says that they are of the same kind: there, too, it names no hop of its own, as an
# appositive or agent noun names none (`_kind_repeats`; a near paraphrase of a relation still names it, `SPREAD_KEEP`).
# Without it the second "states" named `country` (0.61 close to it in MiniLM), and the reading took a third hop, from
# the states to their country, 93% sure (docs/history/benchmarks-2026.md, "The answer's kind said again").
# False: the reading before it.
KIND_REPEATS = True
# A noun before a relative clause or a present participle whose subject or object is an entity's name ("states
# bordering texas", "states that border colorado", "the club that X plays for") is, like an agent noun, the kind of
# thing the clause's relation reaches from that entity: it names no hop of its own (`_relative_nouns`; English
# grammar; a near paraphrase of a relation still names it, `SPREAD_KEEP`: "club" and `plays_in_club`, 0.76).  On the
# ten dev questions it changes it read four of five geography questions as their two hops (none before), and with
# DoG's guidance bar at 0.6 DoG answered 8 of 10 either way, F1 7.53 against 6.37
# (docs/history/benchmarks-2026.md, "A noun before a relative clause or a participle").  False: the reading
# before it.
RELATIVE_NOUNS = True
_RELATIVES = frozenset({"that", "which", "who", "whom"})
_RELATIVE_REACH = 3  # how many words after the relative pronoun the entity's name may stand
_PASSIVE_AGENT = "by"
_ARTICLES = frozenset({"the", "a", "an"})
_WORD = re.compile(r"[^\W_]+")
# English pronouns, modal verbs and the like: they name no relation in any graph ("can you tell me ...")
_FUNCTION = frozenset("i me my we us our you your he him his she her they them their there can could would "
                      "will shall should may might must please all any some many much also".split())


def masked_question(question: str, topics: Sequence[str]) -> str:
    """The question with its topic entities' names replaced by 'it' (a name says nothing about relations)."""
    return _replace_names(question, {t.strip(): "it" for t in topics if t and t.strip()})


def _replace_names(question: str, names: dict[str, str]) -> str:
    """The question with each name (as a whole word, any case) replaced by its stand-in, the longest names first."""
    for name in sorted(names, key=len, reverse=True):
        question = re.sub(rf"(?<!\w){re.escape(name)}(?!\w)", names[name], question, flags=re.IGNORECASE)
    return question


def _without_topics(question: str, topics: Sequence[str]) -> str:
    """The question, casefolded, with its topic entities' names (and their bare names) replaced by 'it'."""
    from ..answers.chain_entities import bare_name
    return masked_question(question, [*topics, *filter(None, (bare_name(t) for t in topics))]).casefold()


def question_words(question: str, topics: Sequence[str]) -> list[str]:
    """The question's content words in order, with its topic entities' names left out.

    A word the question repeats is kept each time: "states that border states that border X" names two hops.

    >>> question_words("what are the capital cities of the states which border Texas", ["texas"])
    ['capital', 'cities', 'states', 'border']
    >>> question_words("the state that has the capital Atlanta", ["atlanta, georgia"])  # the graph's qualifier aside
    ['state', 'capital']
    >>> question_words("which state has the capital Atlanta", ["atlanta, georgia"])  # "state": the answer's kind
    ['capital']
    """
    tokens = _WORD.findall(_without_topics(question, topics))
    kind = _answer_noun_positions(tokens) if ANSWER_NOUNS else set()
    return [w for i, w in enumerate(tokens) if i not in kind and _content(w)]


def _appositive_nouns(question: str, topics: Sequence[str]) -> set[str]:
    """The question's content words that stand only between an article and a topic entity's name (`APPOSITIVES`).

    A word the question also uses elsewhere is left out: it may name a hop there.

    >>> sorted(_appositive_nouns("who directed the movie Heat?", ["Heat"]))
    ['movie']
    >>> sorted(_appositive_nouns("who wrote the book it was based on", []))  # a pronoun is no name
    []
    >>> sorted(_appositive_nouns("which movies did the movie star of Heat direct", ["Heat"]))  # no name after it
    []
    """
    if not APPOSITIVES:
        return set()
    return _nouns_only_where(question, topics, lambda i, tokens, named: (
        0 < i and i + 1 in named and tokens[i - 1] in _ARTICLES))


def _agent_nouns(question: str, topics: Sequence[str]) -> set[str]:
    """The question's content words that stand only right before a participle, "by" and an entity's name
    (`AGENT_NOUNS`): "the movies starred by actors in X" names its hops with every word.

    A word the question also uses elsewhere is left out: it may name a hop there.

    >>> sorted(_agent_nouns("who are the directors of the films starred by Idina Menzel", ["Idina Menzel"]))
    ['films']
    >>> sorted(_agent_nouns("what continent does the sport played by Simon Mignolet originate from", ["Simon Mignolet"]))
    ['sport']
    >>> sorted(_agent_nouns("who produced the album by Iron Meadow", ["Iron Meadow"]))  # no participle
    []
    >>> sorted(_agent_nouns("which company is Ford GT produced by", ["Ford GT"]))  # the entity's name is no noun
    []
    >>> sorted(_agent_nouns("the dates of movies starred by actors in Quality Street", ["Quality Street"]))
    []
    """
    if not AGENT_NOUNS:
        return set()
    return _nouns_only_where(question, topics, lambda i, tokens, named: (
        i + 3 in named and tokens[i + 2] == _PASSIVE_AGENT and _content(tokens[i + 1])))


def _relative_nouns(question: str, topics: Sequence[str], on: bool | None = None) -> set[str]:
    """The question's content words that stand only right before a present participle and an entity's name, or
    before a relative pronoun whose clause names an entity within `_RELATIVE_REACH` words (`RELATIVE_NOUNS`; ``on``
    None: that setting).

    >>> sorted(_relative_nouns("what are the high points of states surrounding mississippi", ["mississippi"], on=True))
    ['states']
    >>> sorted(_relative_nouns("where is the club that Ann Lee plays for", ["Ann Lee"], on=True))
    ['club']
    >>> sorted(_relative_nouns("what are the lakes in states bordering texas", ["texas"], on=True))
    ['states']
    >>> sorted(_relative_nouns("which river runs through the most states", [], on=True))
    []
    """
    if not (RELATIVE_NOUNS if on is None else on):
        return set()

    def place(i: int, tokens: Sequence[str], named: set[int]) -> bool:
        if tokens[i] in _PREPOSITIONS:  # "states through which X runs": the noun is before the preposition
            return False
        if i + 2 < len(tokens) and tokens[i + 1].endswith("ing") and _content(tokens[i + 1]) and i + 2 in named:
            return True
        return (i + 1 < len(tokens) and tokens[i + 1] in _RELATIVES
                and any(j in named for j in range(i + 2, i + 2 + _RELATIVE_REACH)))

    return _nouns_only_where(question, topics, place)


def _kind_repeats(question: str, topics: Sequence[str]) -> set[str]:
    """The question's content words that say again the noun its "which"/"what" asks with (`KIND_REPEATS`): the
    same word, or the same word in another form ("state", "states": `answers.chain_entities.same_word_family`),
    elsewhere in the question.

    >>> sorted(_kind_repeats("what states border states that border colorado", ["colorado"]))
    ['states']
    >>> sorted(_kind_repeats("which state borders the states that border utah", ["utah"]))
    ['states']
    >>> sorted(_kind_repeats("which rivers run through states bordering new mexico", ["new mexico"]))
    []
    """
    if not (KIND_REPEATS and ANSWER_NOUNS):
        return set()
    from ..answers.chain_entities import same_word_family

    tokens = _WORD.findall(_without_topics(question, topics))
    kind = _answer_noun_positions(tokens)
    nouns = [tokens[i] for i in kind]
    return {w for i, w in enumerate(tokens)
            if i not in kind and _content(w) and any(same_word_family(w, n) for n in nouns)}


def _nouns_only_where(question: str, topics: Sequence[str], place: Any) -> set[str]:
    """The question's content words (not the answer's kind) that stand only where ``place(i, tokens, named)`` holds:
    ``tokens`` the question's words with each topic entity's name one word "it", ``named`` the positions of those
    names.  A word the question also uses elsewhere is left out: it may name a hop there."""
    marked = _topic_marked_tokens(question, topics)
    named = {i for i, w in enumerate(marked) if w.startswith("qqtopic")}
    tokens = ["it" if i in named else w for i, w in enumerate(marked)]
    kind = _answer_noun_positions(tokens) if ANSWER_NOUNS else set()
    at = {i for i in range(len(tokens)) if _content(tokens[i]) and i not in kind and place(i, tokens, named)}
    elsewhere = {w for i, w in enumerate(tokens) if i not in at}
    return {tokens[i] for i in at} - elsewhere


def described_nouns(question: str, topics: Sequence[str]) -> list[tuple[str, str]]:
    """The nouns that say what an entity is, or what a hop from it reaches, and so name no hop of their own, each
    with why in a domain expert's words (`APPOSITIVES`, `AGENT_NOUNS`; a near paraphrase of a relation still names
    it, so a reader shows only those its walk left to no hop).

    >>> described_nouns("who are the directors of the films starred by Idina Menzel", ["Idina Menzel"])
    [('films', 'what a hop from the entity after it reaches')]
    >>> described_nouns("who directed the movie Heat", ["Heat"])
    [('movie', 'what the entity after it is')]
    """
    apposed = _appositive_nouns(question, topics)
    agents = _agent_nouns(question, topics) | _relative_nouns(question, topics)
    said = apposed | agents
    return ([(w, "what the entity after it is") for w in sorted(apposed)]
            + [(w, "what a hop from the entity after it reaches") for w in sorted(agents)]
            + [(w, "again the kind of thing the answer is, of other entities the question names")
               for w in sorted(_kind_repeats(question, topics) - said)])


def _content(word: str) -> bool:
    return word not in STOP_WORDS and word not in _FUNCTION and word != "it" and len(word) > 1 and not word.isdigit()


def _answer_noun_positions(tokens: Sequence[str]) -> set[int]:
    """Positions of the nouns an interrogative "which"/"what" asks with (`ANSWER_NOUNS`; at the question's end too,
    `IN_SITU_NOUNS`), and with `COPULAR_NOUNS` of the noun a copular "what are the ..." asks for."""
    def opens(i: int) -> bool:  # a wh-word that opens the question or follows a preposition
        return tokens[i] in _WH_DETERMINERS and (i == 0 or tokens[i - 1] in _PREPOSITIONS)

    found = {i for i in range(1, len(tokens)) if opens(i - 1) and _content(tokens[i])}
    if IN_SITU_NOUNS and len(tokens) >= 3 and tokens[-2] in _WH_DETERMINERS and _content(tokens[-1]):
        found.add(len(tokens) - 1)  # asked in place, at the end: "X also wrote which films"
    if COPULAR_NOUNS:  # only where other words are left to name the hops ("what is the capital of X": "capital")
        copular = set()
        for i in range(3, len(tokens)):
            if tokens[i - 1] == "the" and tokens[i - 2] in _COPULAS and opens(i - 3) and _content(tokens[i]):
                j = i  # the phrase's head is its last word ("the official language": "language")
                while j + 1 < len(tokens) and _content(tokens[j + 1]):
                    j += 1
                copular.add(j)
        if any(_content(w) and i not in found | copular for i, w in enumerate(tokens)):
            found |= copular
    return found


def answer_nouns(question: str, topics: Sequence[str]) -> list[str]:
    """The nouns an interrogative "which"/"what" asks with: what kind of thing the answer is.

    >>> answer_nouns("in which country is the club that Ann plays for", ["Ann"])
    ['country']
    >>> answer_nouns("the screenwriter of Pat and Mike also wrote which films", ["Pat and Mike"])
    ['films']
    >>> answer_nouns("what are the capital cities of the states which border Texas", ["texas"])
    []
    """
    if not ANSWER_NOUNS:
        return []
    tokens = _WORD.findall(_without_topics(question, topics))
    return [tokens[i] for i in sorted(_answer_noun_positions(tokens))]


def _adjacent_pairs(question: str, topics: Sequence[str], words: Sequence[str]) -> list[int]:
    """Indices i where words[i] and words[i + 1] stand side by side in the question (nothing between them)."""
    masked = _without_topics(question, topics)
    return [i for i in range(len(words) - 1)
            if re.search(rf"(?<!\w){re.escape(words[i])}\s+{re.escape(words[i + 1])}(?!\w)", masked)]


def join_phrases(question: str, topics: Sequence[str], words: list[str], relation_vectors: Any, embedder: Any,
                 gain: float = PHRASE_GAIN) -> tuple[list[str], Any]:
    """The words with each pair that names a relation better than either word alone joined into one.

    A pair is joined when some relation's similarity to the two words
    together (in the question's order) is at least `PHRASE_AT` (`APART_AT`
    for two words apart) and `gain` above its similarity to each word alone.
    Side-by-side pairs are joined first (of two overlapping ones, the one that
    gains more), then pairs of the words left.  Returns the words (each phrase
    in place of its first word, its second word dropped) and their embeddings.

    Examples
    --------
    >>> from kgqa_core.graph.embeddings import load_embedder
    >>> emb = load_embedder()
    >>> rel = emb.encode(["plays position", "plays in club"])
    >>> join_phrases("what position does Ann play", ["Ann"], ["position", "play"], rel, emb)[0]
    ['position play']
    """
    vectors = embedder.encode(words)
    if gain <= 0 or len(words) < 2:
        return words, vectors
    adjacent = set(_adjacent_pairs(question, topics, words))
    pairs = [(i, j) for i in range(len(words)) for j in range(i + 1, len(words))]
    together = embedder.encode([f"{words[i]} {words[j]}" for i, j in pairs])
    alone = relation_vectors @ vectors.T  # relations x words
    joint = relation_vectors @ together.T  # relations x pairs
    gains = []  # (side by side, gain, pair index)
    for k, (i, j) in enumerate(pairs):
        best = int(np.argmax(joint[:, k]))
        g = float(joint[best, k] - max(alone[best, i], alone[best, j]))
        side = i in adjacent and j == i + 1
        if joint[best, k] >= (PHRASE_AT if side else APART_AT) and g >= gain:
            gains.append((side, g, k))
    used: set[int] = set()
    second: dict[int, int] = {}  # a phrase's first word -> its pair's index; its second word is dropped
    for _, _, k in sorted(gains, key=lambda x: (not x[0], -x[1])):
        i, j = pairs[k]
        if not {i, j} & used:
            used |= {i, j}
            second[i] = k
    if not second:
        return words, vectors
    dropped = {pairs[k][1] for k in second.values()}
    out_words, out_vectors = [], []
    for i, w in enumerate(words):
        if i in second:
            out_words.append(f"{w} {words[pairs[second[i]][1]]}")
            out_vectors.append(together[second[i]])
        elif i not in dropped:
            out_words.append(w)
            out_vectors.append(vectors[i])
    return out_words, np.stack(out_vectors)


def answer_words(question: str, topics: Sequence[str]) -> list[str]:
    """The question's words that ask for the kind of its answer (`ANSWER_WORDS`), each once.

    >>> answer_words("where is the club that Ann plays for", ["Ann"])
    ['where']
    """
    found = set(_WORD.findall(_without_topics(question, topics)))
    nouns = [w for w in answer_nouns(question, topics) if w not in ANSWER_WORDS]
    return [w for w in ANSWER_WORDS if w in found] + nouns


def _answer_fill(question: str, topics: Sequence[str], relations: Sequence[str],
                 vocabulary: RelationVocabulary | None, embedder: Any, baseline: float) -> Any:
    """For each relation, what a walk's last (forward) hop of it earns from the question's answer words.

    `baseline` (a matched hop that neither adds nor takes away: the cost of an unnamed hop cancelled) where some
    answer word is at least `COVER_AT` close to the relation, else 0 (the hop stays unnamed); with each relation's
    closeness to each answer word (relations x `answer_words`), and to each answer noun where it stands out
    (`_standing_out`, for `_answer_noun_score`).  None: no answer word.
    """
    asked = answer_words(question, topics)
    if embedder is None or not asked or not relations:
        return None
    rel = embedder.encode([embedded_text(r, vocabulary) for r in relations])
    sims = rel @ embedder.encode(asked).T  # relations x answer words
    close = sims.max(axis=1)
    nouns = [j for j, w in enumerate(asked) if w not in ANSWER_WORDS]
    named = _standing_out(sims[:, nouns]) if ANSWER_NOUN_NAMES else sims[:, :0]
    return np.where(close >= COVER_AT, baseline, 0.0), sims, named


def kind_nouns(question: str, topics: Sequence[str]) -> list[str]:
    """The nouns the question asks for its answer with ("which country"): `answer_words` less "where", "who", ..."""
    return [w for w in answer_words(question, topics) if w not in ANSWER_WORDS]


def _entity_kinds(question: str, topics: Sequence[str], entities: Sequence[str], embedder: Any,
                  nouns: Sequence[str] | None = None) -> dict[str, float] | None:
    """For each entity a walk reaches, how much plainer than `ENTITY_KIND_AT` its name says the kind of thing the
    question's answer nouns ask for (their best closeness to it above the bar, 0 below); None: nothing to judge.

    >>> from kgqa_core.graph.embeddings import load_embedder
    >>> kinds = _entity_kinds("in which country was Ola Vik's band formed", ["Ola Vik"], ["Bergen", "Norway"],
    ...                       load_embedder())
    >>> kinds["Norway"] > kinds["Bergen"] == 0.0
    True
    """
    if embedder is None:
        return None
    nouns = kind_nouns(question, topics) if nouns is None else list(nouns)
    names = [e for e in dict.fromkeys(entities) if e]
    if not nouns or not names:
        return None
    close = (embedder.encode(names) @ embedder.encode(nouns).T).max(axis=1)
    return {e: max(0.0, float(c) - ENTITY_KIND_AT) for e, c in zip(names, close)}


def entity_kinds_text(question: str, topics: Sequence[str], plan: RelationPlan, embedder: Any) -> str:
    """What the trace says of the answer's kind read off the entity `plan` reaches ("" when it gained nothing)."""
    nouns = kind_nouns(question, topics)
    kinds = _entity_kinds(question, topics, [plan.example], embedder, nouns)
    if not kinds or not kinds.get(plan.example):
        return ""
    return (f"the entity the walk reaches, {plan.example}, is named like a {' / '.join(nouns)} "
            f"({kinds[plan.example] + ENTITY_KIND_AT:.2f} close, at least {ENTITY_KIND_AT:.2f}), so the walk gained "
            "for reaching the kind of thing asked for (`reading_answer_kind`)")


def _topic_token(k: int) -> str:
    return f"qqtopic{k}qq"


def _topic_marked_tokens(question: str, topics: Sequence[str]) -> list[str]:
    """The question's words, casefolded, each topic entity's name (or bare name) one word `_topic_token` (k)."""
    from ..answers.chain_entities import bare_name

    names: dict[str, str] = {}
    for k, t in enumerate(topics):
        if t and t.strip():
            names.update({n: f" {_topic_token(k)} " for n in (t.strip(), bare_name(t)) if n})
    return _WORD.findall(_replace_names(question, names).casefold())


def word_distances(question: str, topics: Sequence[str], words: Sequence[str]) -> list[dict[str, int]] | None:
    """For each of `words` (`question_words`, phrases joined by `join_phrases`), where it stands from each topic
    entity's name, in words of the question (topic -> offset: 1 right after it, -1 right before it; from the
    nearest mention; a topic the question does not name is left out).  None where the words cannot be placed (a
    word the question does not hold as `question_words` gives it).

    >>> word_distances("who are the directors of the movies written by Jack Nicholson", ["Jack Nicholson"],
    ...                ["directors", "movies", "written"])
    [{'Jack Nicholson': -6}, {'Jack Nicholson': -3}, {'Jack Nicholson': -2}]
    """
    tokens = _topic_marked_tokens(question, topics)
    at = {k: [i for i, w in enumerate(tokens) if w == _topic_token(k)] for k in range(len(topics))}
    plain = ["it" if w.startswith("qqtopic") else w for w in tokens]
    kind = _answer_noun_positions(plain) if ANSWER_NOUNS else set()
    content = [(w, i) for i, w in enumerate(plain) if i not in kind and _content(w)]
    used: set[int] = set()
    out = []
    for word in words:
        placed = []
        for part in word.split():
            spot = next((c for c, (w, i) in enumerate(content) if w == part and c not in used), None)
            if spot is None:
                return None
            used.add(spot)
            placed.append(content[spot][1])
        out.append({topics[k]: min((placed[0] - p for p in ps), key=abs) for k, ps in at.items() if ps})
    return out


def _order_inversions(m: Any, hops_i: Any, words_i: Any, walks: Sequence[tuple[str, int, int]],
                      distances: Sequence[dict[str, int]]) -> int:
    """How many pairs of a walk's hops are named in the question the other way round (`ORDER_COST`).

    ``m`` is hops x words (the rows the matching used), ``hops_i``/``words_i`` the matching, ``walks`` each walk's
    (topic, first hop's row, end).  Only words on one side of the entity's name are compared: a clause after it
    ("the club that X plays for", "the films directed by the director of X starred who") may come before or after
    what stands before it.  Hops whose rows are the same (one relation walked twice, "states that border
    states that border X") may swap their words at no cost to the matching, so they are taken in the better order.
    """
    word_of = {int(h): int(w) for h, w in zip(hops_i, words_i) if w < len(distances)}
    count = 0
    for topic, start, end in walks:
        rows = [h for h in range(start, end) if h in word_of]
        if len(rows) < 2 or any(topic not in distances[word_of[h]] for h in rows):
            continue
        dist = {h: distances[word_of[h]][topic] for h in rows}
        groups: dict[bytes, list[int]] = {}
        for h in rows:
            groups.setdefault(np.round(m[h], 6).tobytes(), []).append(h)
        for same in groups.values():  # the same row: their words in the walk's order, nearest first
            for h, d in zip(same, sorted((dist[h] for h in same), key=lambda d: (d > 0, abs(d)))):
                dist[h] = d
        seq = [dist[h] for h in rows]
        count += sum(1 for a in range(len(seq)) for b in range(a + 1, len(seq))
                     if (seq[a] > 0) == (seq[b] > 0) and abs(seq[a]) > abs(seq[b]))
    return count


def _stands_out(sim: Any, by: float) -> Any:
    """Relations x words: where a word is a near paraphrase of the relation (`SPREAD_KEEP`) or `by` closer to it
    than to the median relation (the test `spread_discount` and `_standing_out` share)."""
    return (sim >= SPREAD_KEEP) | (sim - np.median(sim, axis=0) >= by)


def _standing_out(nouns: Any) -> Any:
    """Relations x answer nouns, with 0 where a noun does not stand out for the relation (`NOUN_STANDS_OUT`)."""
    if NOUN_STANDS_OUT <= 0 or nouns.shape[0] < SPREAD_AMONG or nouns.shape[1] == 0:
        return nouns
    return np.where(_stands_out(nouns, NOUN_STANDS_OUT), nouns, 0.0)


@functools.lru_cache(maxsize=4096)  # asked for every last hop of every walk a reading weighs
def names_its_head(relation: str) -> bool:
    """Whether a relation's name says what its head is, not its tail: a name that ends with "of" ("member of",
    "capital of", "part of": X is the member of Y), read the English way.  Walked forward, such a hop reaches Y,
    which its name does not say; walked backwards, it reaches the members.

    >>> names_its_head("member_of"), names_its_head("isPartOf"), names_its_head("place_of_birth")
    (True, True, False)
    """
    from ..graph.hub_caps import relation_words

    words = (relation_words(relation) or relation).lower().split()
    return len(words) > 1 and words[-1] == "of"


def _says_what_it_reaches(hop: Any) -> bool:
    """Whether a hop's relation name says what kind of thing the hop reaches (`names_its_head`)."""
    return hop.forward != names_its_head(hop.relation)


def _answer_noun_score(nouns: Any, lasts: Sequence[Any], row: dict[str, int], cover: float) -> float:
    """What a walk's last hop earns or costs for the kind of thing the question asks for (its answer nouns).

    ``nouns`` is relations x answer nouns (cosines; 0 where the noun does not stand out, `_standing_out`).  A last
    hop whose relation's name says what it reaches (walked forward; backwards for a name that ends with "of",
    `names_its_head`) gains the noun's closeness to it above `COVER_AT`,
    over and above the words that name it; a walk whose last hops all say so and none of them `COVER_AT` close to a noun that names some relation pays ``cover`` x
    (that noun's closeness to its nearest relation - `COVER_AT`), as a content word left to no hop does.  A hop
    whose name does not say what it reaches (walked backwards, or forward for a name ending with "of") is neither
    paid nor charged.  Of several walks (one
    per entity) the best last hop counts: they reach one answer.  A noun about as close to every relation (a word of
    the graph's whole domain, "films" in a film graph) names none of them (`NOUN_STANDS_OUT`).
    """
    if nouns.shape[1] == 0:
        return 0.0
    judged = [row[h.relation] for h in lasts if _says_what_it_reaches(h)]
    if not judged:
        return 0.0
    close = nouns[judged]  # the last hops whose names say what they reach x nouns
    gain = float(np.maximum(close - COVER_AT, 0.0).max())
    names = np.maximum(nouns.max(axis=0) - COVER_AT, 0.0) * cover  # what leaving each noun unanswered costs
    if len(judged) == len(lasts):
        gain -= float(names[(close < COVER_AT).all(axis=0)].sum())
    return gain


def _with_answer_column(m: Any, hops: Sequence[Any], last: Sequence[bool], fill: Any, row: dict[str, int]) -> Any:
    """The hops x words matrix with one more column: the answer words' fill for last hops whose name says what they
    reach (forward, or backwards for a name ending with "of": `names_its_head`), 0 elsewhere."""
    if fill is None:
        return m
    col = np.array([[fill[0][row[h.relation]] if is_last and _says_what_it_reaches(h) else 0.0]
                    for h, is_last in zip(hops, last)])
    return np.hstack([m, col])


def _similarities(question: str, topics: Sequence[str], relations: Sequence[str],
                  vocabulary: RelationVocabulary | None, embedder: Any,
                  phrase_gain: float = PHRASE_GAIN, spread: float | None = None, raw: bool = False) -> tuple:
    """The question's words (phrases joined) and each relation's cosine with each (None: nothing to match).

    A relation's text is its words and the user's aliases for it; words of the whole domain are lowered
    (`spread_discount`, weight ``spread``: None is `SPREAD_WEIGHT`).  ``raw``: the cosines before that too, third
    (`hop_rows` takes a hop walked backwards from them).
    """
    words = question_words(question, topics)
    if embedder is None or not words or not relations:
        return (words, None, None) if raw else (words, None)
    rel = embedder.encode([embedded_text(r, vocabulary) for r in relations])
    words, vectors = join_phrases(question, topics, words, rel, embedder, phrase_gain)
    described = {w for w, _ in described_nouns(question, topics)}  # nouns that name no hop of their own
    sim = _named_only_by_paraphrase(rel @ vectors.T, words, described)
    return (words, spread_discount(sim, spread), sim) if raw else (words, spread_discount(sim, spread))


def _named_only_by_paraphrase(sim: Any, words: Sequence[str], described: set[str]) -> Any:
    """`sim` (relations x words) with a described noun's closeness (`described_nouns`) kept only to the relations it
    is a near paraphrase of (`SPREAD_KEEP`), 0 to the rest: it says what its entity is, or what a hop from it
    reaches, and names a hop only as the relation's own name."""
    columns = [j for j, w in enumerate(words) if w in described]
    if not columns:
        return sim
    sim = sim.copy()
    sim[:, columns] = np.where(sim[:, columns] >= SPREAD_KEEP, sim[:, columns], 0.0)
    return sim


def hop_rows(sim: Any, raw: Any, hops: Sequence[Any], row: dict[str, int]) -> Any:
    """One row of closeness to the question's words per hop: lowered for words of the whole domain where the hop is
    walked forward, as measured where it is walked backwards.

    Why: a relation's name says what it reaches walked forward (`directed_by`: a director), so a word of the whole
    domain ("movies") does not name that hop; walked backwards it reaches what the relation's name does not say
    (`starred_actors` backwards: films), and there the question's "films that have the same actor" names it.
    """
    return np.array([(sim if getattr(h, "forward", True) else raw)[row[h.relation]] for h in hops])


def spread_discount(sim: Any, weight: float | None = None) -> Any:
    """`sim` (relations x words) with each word's closeness lowered by how close it is to all the relations at once.

    Why: a word of the graph's domain ("movies", "films" in a film graph) is about as close to every relation,
    and without this it names whichever hop is left, so a walk adds a hop the question never asked for ("when did
    the movies written by X release": `has_genre ~ 'movies'`).  A word that names a relation, or two ("size":
    `area`, `population`), is far from most of the others, and keeps its closeness; so does a near paraphrase of
    a relation (`SPREAD_KEEP`), however close its relation is to the others, and a word for the relation it is
    `SPREAD_STANDS_OUT` closer to than to the median relation.  ``weight`` None: `SPREAD_WEIGHT`.
    """
    weight = SPREAD_WEIGHT if weight is None else weight
    if weight <= 0 or sim.shape[0] < SPREAD_AMONG:
        return sim
    lowered = sim - weight * np.maximum(np.median(sim, axis=0) - SPREAD_FLOOR, 0.0)
    return np.where(_stands_out(sim, SPREAD_STANDS_OUT), sim, lowered)


def domain_words(question: str, topics: Sequence[str], relations: Sequence[str],
                 vocabulary: RelationVocabulary | None = None, embedder: Any = None,
                 phrase_gain: float = PHRASE_GAIN, spread: float | None = None) -> list[tuple[str, float]]:
    """The question's words that `spread_discount` lowers: (word, its median closeness to `relations`).

    What the trace tells a domain expert: these words are about as close to most of their graph's relations,
    so the reading takes them as the name of no hop walked forward (`hop_rows`).
    """
    weight = SPREAD_WEIGHT if spread is None else spread
    if weight <= 0:
        return []
    words, sim = _similarities(question, topics, relations, vocabulary, embedder, phrase_gain, spread=0.0)
    if sim is None:
        return []
    lowered, best = spread_discount(sim, weight), sim.argmax(axis=0)
    median = np.median(sim, axis=0)
    return [(w, float(median[j])) for j, w in enumerate(words) if lowered[best[j], j] < sim[best[j], j]]


def hop_alignment(question: str, topics: Sequence[str], plans: Sequence[RelationPlan],
                  vocabulary: RelationVocabulary | None = None, embedder: Any = None,
                  baseline: float = BASELINE, phrase_gain: float = PHRASE_GAIN,
                  cover: float = 0.0, spread: float | None = None, order: float | None = None,
                  kind: float | None = None) -> list[float] | None:
    """Each plan's alignment: the sum over its hops of (similarity to the word assigned to it - `baseline`).

    Parameters
    ----------
    question, topics : the question and its topic entities (whose names are not words to match).
    plans : the walks to score.
    vocabulary : the user's relation aliases, read with each relation's words.
    embedder : the sentence-embedding model; without one there is no alignment (None is returned).
    baseline : the similarity at which a matched hop neither adds nor takes away.
    phrase_gain : how much closer two adjacent words must come to a relation together than alone to be matched as
        one phrase (`join_phrases`); 0 matches every word alone.
    cover : what a word that names a relation of the walks (its closest relation at least `COVER_AT` close) costs a
        walk that matches it to no hop, per unit of closeness above `COVER_AT`; 0 (the default here) costs nothing.
    spread : how much a word of the whole domain is lowered (`spread_discount`); None: `SPREAD_WEIGHT`.
    order : what each pair of a walk's hops named in the question the other way round costs (`_order_inversions`);
        None: `ORDER_COST`.
    kind : how much a walk gains where the name of the entity it reaches says the kind of thing the question's
        answer noun asks for (`_entity_kinds`); None: `ENTITY_KIND_WEIGHT`.

    Returns
    -------
    One score per plan (higher: its hops are named by more, and closer, words of the question), or None when
    there is no embedder, no plan or no content word.
    """
    return joint_alignment(question, topics, [[p] for p in plans], vocabulary, embedder, baseline, phrase_gain,
                           cover=cover, spread=spread, order=order, kind=kind)


def joint_alignment(question: str, topics: Sequence[str], combos: Sequence[Sequence[RelationPlan]],
                    vocabulary: RelationVocabulary | None = None, embedder: Any = None, baseline: float = BASELINE,
                    phrase_gain: float = PHRASE_GAIN, cover: float = 0.0,
                    among: Sequence[str] = (), spread: float | None = None,
                    order: float | None = None, kind: float | None = None) -> list[float] | None:
    """Each combination's alignment: the hops of all its walks (one walk per topic entity) matched to different words.

    Why: a question that names two entities names a walk for each ("the borders of massachusetts and the
    borders of new york"), and a word can name a hop of only one of them.  Scored one walk at a time, each
    entity's walk may take every word, so the first entity's best walk takes both "borders" (two hops)
    though the second "borders" is the other entity's hop.  Matched together, the words are shared out.

    Parameters and the score are those of `hop_alignment`, over the hops of all a combination's walks.
    ``among``: more relations a word may name (for ``cover``: all the walks from the question's entities, when only
    a few combinations are scored); the combinations' own relations always count.

    Examples
    --------
    >>> from kgqa_core.graph.embeddings import load_embedder
    >>> from kgqa_core.reading.reading import PlanHop, RelationPlan
    >>> one = lambda t, *rs: RelationPlan(t, tuple(PlanHop(r) for r in rs))  # noqa: E731
    >>> q, topics = "the borders of massachusetts and the borders of new york", ["massachusetts", "new york"]
    >>> a, b = joint_alignment(q, topics, [[one("massachusetts", "borders", "borders"), one("new york", "borders")],
    ...                                    [one("massachusetts", "borders"), one("new york", "borders")]],
    ...                        embedder=load_embedder())
    >>> b > a
    True
    """
    from scipy.optimize import linear_sum_assignment

    relations = sorted({h.relation for c in combos for p in c for h in p.hops} | set(among))
    words, sim, raw = _similarities(question, topics, relations, vocabulary, embedder, phrase_gain, spread,
                                    raw=True)  # relations x words
    if sim is None:
        return None
    row = {r: i for i, r in enumerate(relations)}
    naming = np.maximum(sim.max(axis=0) - COVER_AT, 0.0) * cover  # what leaving each word to no hop costs
    fill = _answer_fill(question, topics, relations, vocabulary, embedder, baseline)
    kind = ENTITY_KIND_WEIGHT if kind is None else kind
    kinds = _entity_kinds(question, topics, [p.example for c in combos for p in c], embedder) \
        if fill is not None and kind > 0 else None
    order = ORDER_COST if order is None else order
    distances = word_distances(question, topics, words) if order > 0 else None
    scores = []
    for combo in combos:
        hops = [h for p in combo for h in p.hops]
        last = [k == len(p.hops) - 1 for p in combo for k in range(len(p.hops))]
        m = _with_answer_column(hop_rows(sim, raw, hops, row), hops, last, fill, row)
        hops_i, words_i = linear_sum_assignment(-m)
        score = float(np.sum(m[hops_i, words_i] - baseline)) - (len(hops) - len(hops_i)) * baseline
        if distances is not None:
            ends = np.cumsum([len(p.hops) for p in combo])
            walks = [(p.topic, int(e - len(p.hops)), int(e)) for p, e in zip(combo, ends)]
            score -= order * _order_inversions(m, hops_i, words_i, walks, distances)
        named = words_i[words_i < len(naming)]  # the answer words' column is never charged
        if fill is not None:
            score += _answer_noun_score(fill[2], [p.hops[-1] for p in combo], row, cover)
        if kinds is not None:
            score += kind * max(kinds.get(p.example, 0.0) for p in combo)
        scores.append(score - float(naming.sum() - naming[named].sum()))
    return scores


def plan_words(question: str, topics: Sequence[str], plan: RelationPlan,
               vocabulary: RelationVocabulary | None = None, embedder: Any = None, among: Sequence[str] = (),
               phrase_gain: float = PHRASE_GAIN,
               spread: float | None = None) -> tuple[list[tuple[str, str, float]], list[tuple[str, str, float]]]:
    """`hop_words` and `unnamed_words` of one plan, from one matching of its hops to the question's words."""
    from scipy.optimize import linear_sum_assignment

    own = [h.relation for h in plan.hops]
    relations = list(dict.fromkeys([*own, *among]))
    words, m, raw = _similarities(question, topics, relations, vocabulary, embedder, phrase_gain, spread, raw=True)
    if m is None:
        return [], []
    # hops x words, one row per hop (a relation walked twice: twice)
    hops_m = hop_rows(m, raw, plan.hops, {r: i for i, r in enumerate(relations)})
    fill = _answer_fill(question, topics, relations, vocabulary, embedder, BASELINE)
    last = [k == len(plan.hops) - 1 for k in range(len(plan.hops))]
    hops_m = _with_answer_column(hops_m, plan.hops, last, fill, {r: i for i, r in enumerate(relations)})
    asked = answer_words(question, topics)
    matches = [(h.relation, "", 0.0) for h in plan.hops]
    taken: dict[int, int] = {}  # word -> the hop it names
    for i, j in zip(*linear_sum_assignment(-hops_m)):
        if j == len(words):  # the answer words' column: the last hop answers what the question asks for
            if hops_m[i, j] > 0:  # shown with the answer word closest to it
                close = fill[1][relations.index(plan.hops[i].relation)]
                matches[i] = (plan.hops[i].relation, asked[int(np.argmax(close))], float(close.max()))
            continue
        if hops_m[i, j] > 0:  # 0: a word that names no relation (an appositive noun, `APPOSITIVES`)
            matches[i] = (plan.hops[i].relation, words[j], float(hops_m[i, j]))
            taken[int(j)] = int(i)
    last, k = plan.hops[-1], len(plan.hops) - 1
    nouns = ([w for w in asked if w not in ANSWER_WORDS][: fill[2].shape[1]]
             if fill is not None and _says_what_it_reaches(last) else [])
    named_by = fill[2] if nouns else None  # where the nouns stand out (`_answer_fill`)
    noun_left = []
    for j, word in enumerate(nouns):  # the kind of answer asked for, and the last hop (`_answer_noun_score`)
        best, here = int(np.argmax(named_by[:, j])), float(named_by[relations.index(last.relation), j])
        if here >= COVER_AT and (here > matches[k][2] or matches[k][1] == word):  # the noun names it more plainly
            taken = {w: i for w, i in taken.items() if i != k}
            matches[k] = (last.relation, word, here)
        elif named_by[best, j] >= COVER_AT > here:
            noun_left.append((word, relations[best], float(named_by[best, j])))
    unnamed = []
    for j, word in enumerate(words):
        best = int(np.argmax(m[:, j]))
        if j not in taken and m[best, j] >= COVER_AT:
            unnamed.append((word, relations[best], float(m[best, j])))
    return matches, unnamed + noun_left


def hop_words(question: str, topics: Sequence[str], plan: RelationPlan,
              vocabulary: RelationVocabulary | None = None, embedder: Any = None,
              among: Sequence[str] = (), phrase_gain: float = PHRASE_GAIN) -> list[tuple[str, str, float]]:
    """For each hop of `plan`, the question word the alignment matched it to and their similarity ("" if none).

    What the trace shows a domain expert: which of their words the reading took each hop of its walk from.
    ``among``: the relations the phrases were judged against (all the walks' relations, as `hop_alignment`
    judged them; the plan's own when empty).
    """
    return plan_words(question, topics, plan, vocabulary, embedder, among, phrase_gain)[0]


def unnamed_words(question: str, topics: Sequence[str], plan: RelationPlan,
                  vocabulary: RelationVocabulary | None = None, embedder: Any = None,
                  among: Sequence[str] = (), phrase_gain: float = PHRASE_GAIN) -> list[tuple[str, str, float]]:
    """The question's words that name a relation (`COVER_AT` close or closer) and that no hop of `plan` takes.

    Each as (word, the relation of ``among`` or the plan it is closest to, their similarity): what the trace
    tells a domain expert the reading's walk leaves unsaid (and what ``cover`` charged it for).
    """
    return plan_words(question, topics, plan, vocabulary, embedder, among, phrase_gain)[1]


def hop_words_text(matches: Sequence[tuple[str, str, float]]) -> str:
    """``borders ~ 'border' (0.92), capital ~ 'capital' (1.00)``; a hop no word matched says so."""
    return ", ".join(f"{r} ~ '{w}' ({s:.2f})" if w else f"{r} ~ no word of the question" for r, w, s in matches)


def weigh(probs: Sequence[float], alignment: Sequence[float], weight: float) -> list[float]:
    """The model's probabilities of the walks re-weighed by their alignment: p_i * exp(weight * a_i), renormalised.

    A product of the two judges: the model's reading of the question, and how
    the walk's hops line up with the question's words.  ``weight`` 0 gives
    back the model's probabilities.

    >>> [round(p, 2) for p in weigh([0.6, 0.4], [0.0, 0.2], 5.0)]
    [0.36, 0.64]
    """
    logits = [np.log(max(p, 1e-12)) + weight * a for p, a in zip(probs, alignment)]
    top = max(logits)
    exps = [float(np.exp(x - top)) for x in logits]
    z = sum(exps)
    return [e / z for e in exps]
