"""An answer the model wrote in its own words, mapped to the entity the chain reached.

A chain of graph triplets ends at graph entities, but the answer line after
it is free text: a model writes "German" where the chain (and the graph)
holds "germans", "Russian" where it holds "russia", "michael mann" for
"Michael Mann".  Linked against the whole graph such an answer names some
other entity or none, and a correct chain is scored as a wrong answer.  This
module maps a written answer to one of the entities the chain reached, when
they are the same name:

* ``exact``: the same string (surrounding quotes and punctuation aside);
* ``case``: the same words up to case, accents and punctuation;
* ``number``: the same number written with or without thousands separators
  ("425,022" for "425022");
* ``qualified``: the entity's name without its qualifier, the part a graph
  adds after a comma or in brackets to tell namesakes apart ("Richmond" for
  "richmond, virginia", "Atlantic Division" for "Atlantic Division (NBA)"),
  when exactly one entity the chain reached has that bare name;
* ``inflection``: the same words up to English word endings (`same_word_family`):
  a shared stem and, after it, an inflectional ending (plural ``-s``/``-es``,
  ``-ed``, ``-ing``) or the ending of an adjective or demonym made from a name
  (``-an``, ``-ian``, ``-ese``, ``-ish``, ``-ic``, ``-i``), the stem's final
  vowel dropped or kept;
* ``subject``: a sentence that opens with the name of an entity the chain
  reached (not one of the question's own), followed by a word in lower case
  ("Costas Mandylor starred in both Saw IV and Saw V." for "Costas Mandylor"):
  the model answered with the entity and went on to say why; the longest such
  name;
* ``embedding``: cosine similarity of all-MiniLM-L6-v2 sentence embeddings at
  least `EMBEDDING_THRESHOLD`, among the chain's entities only, with the
  numbers of both names equal and no second entity as close (`map_to_chain`).

The rules know no words of any domain: they read word endings and sentence
embeddings only.  `repeats_question` tells an answer line that only repeats
the question's own words ("X 's dad 's child 's parent is"), which is never
an answer.  `kgqa_core.decoding.context.resolve_answers` applies them;
`answer_label` is how an answer is shown (CLI, app).

Examples
--------
>>> chain = ["Angela Merkel", "germans"]
>>> map_to_chain("German", chain)
ChainMatch(entity='germans', match='inflection', score=0.9)
>>> map_to_chain("angela merkel", chain).match
'case'
>>> map_to_chain("Atlantis", chain) is None
True
>>> repeats_question("X 's dad 's child 's parent is", "Who is X 's dad 's child 's parent?")
True
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from ..graph.linking import normalize_name
from ..trace.schema import Answer

MATCHES = ("exact", "case", "number", "qualified", "inflection", "subject", "embedding")
EMBEDDING_THRESHOLD = 0.85  # all-MiniLM-L6-v2 cosine; "Democratic Party"/"Republican Party" is 0.82
EMBEDDING_MARGIN = 0.02  # a second chain entity this close to the best makes the match ambiguous
MIN_STEM = 4  # letters a shared stem needs (3 for a plain plural: "box"/"boxes")
REPEAT_MIN_WORDS = 3  # "more than a couple of words"
REPEAT_SHARE = 0.8  # share of an answer's words that are the question's words

_TRIM = " \t\n\"'`*.,;:!?()[]<>"
_DIGITS = re.compile(r"\d+")
# a number as people write it: digits grouped in threes by commas, thin or plain spaces, or none; a decimal part
_NUMBER = re.compile(r"^[+-]?(\d{1,3}(?:[,\u2009\u202f ]\d{3})+|\d+)(\.\d+)?$")
# a qualifier a graph adds to a name to tell namesakes apart: ", virginia" or " (NBA)" at its end
_QUALIFIER = re.compile(r"^(.+?)(?:\s*,\s+[^,()]+|\s*\([^()]+\))$")
_ARTICLES = frozenset({"the", "a", "an"})
# What may follow a shared stem: English morphology, no word of any domain.  A stem-final vowel (kept in one
# word, dropped in the other), an inflectional ending, or an ending that makes an adjective or demonym from a
# name, with its plural.
_VOWELS = ("a", "e", "i", "o", "y")
_INFLECTIONS = ("s", "es", "ed", "d", "ing")
_DERIVATIONS = ("n", "ns", "an", "ans", "ian", "ians", "ean", "eans", "ese", "ish", "ic", "ics", "i", "is")
ENDINGS = frozenset(("",) + _VOWELS + _INFLECTIONS + _DERIVATIONS)
_BARE = frozenset({"", "a", "e", "i", "o", "y"})  # a stem alone or with a final vowel: two of these are two names
_PLURALS = frozenset({"s", "es"})

Similarity = Callable[[str, Sequence[str]], Sequence[float]]


@dataclass(frozen=True)
class ChainMatch:
    """A written answer matched to a chain entity: which, how (one of `MATCHES`) and a score in 0..1."""

    entity: str
    match: str
    score: float


def chain_entities_of(triplets: Iterable[Any]) -> list[str]:
    """The entities a chain reached: each triplet's head and tail, in chain order, without repeats.

    Parameters
    ----------
    triplets : the chain's graph triplets (anything with ``head`` and ``tail``); None is no chain.

    Returns
    -------
    The entity names, first reached first.

    Examples
    --------
    >>> from kgqa_core.graph.knowledge_graph import KnowledgeGraph
    >>> g = KnowledgeGraph.from_triplets([("Heat", "directed_by", "Michael Mann"),
    ...                                   ("Thief", "directed_by", "Michael Mann")])
    >>> chain_entities_of([g.find("Heat", "directed_by", "Michael Mann"),
    ...                    g.find("Thief", "directed_by", "Michael Mann")])
    ['Heat', 'Michael Mann', 'Thief']
    """
    out: dict[str, None] = {}
    for t in triplets or ():
        out[t.head] = None
        out[t.tail] = None
    return list(out)


def _canonical(word: str) -> str:
    # y -> ies is spelling, not a different ending: "comedies" is "comedy" + s
    return word[:-3] + "y" if len(word) > 4 and word.endswith("ies") else word


def same_word_family(a: str, b: str) -> bool:
    """Are two words the same word up to an English ending?

    After case folding (and ``-ies`` read as ``-y`` + ``-s``), the words share
    a stem of at least `MIN_STEM` letters and what follows it in each is one
    of `ENDINGS`: nothing, a stem-final vowel, ``-s``, ``-es``, ``-ed``,
    ``-ing``, or an adjective/demonym ending ``-n``, ``-an``, ``-ian``,
    ``-ean``, ``-ese``, ``-ish``, ``-ic``, ``-i`` (with its plural).  Two bare
    endings (nothing or a final vowel on both sides) are two names, not one
    word ("Maria"/"Mario", "Robert"/"Roberta"), except a name and its
    adjective in ``-i`` or ``-y``.  A shorter stem only takes a plain plural
    ("box"/"boxes").  Words with digits must be equal.

    Parameters
    ----------
    a, b : single words.

    Returns
    -------
    True when one is an inflected or derived form of the other (or both of one stem).

    Examples
    --------
    >>> same_word_family("German", "germans"), same_word_family("Russian", "russia")
    (True, True)
    >>> same_word_family("Italy", "Italian"), same_word_family("comedy", "comedies")
    (True, True)
    >>> same_word_family("box", "boxes")
    True
    >>> same_word_family("Austria", "Australia"), same_word_family("French", "France")
    (False, False)
    >>> same_word_family("card", "care"), same_word_family("1995", "1995s")
    (False, False)
    >>> same_word_family("Maria", "Mario"), same_word_family("Robert", "Roberta")
    (False, False)
    """
    a, b = _canonical(normalize_name(a)), _canonical(normalize_name(b))
    if a == b:
        return bool(a)
    if not (a.isalpha() and b.isalpha()):
        return False
    n = len(os.path.commonprefix([a, b]))
    ra, rb = a[n:], b[n:]
    if n >= MIN_STEM:
        if ra not in ENDINGS or rb not in ENDINGS:
            return False
        # "Maria"/"Mario", "Robert"/"Roberta": vowels that end two names, no suffix; but "Iraq"/"Iraqi"
        # and "German"/"Germany" are a name and its adjective
        return not (ra in _BARE and rb in _BARE) or {ra, rb} in ({"", "i"}, {"", "y"})
    return n >= 3 and {ra, rb} <= (_PLURALS | {""}) and "" in (ra, rb)


def _words(text: str) -> list[str]:
    return normalize_name(text).split()


def _content(words: list[str]) -> list[str]:
    return words[1:] if len(words) > 1 and words[0] in _ARTICLES else words


def is_inflection(text: str, name: str) -> bool:
    """Is `text` the name `name` with some words in another form (`same_word_family`), word for word?

    A leading article on either side is ignored ("the Germans" / "germans").

    Examples
    --------
    >>> is_inflection("the Germans", "german"), is_inflection("United State", "United States")
    (True, True)
    >>> is_inflection("German people", "germans")
    False
    """
    a, b = _content(_words(text)), _content(_words(name))
    return bool(a) and len(a) == len(b) and all(same_word_family(x, y) for x, y in zip(a, b))


def number_key(text: str) -> str | None:
    """The number a text writes, without its thousands separators, or None when it is not one number.

    Examples
    --------
    >>> number_key("425,022"), number_key("425022"), number_key("1 234.50"), number_key("1990s")
    ('425022', '425022', '1234.50', None)
    """
    m = _NUMBER.match(text.strip().strip(_TRIM.replace(".", "").replace(",", "")))
    if m is None:
        return None
    sign = "-" if text.strip().startswith("-") else ""
    return sign + re.sub(r"\D", "", m.group(1)) + (m.group(2) or "")


def bare_name(name: str) -> str | None:
    """A name without the qualifier a graph adds after a comma or in brackets, or None when it has none.

    Examples
    --------
    >>> bare_name("richmond, virginia"), bare_name("Atlantic Division (NBA)"), bare_name("Heat")
    ('richmond', 'Atlantic Division', None)
    """
    m = _QUALIFIER.match(name.strip())
    return m.group(1).strip() if m else None


def _same_numbers(a: str, b: str) -> bool:
    return _DIGITS.findall(a) == _DIGITS.findall(b)


def _ordered(chain_entities: Sequence[str], topics: Iterable[str]) -> list[str]:
    """Candidates in the order ties go: the entities the chain reached last first, the question's own last."""
    topic_set = set(topics)
    ents = list(dict.fromkeys(chain_entities))[::-1]
    return [e for e in ents if e not in topic_set] + [e for e in ents if e in topic_set]


def map_to_chain(text: str, chain_entities: Sequence[str], similarity: Similarity | None = None, *,
                 topics: Iterable[str] = (), threshold: float = EMBEDDING_THRESHOLD,
                 levels: Sequence[str] = MATCHES) -> ChainMatch | None:
    """The chain entity a written answer names, and how, or None.

    Parameters
    ----------
    text : the answer as the model wrote it.
    chain_entities : the entities the chain reached (`chain_entities_of`).
    similarity : ``similarity(text, names)`` -> cosine similarities (`embedding_similarity`); None skips
        the ``embedding`` level.
    topics : the question's entities: on a tie they come after the entities the chain reached from them.
    threshold : the least similarity for an ``embedding`` match.
    levels : the levels to try, of `MATCHES`, strongest first.

    Returns
    -------
    A `ChainMatch`, or None when no level matches.  An ``embedding`` match needs the
    numbers in both names to be the same and no second entity within `EMBEDDING_MARGIN`
    of the best.

    Examples
    --------
    >>> chain = ["Heat", "Michael Mann"]
    >>> map_to_chain("Michael Mann.", chain)
    ChainMatch(entity='Michael Mann', match='exact', score=1.0)
    >>> map_to_chain("MICHAEL MANN", chain)
    ChainMatch(entity='Michael Mann', match='case', score=0.95)
    >>> fake = lambda text, names: [0.9 if n == "Michael Mann" else 0.1 for n in names]
    >>> map_to_chain("the director Mann", chain, fake)
    ChainMatch(entity='Michael Mann', match='embedding', score=0.9)
    >>> map_to_chain("the director Mann", chain) is None
    True
    >>> map_to_chain("Richmond", ["virginia", "richmond, virginia"])
    ChainMatch(entity='richmond, virginia', match='qualified', score=0.9)
    >>> map_to_chain("425,022", ["atlanta, georgia", "425022"])
    ChainMatch(entity='425022', match='number', score=0.95)
    """
    written = text.strip().strip(_TRIM) or text.strip()
    if not written or not chain_entities:
        return None
    names = _ordered(chain_entities, topics)
    if "exact" in levels:
        for e in names:
            if e == written or e.strip(_TRIM) == written:
                return ChainMatch(e, "exact", 1.0)
    if "case" in levels:
        key = normalize_name(written)
        for e in names:
            if key and normalize_name(e) == key:
                return ChainMatch(e, "case", 0.95)
    if "number" in levels:
        num = number_key(written)
        if num is not None:
            for e in names:
                if number_key(e) == num:
                    return ChainMatch(e, "number", 0.95)
    if "qualified" in levels:
        key = normalize_name(written)
        hits = [e for e in names if key and normalize_name(bare_name(e) or "") == key]
        if len(hits) == 1:  # two namesakes on the chain ("Springfield, IL", "Springfield, MA"): no guess
            return ChainMatch(hits[0], "qualified", 0.9)
    if "inflection" in levels:
        for e in names:
            if is_inflection(written, e):
                return ChainMatch(e, "inflection", 0.9)
    if "subject" in levels:
        opened = opening_entity(written, [e for e in names if e not in set(topics)])
        if opened is not None:
            return ChainMatch(opened, "subject", 0.8)
    if "embedding" in levels and similarity is not None:
        topic_set = set(topics)
        for group in ([e for e in names if e not in topic_set], [e for e in names if e in topic_set]):
            group = [e for e in group if _same_numbers(written, e)]
            if not group:
                continue
            scores = [float(s) for s in similarity(written, group)]
            ranked = sorted(zip(scores, range(len(group))), key=lambda p: (-p[0], p[1]))
            best, i = ranked[0]
            if best < threshold:
                continue
            if len(ranked) > 1 and ranked[1][0] >= threshold and best - ranked[1][0] < EMBEDDING_MARGIN:
                return None  # two chain entities as close: no guess
            return ChainMatch(group[i], "embedding", round(best, 4))
    return None


def opening_entity(text: str, names: Sequence[str]) -> str | None:
    """The longest of `names` that `text` opens with, as the subject of a sentence that goes on in lower case.

    >>> opening_entity("Costas Mandylor starred in both Saw IV and Saw V.", ["Saw IV", "Costas Mandylor"])
    'Costas Mandylor'
    >>> opening_entity("Costas Mandylor Tobin Bell", ["Costas Mandylor"]) is None  # two names, not a sentence
    True
    >>> opening_entity("Richmond, Virginia", ["Richmond"]) is None
    True
    """
    best = None
    for e in names:
        name = e.strip()
        rest = text[len(name):]
        if not name or text[:len(name)].casefold() != name.casefold() or not rest.startswith(" "):
            continue
        words = rest.split()
        if len(words) >= 2 and words[0][:1].islower() and (best is None or len(e) > len(best)):
            best = e
    return best


def embedding_similarity() -> Similarity | None:
    """Cosine similarity by the packaged all-MiniLM-L6-v2 (`load_embedder`), or None when it is not installed."""
    from ..graph.embeddings import load_embedder

    embedder = load_embedder()
    if embedder is None:
        return None

    def similarity(text: str, names: Sequence[str]) -> list[float]:
        vecs = embedder.encode([text, *names])
        return [float(v) for v in vecs[1:] @ vecs[0]]

    return similarity


def repeats_question(text: str, question: str, *, min_words: int = REPEAT_MIN_WORDS,
                     share: float = REPEAT_SHARE) -> bool:
    """Does an answer only repeat the question's wording?

    An answer of at least `min_words` words of which at least `share` are the
    question's words (up to case, punctuation and word endings:
    `same_word_family`) repeats the question: "X 's dad 's child 's parent
    is", the question's start with its entity, is no answer.  Callers check
    this only for texts that name no graph entity (the question's own entity
    is named in it, and may be an answer).

    Parameters
    ----------
    text : the answer as written.
    question : the question asked.

    Returns
    -------
    True when the text is (nearly) made of the question's words.

    Examples
    --------
    >>> q = "Which films did the director of Heat direct?"
    >>> repeats_question("the director of Heat", q), repeats_question("films directed by the director", q)
    (True, True)
    >>> repeats_question("Michael Mann", q), repeats_question("Heat director", q)
    (False, False)
    """
    words = _words(text)
    if len(words) < min_words:
        return False
    asked = set(_words(question))
    if not asked:
        return False
    hits = sum(1 for w in words if w in asked or any(same_word_family(w, q) for q in asked))
    return hits / len(words) >= share


def answer_label(answer: Answer) -> str:
    """An answer as plain text for people: the graph's name, how the model wrote it, or that it names no entity.

    The graph's name is shown; when the model wrote it otherwise (mapped to the
    chain's entity: `Answer.mapped_from`; linked graph-wide: `Answer.text`)
    that is said in words.

    Examples
    --------
    >>> answer_label(Answer(text="germans", entity="germans", in_graph=True, mapped_from="German", match="inflection"))
    "germans (written as 'German')"
    >>> answer_label(Answer(text="Atlantis"))
    'Atlantis (not a graph entity)'
    >>> answer_label(Answer(text="Heat", entity="Heat", in_graph=True))
    'Heat'
    >>> answer_label(Answer(text="Russia", entity="russia", in_graph=True))
    "russia (written as 'Russia')"
    """
    name = answer.entity or answer.text
    if not answer.in_graph:
        return f"{name} (not a graph entity)"
    written = answer.mapped_from or answer.text  # linked graph-wide, `text` is what the model wrote
    if written and written != name and not answer.completed_from_graph:
        return f"{name} (written as '{written}')"
    return name
