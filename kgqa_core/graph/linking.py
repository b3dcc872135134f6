"""Find the graph entities a question is about (its topic entities).

Every method starts from topic entities, and a wrong one silently sends the
whole search elsewhere, so linking returns *ranked candidates with scores*
and the UI asks the user to confirm them.  Sources, strongest first:

* ``override``: entities the caller names explicitly (validated against the graph);
* ``bracket``: MetaQA marks the topic entity as ``[Entity]`` in the question;
* ``exact`` / ``case-insensitive``: a graph entity's name appears in the question;
* ``fuzzy``: a near match (typos, accents), found with rapidfuzz.

Speed matters because MetaQA has 43k entities: names are indexed once per
graph by a normalised key (case-folded, accents removed, punctuation ignored),
the question's word n-grams are looked up in that index, and fuzzy matching
only compares against entities sharing a word (or a near-spelled word) with
the question.
"""

from __future__ import annotations

import re
import unicodedata
import weakref
from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

from rapidfuzz import fuzz, process

from .. import progress
from .gc_pause import no_gc as _no_gc
from .name_search import search_entity_names

METHODS = ("override", "bracket", "exact", "case-insensitive", "fuzzy")

_WORD = re.compile(r"\w+")
_BRACKET = re.compile(r"\[([^\[\]]+)\]")
_MAX_NGRAM = 12
_FUZZY_CUTOFF = 85.0  # rapidfuzz ratio, 0..100
_MAX_POSTING = 3000  # words shared by more entities than this do not propose fuzzy candidates
_MAX_FUZZY_CANDIDATES = 20000

# Words that never make a mention on their own ("what", "the", "film" ...).
STOPWORDS = frozenset(
    """a an the of in on at to for from by with and or but not no is are was were be been being
    do does did has have had what which who whom whose when where why how that this these those
    it its as about into than then there their they them he she his her him we you your i me my
    our us can could would should will shall may might must also both same other another any all
    some many much more most one ones movie movies film films star stars starred starring direct
    directed director directors write wrote written writer writers appear appeared appears
    release released language languages genre genres year years type types kind kinds actor
    actors actress person people share shared sharing tell name names list give also""".split()
)


@dataclass(frozen=True, slots=True)
class EntityCandidate:
    """One possible topic entity for a question.

    ``score`` is in 0..1 (1 = certain), ``method`` is how it was found (one of
    `METHODS`) and ``mention`` is the question text it was found from.
    """

    entity: str
    score: float
    method: str
    mention: str


class UnknownEntityError(ValueError):
    """An explicit topic entity that is not in the graph, with the closest names."""

    def __init__(self, entity: str, suggestions: list[str], graph_name: str = "") -> None:
        self.entity = entity
        self.suggestions = suggestions
        where = f" graph {graph_name!r}" if graph_name else " the graph"
        hint = f"; did you mean {', '.join(repr(s) for s in suggestions[:3])}?" if suggestions else ""
        super().__init__(f"topic entity {entity!r} is not in{where}{hint}")


# ------------------------------------------------------------------ normalising
def _fold(text: str) -> str:
    """Case-fold and strip accents, so 'Gert Fröbe' and 'gert frobe' meet."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def normalize_name(text: str) -> str:
    """The index key of a name: folded words joined by single spaces."""
    if text.isascii():  # fast path: most names need no accent folding
        return " ".join(_WORD.findall(text.lower()))
    return " ".join(_WORD.findall(_fold(text)))


# ------------------------------------------------------------------ index
class _EntityIndex:
    """Normalised-name lookups over one graph's entities."""

    def __init__(self, entities: Iterable[str]) -> None:
        self.by_key: dict[str, list[str]] = defaultdict(list)
        with _no_gc():
            for ent in entities:
                key = normalize_name(ent)
                if key:
                    self.by_key[key].append(ent)
        self.keys: list[str] = list(self.by_key)
        self.max_ngram = 1
        self.postings: dict[str, list[int]] = defaultdict(list)
        with _no_gc():
            for i, key in enumerate(self.keys):
                words = key.split(" ")
                if len(words) > self.max_ngram:
                    self.max_ngram = min(len(words), _MAX_NGRAM)
                for w in dict.fromkeys(words):  # in word order: a set's order changes from process to process
                    self.postings[w].append(i)
        self.vocabulary: list[str] = list(self.postings)


_INDEXES: "weakref.WeakKeyDictionary[object, tuple[tuple[int, int], _EntityIndex]]" = weakref.WeakKeyDictionary()


def entity_index(graph: object) -> _EntityIndex:
    """The (cached) index of a graph's entity names; rebuilt when the graph changes."""
    version = (len(graph), getattr(graph, "_next_id", 0))  # type: ignore[arg-type]
    try:
        cached = _INDEXES.get(graph)
    except TypeError:  # unhashable / not weak-referenceable view
        cached = None
    if cached is not None and cached[0] == version:
        return cached[1]
    index = _EntityIndex(graph.entities)  # type: ignore[attr-defined]
    try:
        _INDEXES[graph] = (version, index)
    except TypeError:
        pass
    return index


def _pick(entities: list[str], graph: object) -> list[str]:
    """Entities sharing one key, best-connected first (the likelier referent)."""
    if len(entities) == 1:
        return entities
    degree = getattr(graph, "degree", None)
    return sorted(entities, key=lambda e: (-(degree(e) if degree else 0), e))


# ------------------------------------------------------------------ linking
@progress.in_phase(progress.LINKING)
def link_entities(
    question: str,
    graph: object,
    topic_entities: Sequence[str] | None = None,
    limit: int = 10,
) -> list[EntityCandidate]:
    """Ranked topic-entity candidates for `question`, best first.

    With `topic_entities`, those are validated and returned as ``override``
    candidates (an unknown one raises `UnknownEntityError` with suggestions).
    If the question marks entities in brackets and they resolve, only those
    are returned: the bracket is the dataset's own statement of the topic.
    """
    if topic_entities:
        chosen: dict[str, EntityCandidate] = {}
        for given in topic_entities:
            ent, score = validate_topic_entity(given, graph)
            chosen.setdefault(ent, EntityCandidate(ent, score, "override", given))
        return list(chosen.values())
    index = entity_index(graph)
    found: dict[str, EntityCandidate] = {}

    def offer(c: EntityCandidate) -> None:
        old = found.get(c.entity)
        if old is None or c.score > old.score:
            found[c.entity] = c

    # 1. brackets
    for match in _BRACKET.finditer(question):
        mention = match.group(1).strip()
        for cand in _link_bracket(mention, graph, index):
            offer(cand)
    if found:
        return _ranked(found, limit)

    # 2. n-gram lookups, 3. fuzzy
    for cand in _link_ngrams(question, graph, index):
        offer(cand)
    return _ranked(found, limit)


def _ranked(found: dict[str, EntityCandidate], limit: int) -> list[EntityCandidate]:
    ordered = sorted(found.values(), key=lambda c: (-c.score, -len(c.mention), c.entity))
    return ordered[:limit]


def _link_bracket(mention: str, graph: object, index: _EntityIndex) -> list[EntityCandidate]:
    if graph.has_entity(mention):  # type: ignore[attr-defined]
        return [EntityCandidate(mention, 1.0, "bracket", mention)]
    key = normalize_name(mention)
    if key in index.by_key:
        return [EntityCandidate(e, 0.95, "bracket", mention) for e in _pick(index.by_key[key], graph)]
    hits = process.extract(key, index.keys, scorer=fuzz.ratio, score_cutoff=80.0, limit=3)
    return [
        EntityCandidate(e, round(0.9 * score / 100.0, 4), "bracket", mention)
        for k, score, _ in hits
        for e in _pick(index.by_key[k], graph)[:1]
    ]


def _link_ngrams(question: str, graph: object, index: _EntityIndex) -> list[EntityCandidate]:
    tokens = [(m.start(), m.end(), _fold(m.group())) for m in _WORD.finditer(question)]
    out: list[EntityCandidate] = []
    matched_spans: list[tuple[int, int]] = []  # token index ranges of exact/ci matches
    raw: list[tuple[int, int, str, str, float]] = []  # (i, j, entity, method, base)
    ngrams: dict[int, list[tuple[str, int, int]]] = defaultdict(list)

    for i in range(len(tokens)):
        for n in range(1, min(index.max_ngram, len(tokens) - i) + 1):
            j = i + n
            words = [t[2] for t in tokens[i:j]]
            if all(w in STOPWORDS or w.isdigit() and len(w) < 3 for w in words):
                continue
            key = " ".join(words)
            ngrams[n].append((key, i, j))
            ents = index.by_key.get(key)
            if not ents:
                continue
            mention = question[tokens[i][0] : tokens[j - 1][1]]
            matched_spans.append((i, j))
            for ent in _pick(ents, graph):
                if ent == mention:
                    raw.append((i, j, ent, "exact", 0.9))
                elif ent.casefold() == mention.casefold():
                    raw.append((i, j, ent, "case-insensitive", 0.8))
                else:  # differs in punctuation or accents only
                    raw.append((i, j, ent, "case-insensitive", 0.75))

    def covered(i: int, j: int, spans: list[tuple[int, int]]) -> bool:
        return any(a <= i and j <= b and (b - a) > (j - i) for a, b in spans)

    # fuzzy: only entities that share a (possibly misspelt) content word with the question
    fuzzy = _fuzzy_matches(tokens, ngrams, index, {normalize_name(e) for _, _, e, _, _ in raw})
    # a long near-match ("Forest Gump") outranks a short exact word inside it ("forest")
    strong_spans = matched_spans + [(i, j) for i, j, _, ratio in fuzzy if ratio >= 90.0]

    for i, j, ent, method, base in raw:
        mention = question[tokens[i][0] : tokens[j - 1][1]]
        score = base * length_factor(mention) * case_factor(mention, i) * (0.5 if covered(i, j, strong_spans) else 1.0)
        out.append(EntityCandidate(ent, round(min(score, 0.95), 4), method, mention))
    for i, j, key, ratio in fuzzy:
        if covered(i, j, matched_spans) or (i, j) in matched_spans:
            continue
        mention = question[tokens[i][0] : tokens[j - 1][1]]
        for ent in _pick(index.by_key[key], graph)[:1]:
            score = 0.7 * (ratio / 100.0) * length_factor(mention) * case_factor(mention, i)
            out.append(EntityCandidate(ent, round(min(score, 0.9), 4), "fuzzy", mention))
    return out


def _fuzzy_matches(
    tokens: list[tuple[int, int, str]],
    ngrams: dict[int, list[tuple[str, int, int]]],
    index: _EntityIndex,
    skip_keys: set[str],
) -> list[tuple[int, int, str, float]]:
    """(first token, end token, entity key, ratio) for near matches of question n-grams.

    Bounded: only entities sharing a content word with the question (or a
    word within edit distance of one) are compared, and only against n-grams
    of about the same number of words.
    """
    content = {t[2] for t in tokens if t[2] not in STOPWORDS and len(t[2]) > 1}
    cand_ids: set[int] = set()
    for word in content:
        posting = index.postings.get(word)
        if posting is None and len(word) >= 4:
            for near, _, _ in process.extract(word, index.vocabulary, scorer=fuzz.ratio, score_cutoff=80.0, limit=3):
                p = index.postings[near]
                if len(p) <= _MAX_POSTING:
                    cand_ids.update(p)
        elif posting is not None and len(posting) <= _MAX_POSTING:
            cand_ids.update(posting)
        if len(cand_ids) > _MAX_FUZZY_CANDIDATES:
            break
    out = []
    for cid in cand_ids:
        key = index.keys[cid]
        if key in skip_keys or len(key) < 4:
            continue
        k = key.count(" ") + 1
        pool = [g for n in (k - 1, k, k + 1) for g in ngrams.get(n, ())]
        if not pool:
            continue
        best = process.extractOne(key, [g[0] for g in pool], scorer=fuzz.ratio, score_cutoff=_FUZZY_CUTOFF)
        if best is None:
            continue
        _, ratio, pos = best
        _, i, j = pool[pos]
        out.append((i, j, key, float(ratio)))
    return out


def case_factor(mention: str, first_token: int) -> float:
    """A capitalised word mid-sentence is likely a name; a lone lowercase word likely is not."""
    if first_token > 0 and mention[:1].isupper():
        return 1.1
    if mention.islower() and " " not in mention:
        return 0.85
    return 1.0


def length_factor(mention: str) -> float:
    """Short mentions ('Up', 'Drama') are weaker evidence than 'Tom Hanks'."""
    return min(1.0, 0.55 + 0.05 * len(mention))


def validate_topic_entity(given: str, graph: object) -> tuple[str, float]:
    """Map an explicitly given topic entity onto the graph, or raise `UnknownEntityError`."""
    name = given.strip()
    if graph.has_entity(name):  # type: ignore[attr-defined]
        return name, 1.0
    index = entity_index(graph)
    same = index.by_key.get(normalize_name(name), [])
    folded = [e for e in same if e.casefold() == name.casefold()]
    if len(folded) == 1:
        return folded[0], 0.99
    suggestions = [e for e, _ in search_entity_names(name, graph.entities, limit=5)]  # type: ignore[attr-defined]
    raise UnknownEntityError(given, suggestions, getattr(graph, "name", ""))


# ------------------------------------------------------------------ search / resolve
_ANSWER_TRIM = " \t\n\"'`*.,;:!?()[]<>"


def resolve_entity(name: str, graph: object, threshold: float = 0.85) -> tuple[str | None, float]:
    """Link a model's answer string back to a graph entity: (entity or None, score 0..1).

    Exact, then case-/punctuation-insensitive, then fuzzy (rapidfuzz ratio at
    least `threshold`).  None means the answer is not in the graph, which the
    trace reports as an answer outside the graph.
    """
    text = name.strip()
    if graph.has_entity(text):  # type: ignore[attr-defined]
        return text, 1.0
    trimmed = text.strip(_ANSWER_TRIM)
    if trimmed and graph.has_entity(trimmed):  # type: ignore[attr-defined]
        return trimmed, 1.0
    key = normalize_name(trimmed or text)
    if not key:
        return None, 0.0
    index = entity_index(graph)
    ents = index.by_key.get(key)
    if ents:
        return _pick(ents, graph)[0], 0.95
    best = process.extractOne(key, index.keys, scorer=fuzz.ratio, score_cutoff=threshold * 100.0)
    if best is None:
        return None, 0.0
    k, score, _ = best
    return _pick(index.by_key[k], graph)[0], round(score / 100.0, 4)


_LIST_SEPARATORS = re.compile(r"\s*[;,|]\s*")
_LIST_CONJUNCTION = re.compile(r"\s+(?:and|or|&)\s+", re.IGNORECASE)
_LEADING_CONJUNCTION = re.compile(r"^(?:and|or|&)\s+", re.IGNORECASE)


def split_listed_answer(text: str, graph: object, also_names: Callable[[str], bool] | None = None) -> list[str] | None:
    """The answers of a text that lists several under one marker, or None.

    Models often mark a list once ("* Robert Ryan, Lee Marvin, and Burt
    Lancaster") although the prompt's examples mark each answer.  Read as one
    name it matches nothing, and the first answer, the one Hits@1 judges, is
    lost.  The text is split at commas, semicolons and bars; neighbouring
    pieces are joined again when together they name an entity ("Heaven
    Knows, Mr. Allison"), and a piece is split at "and" / "or" only when every
    part names an entity ("Sex and the City" stays whole).  The split is
    taken when at least two pieces name graph entities, or when the first
    piece names one `also_names` vouches for; pieces that name none (a list
    cut off mid-name, a name in the model's own words) stay in place as
    written.  Callers try the
    whole text as one name first, so "Cat Island, Bahamas" is never cut.
    ``also_names(piece)`` counts a piece that names no graph entity by itself
    but one the caller knows it stands for (an entity the chain reached,
    written without its qualifier: "Richmond" for "richmond, virginia").
    """
    raw = [p for p in (_LEADING_CONJUNCTION.sub("", x.strip()).strip(_ANSWER_TRIM)
                       for x in _LIST_SEPARATORS.split(text.strip().strip(_ANSWER_TRIM))) if p]
    if len(raw) < 2 and not (raw and _LIST_CONJUNCTION.search(raw[0])):
        return None

    def names(piece: str, exact: bool = False) -> bool:
        # a joined run must name an entity exactly: fuzzily "Sex and the City, 2008" is the film
        if resolve_entity(piece, graph, threshold=1.0 if exact else 0.85)[0] is not None:
            return True
        return also_names is not None and also_names(piece)

    out: list[str] = []
    resolved = 0
    i = 0
    while i < len(raw):
        # the longest run of pieces from i that names an entity when joined with ", "
        for j in range(min(len(raw), i + 4), i, -1):
            joined = ", ".join(raw[i:j])
            if names(joined, exact=j - i > 1):
                out.append(joined)
                resolved += 1
                i = j
                break
        else:
            parts = [p.strip(_ANSWER_TRIM) for p in _LIST_CONJUNCTION.split(raw[i])]
            if len(parts) > 1 and all(p and names(p) for p in parts):
                out.extend(parts)
                resolved += len(parts)
            else:
                out.append(raw[i])
            i += 1
    # a list when two pieces name graph entities, or when its first names one the caller vouches for (an
    # entity the chain reached): the model's own words after it are then answers of their own, ranked after
    reached_first = also_names is not None and bool(out) and also_names(out[0])
    return out if (resolved >= 2 or reached_first) and len(out) >= 2 else None
