"""A first draft of a graph's vocabulary, written by the language model from the graph itself.

Why: the readers match a question's words to relation names by sentence
embeddings (`alignment`), and the packaged embedder reads English only.  A
graph whose relations are named in another language (``traducteur``,
``paysDeDécès``), abbreviated (``nw``, ``pop``) or coded gives the embedder
nothing to match, and the small model's reading then decides alone.  The
language model knows more languages and abbreviations than the embedder: shown
a relation's name and one or two of its triplets, it writes what the relation
means in plain English.  Those words become the relation's aliases, exactly as
if the domain expert had written them (`vocabulary.RelationVocabulary`), so the
expert can read, correct and save the draft, and every run records it.

Nothing here is written from a dataset: the prompt's four examples are made up
(German, an abbreviation, a code-like name, a German compound), the relations and their triplets
are the user's graph, and the words are the model's.  A gloss that only repeats
the relation's own words, is empty, or runs long is dropped, so a graph whose
relations are plain English gets (almost) nothing and reads as before.

Examples
--------
>>> parse_gloss(" translator, translated by\\nmore")
['translator', 'translated by']
>>> parse_gloss("birth place", own_words="birth place")
[]
>>> parse_gloss("number of people; (Abilene, Texas", own_words="population")
['number of people']
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from ..graph.hub_caps import relation_words
from ..graph.words import STOP_WORDS
from ..models.generation import GenerationConfig
from ..models.interface import PromptText, loaded_model_key
from .language import foreign_words, name_language, words_language
from . import vocabulary as vocabulary_module
from .vocabulary import RelationVocabulary

# The made-up examples the prompt shows (no dataset's relation): another language, an abbreviation, a code, and a
# compound name of another language whose meaning is its words' together (the 1.5B read ``sudEst`` as "south of, located
# in" and ``nordEst`` as "northwestern" with the first three alone, "south east, southeast" and "north east, northeast"
# with this one and the name's words told, `gloss_prompt`; docs/benchmarks.md, "Compound names described").
EXAMPLES = (
    ("verfasser", [("Faust", "Johann Wolfgang von Goethe")], "author, written by"),
    ("pop", [("Lyon", "513275")], "population"),
    ("yr_est", [("Harvard University", "1636")], "year founded, established in"),
    ("hauptStadt", [("Bayern", "München")], "capital city"),
)
INSTRUCTION = ("A knowledge graph names its relations in any language or abbreviation. For each relation, given "
               "example facts (subject, relation, object), write what the relation means in plain English: one "
               "to four words, or two short alternatives separated by a comma.")
MAX_GLOSS_TOKENS = 12
MAX_GLOSS_WORDS = 5
MAX_ALIASES = 2
EXAMPLE_TRIPLETS = 2
SHARED_AT = 3  # an alias the model gives this many relations or more is dropped (`drop_shared_aliases`)
_SPACES = re.compile(r"\s+")


@dataclass
class DraftCosts:
    """What a draft cost the model: relations asked, prompt tokens read, tokens written, seconds."""

    relations: int = 0
    prompt_tokens: int = 0
    tokens_written: int = 0
    seconds: float = 0.0
    dropped: list[str] = field(default_factory=list)  # relations whose gloss only repeated their name
    saved: int = 0  # relations whose description was read from disk (`description_store`), not asked of the model
    languages: dict[str, str] = field(default_factory=dict)  # relation -> the language its name was told to be in


def _fact(head: str, relation: str, tail: str) -> str:
    return f"({head}, {relation}, {tail})"


def gloss_prompt(relation: str, facts: Sequence[tuple[str, str]], language: str = "") -> str:
    """The user turn for one relation: the instruction, the made-up examples, then the relation and its facts.

    Everything before the relation is the same for every relation, so a backend that keeps its prompt cache reads
    it once per draft.  `language` ("French"): the language the relation's name is judged to be in
    (`language.name_language`), said after its name, as a small model otherwise reads ``est`` as English "est."
    (established) rather than French "east".  A name of several words run together (``sudEst``, ``chef_lieu``) is
    told with its words apart too (``sudEst (French: sud est)``), so the model reads the words it knows.

    >>> gloss_prompt("sudEst", [("A", "B")], "French").splitlines()[-2:]
    ['Relation: sudEst (French: sud est)', 'Facts: (A, sudEst, B)']
    >>> gloss_prompt("nord", [("A", "B")], "French").splitlines()[-2]
    'Relation: nord (French)'
    """
    lines = [INSTRUCTION, ""]
    for name, ex_facts, gloss in EXAMPLES:
        lines += [f"Relation: {name}", "Facts: " + "; ".join(_fact(h, name, t) for h, t in ex_facts),
                  f"Meaning: {gloss}", ""]
    words = relation_words(relation)
    apart = words if words and words.lower() != relation.lower() and len(words.split()) > 1 else ""
    told = f" ({': '.join(x for x in (language, apart) if x)})" if language or apart else ""
    lines += [f"Relation: {relation}{told}", "Facts: " + "; ".join(_fact(h, relation, t) for h, t in facts)]
    return "\n".join(lines)


def _norm(text: str) -> str:
    return _SPACES.sub(" ", re.sub(r"[^\w\s]", " ", text.lower())).strip()


def parse_gloss(text: str, own_words: str = "") -> list[str]:
    """The aliases of a model's gloss: its first line, split at commas, without the relation's own words.

    A piece longer than `MAX_GLOSS_WORDS` words is commentary, not a name, and is dropped.
    """
    first = (text or "").strip().split("\n", 1)[0]
    first = re.sub(r"^(meaning\s*:\s*)", "", first, flags=re.I).strip().strip(".")
    first = re.split(r"[(\[{<]", first)[0]  # what follows a bracket is a fact copied from the prompt
    return clean_aliases(re.split(r"[,;]", first), own_words)


def _content_words(text: str) -> frozenset[str]:
    return frozenset(w for w in _norm(text).split() if w not in STOP_WORDS)


def clean_aliases(pieces: Iterable[str], own_words: str = "") -> list[str]:
    """The pieces that say something the relation's own words do not, at most `MAX_ALIASES`, in order.

    Dropped: empty pieces, pieces over `MAX_GLOSS_WORDS` words (commentary), pieces with brackets (a fact copied
    from the prompt), and pieces whose content words are the relation's own ("lowest point of" for
    `lowest point`), which would only repeat what the readers already embed.
    """
    own = _content_words(own_words)
    out: list[str] = []
    for piece in pieces:
        p = _SPACES.sub(" ", piece.strip().strip("\"'`.;:")).strip()
        words = _content_words(p)
        if (not p or len(p.split()) > MAX_GLOSS_WORDS or re.search(r"[()\[\]{}<>=]", p) or not words
                or words == own or p in out):
            continue
        out.append(p)
    return out[:MAX_ALIASES]


def relation_facts(triplets: Iterable[Any], per_relation: int = EXAMPLE_TRIPLETS) -> dict[str, list[tuple[str, str]]]:
    """Up to `per_relation` (head, tail) pairs of each relation, in the graph's order (one pass over `triplets`)."""
    facts: dict[str, list[tuple[str, str]]] = {}
    for t in triplets:
        got = facts.setdefault(t.relation, [])
        if len(got) < per_relation:
            got.append((t.head, t.tail))
    return facts


def relation_language(relation: str) -> str:
    """The language `relation`'s name is judged to be in when not English (``est`` -> "French"; "" for English
    names, or without wordfreq): what `gloss_prompt` tells the model after the name."""
    return name_language(relation_words(relation) or relation)


def draft_vocabulary(model: Any, facts: dict[str, list[tuple[str, str]]], relations: Sequence[str] | None = None,
                     on_relation: Callable[[int, int, str], None] | None = None,
                     costs: DraftCosts | None = None, languages: bool = True) -> RelationVocabulary:
    """The model's English words for each relation of `relations` (default: all of `facts`), as a vocabulary.

    Parameters
    ----------
    model : a `LanguageModel` (any backend); greedy, at most `MAX_GLOSS_TOKENS` tokens a relation.
    facts : example (head, tail) pairs per relation (`relation_facts`).
    relations : which relations to gloss, in order.
    on_relation : called ``(done, total, relation)`` before each relation (a progress display).
    costs : filled with what the draft cost (``saved``: relations read from the description store, as the readers
        described or drafted them before with this model file), and the language each name was told to be in
        (``costs.languages``).
    languages : tell the model the language of a name judged not English (`relation_language`), as the readers'
        own descriptions do with ``describe_other_languages``: the same prompt, so the same words, for a name both
        describe.  Off: every name is given bare, as before.

    Returns
    -------
    RelationVocabulary whose ``source`` says the model drafted it; relations whose gloss adds nothing are left out.
    """
    from .description_store import DescriptionStore

    costs = costs if costs is not None else DraftCosts()
    chosen = list(relations if relations is not None else facts)
    entries: dict[str, list[str]] = {}
    store = DescriptionStore.for_model(model)  # shared with the readers' descriptions: one prompt, one answer
    for i, relation in enumerate(chosen):
        if on_relation is not None:
            on_relation(i, len(chosen), relation)
        aliases = draft_relation(model, relation, facts, costs, store, languages)
        if aliases:
            entries[relation] = aliases
    return drop_shared_aliases(RelationVocabulary(entries, drafted_source(model)))


def draft_relation(model: Any, relation: str, facts: dict[str, list[tuple[str, str]]], costs: DraftCosts,
                   store: Any = None, languages: bool = True) -> list[str]:
    """One relation of a draft (`draft_vocabulary`, the Ask page's `DraftJob`): its words, the name's language told
    when judged not English and `languages` is on (recorded in ``costs.languages``)."""
    language = relation_language(relation) if languages else ""
    if language:
        costs.languages[relation] = language
    return gloss_relation(model, relation, facts.get(relation, []), costs, store, language)


def languages_comment(languages: dict[str, str], limit: int = 12) -> str:
    """The vocabulary file's comment line naming the relations the model was told are named in another language
    ("" for none), so the expert reading the draft knows which words came from a translation.

    >>> languages_comment({"est": "French", "nord": "French", "verfasser": "German"})
    '# named in another language (told to the model): est, nord (French); verfasser (German)\\n'
    """
    if not languages:
        return ""
    by: dict[str, list[str]] = {}
    for r, lang in languages.items():
        by.setdefault(lang, []).append(r)
    parts, shown = [], 0
    for lang, names in by.items():
        take = names[: max(0, limit - shown)]
        shown += len(take)
        if take:
            parts.append(f"{', '.join(take)} ({lang})")
    more = len(languages) - shown
    return ("# named in another language (told to the model): " + "; ".join(parts)
            + (f"; and {more} more" if more > 0 else "") + "\n")


def drafted_source(model: Any) -> str:
    """What a drafted vocabulary's ``source`` says: which model wrote it."""
    return f"drafted by {getattr(model, 'name', '') or 'the model'}"


def gloss_relation(model: Any, relation: str, facts: Sequence[tuple[str, str]], costs: DraftCosts,
                   store: Any = None, language: str = "") -> list[str]:
    """The model's English words for one relation (greedy: the same every time for a model and facts);
    `store` (a `description_store.DescriptionStore`): read from it when this very prompt was answered before, and
    saved to it when not; `language`: the language its name is in, when judged (`gloss_prompt`)."""
    config = GenerationConfig(max_new_tokens=MAX_GLOSS_TOKENS, stop_strings=("\n",))
    text = model.chat_prompt(gloss_prompt(relation, list(facts)[:EXAMPLE_TRIPLETS], language)) + "Meaning:"
    saved = store.get(text) if store is not None else None
    if saved is not None:
        costs.saved += 1
        if not saved:
            costs.dropped.append(relation)
        return saved
    # the instruction and the examples are the same for every relation: a backend that reuses what it read keeps
    # them (`PromptText`), so each relation after the first reads only its own lines
    prompt = PromptText(text, text[: text.rindex(f"Relation: {relation}")])
    gen = model.generate(prompt, config)
    costs.relations += 1
    costs.prompt_tokens += gen.prompt_tokens
    costs.tokens_written += gen.output_tokens
    costs.seconds += gen.seconds
    aliases = parse_gloss(gen.text, relation_words(relation) or relation)
    if not aliases:
        costs.dropped.append(relation)
    if store is not None:
        store.put(text, aliases)
    return aliases


def drop_shared_aliases(vocabulary: RelationVocabulary, at: int = SHARED_AT) -> RelationVocabulary:
    """The vocabulary without the aliases the model gave `at` or more relations ("located in" for `country`,
    `has city` and `continent`): words that fit several relations tell the readers none of them apart.

    >>> v = RelationVocabulary({"a": ["located in", "x"], "b": ["Located in"], "c": ["located in"]}, "drafted")
    >>> drop_shared_aliases(v).entries
    {'a': ['x']}
    """
    counts: dict[str, int] = {}
    for aliases in vocabulary.entries.values():
        for a in {_norm(x) for x in aliases}:
            counts[a] = counts.get(a, 0) + 1
    entries = {}
    for relation, aliases in vocabulary.entries.items():
        kept = [a for a in aliases if counts.get(_norm(a), 0) < at]
        if kept:
            entries[relation] = kept
    return RelationVocabulary(entries, vocabulary.source)


# ---------------------------------------------------------------- while reading a question (`describe_relations`)
@dataclass
class RelationDescriptions:
    """What the model said of the relations a question's walks take that the sentence embedder cannot read.

    ``vocabulary``: the user's vocabulary with these descriptions added where the user gave none (None when there
    is neither); ``used``: the descriptions of this question's relations; ``drafted_now``: those asked of the
    model in this run (the rest were drafted earlier in this process, for this graph and model).
    """

    vocabulary: RelationVocabulary | None
    used: dict[str, list[str]] = field(default_factory=dict)
    unread: list[str] = field(default_factory=list)
    # of `unread`: the relations held whole by the embedder but named in another language, with those words
    other_language: dict[str, list[str]] = field(default_factory=dict)
    languages: dict[str, str] = field(default_factory=dict)  # relation -> the language the model was told it is in
    drafted_now: list[str] = field(default_factory=list)
    from_disk: list[str] = field(default_factory=list)  # of drafted_now, those read from an earlier process's answer
    costs: DraftCosts = field(default_factory=DraftCosts)

    def to_dict(self) -> dict[str, Any]:
        return {"entries": {r: list(a) for r, a in self.used.items()}, "unread": list(self.unread),
                "other_language": {r: list(w) for r, w in self.other_language.items()},
                "languages": dict(self.languages),
                "drafted_now": list(self.drafted_now), "from_disk": list(self.from_disk),
                "tokens_written": self.costs.tokens_written,
                "seconds": round(self.costs.seconds, 3)}

    def sentence(self) -> str:
        """The trace's words for it ("" when nothing was described)."""
        if not self.unread:
            return ""
        said = "; ".join(f"{r} = {', '.join(a)}" for r, a in self.used.items())
        left = [r for r in self.unread if r not in self.used]
        pieces = len(self.unread) - len(self.other_language)
        why = []
        if pieces:
            why.append(f"{pieces} with words it knows only in pieces")
        if self.other_language:
            named = ", ".join(f"{r} ({self.languages.get(r, 'another language')})"
                              for r in list(self.other_language)[:6])
            more = " ..." if len(self.other_language) > 6 else ""
            why.append(f"{len(self.other_language)} with words of another language that it would take for English "
                       f"look-alikes: {named}{more}")
        text = (f"The sentence embedder cannot read {len(self.unread)} relation name(s) of this question's walks "
                f"({'; '.join(why)}), so the model described them in English from their facts")
        text += f": {said}" if said else ", and said nothing their names do not"
        if left and said:
            text += f" (nothing for {', '.join(left[:8])}{' ...' if len(left) > 8 else ''})"
        alone = [r for r in self.used if self.vocabulary is not None and r in self.vocabulary.meaning_only]
        if alone and vocabulary_module.MEANING_ONLY:
            text += (f"; the embedder matched the question's words to {', '.join(alone[:6])} by the description "
                     "alone, not the name, which it would read as an English look-alike")
        if self.from_disk:
            text += (f"; {len(self.from_disk)} of these descriptions the same model had given before on this machine, "
                     "for the same prompt, and were read back rather than asked again")
        return text


_DESCRIBED: dict[tuple, dict[str, list[str]]] = {}  # (graph fingerprint, model, backend) -> relation -> aliases
_FACTS: dict[str, dict[str, list[tuple[str, str]]]] = {}  # graph fingerprint -> relation_facts of the whole graph
_DESCRIBED_LOCK = threading.Lock()


def unread_relations(relations: Iterable[str], embedder: Any) -> list[str]:
    """The relations whose words the embedder holds no whole token for (`Embedder.unknown_words`), in order."""
    if embedder is None or not callable(getattr(embedder, "unknown_words", None)):
        return []
    out = []
    for r in dict.fromkeys(relations):
        unknown = embedder.unknown_words(relation_words(r) or r)
        if unknown:
            out.append(r)
    return out


def other_language_relations(relations: Iterable[str], skip: Iterable[str] = ()) -> dict[str, list[Any]]:
    """The relations (not in `skip`) with a word of another language than English (``nord``, ``ville``,
    ``prédécesseur``: `language.foreign_words`), whether the embedder holds it whole or in pieces, each with those
    words, in order."""
    skipped = set(skip)
    out: dict[str, list[Any]] = {}
    for r in dict.fromkeys(relations):
        if r in skipped:
            continue
        words = foreign_words(relation_words(r) or r)
        if words:
            out[r] = words
    return out


def _graph_facts(graph: Any, plans: Sequence[Any]) -> dict[str, list[tuple[str, str]]]:
    """Example facts per relation: the whole graph's first ones for a graph in memory (the same whatever was
    asked before), else the facts along the question's walks (a store's neighbourhood: the store is not read
    whole, so a relation is described from the neighbourhood of the first question that met it)."""
    fingerprint = getattr(graph, "fingerprint", "")
    if getattr(graph, "is_local", False) and hasattr(graph, "__iter__") and fingerprint \
            and not getattr(graph, "descriptions_key", ""):
        with _DESCRIBED_LOCK:
            facts = _FACTS.get(fingerprint)
        if facts is None:
            facts = relation_facts(iter(graph))
            with _DESCRIBED_LOCK:
                _FACTS[fingerprint] = facts
                while len(_FACTS) > 8:
                    _FACTS.pop(next(iter(_FACTS)))
        return facts
    facts: dict[str, list[tuple[str, str]]] = {}
    for plan in plans:
        walk = getattr(plan, "walk", ())
        for hop, (a, b) in zip(plan.hops, zip(walk, walk[1:])):
            got = facts.setdefault(hop.relation, [])
            fact = (a, b) if hop.forward else (b, a)
            if len(got) < EXAMPLE_TRIPLETS and fact not in got:
                got.append(fact)
    return facts


def describe_relations(model: Any, graph: Any, plans: Sequence[Any], vocabulary: RelationVocabulary | None,
                       embedder: Any, other_languages: bool = False) -> RelationDescriptions:
    """Describe, with the model, the relations of `plans` the embedder cannot read and the user did not describe.

    Each relation is described once per process for a graph and model (its description does not depend on the
    question), so a question's reading is the same whatever was asked before it.  A graph whose relation names the
    embedder reads whole (plain English) gets nothing, and reads as before.  `other_languages`: also the relations
    named with words of another language the embedder holds whole as English tokens (``nord``, ``est``: see
    `language`), which it would read as their English look-alikes.
    """
    relations = [h.relation for p in plans for h in p.hops]
    mine = set(vocabulary.entries) if vocabulary else set()
    unread = [r for r in unread_relations(relations, embedder) if r not in mine]
    # with the switch every name's words are judged once: those held whole join `unread`, and the model is told
    # the language of each name judged so (known in pieces or whole)
    judged = other_language_relations(relations, skip=mine) if other_languages else {}
    foreign = {r: ws for r, ws in judged.items() if r not in unread}
    order = {r: i for i, r in enumerate(dict.fromkeys(relations))}
    unread = sorted([*unread, *foreign], key=order.__getitem__)
    languages = {r: words_language(judged[r]) for r in unread if r in judged}
    out = RelationDescriptions(vocabulary, unread=unread,
                               other_language={r: [w.word for w in ws] for r, ws in foreign.items()},
                               languages=languages)
    if not unread or model is None:
        return out
    # a store's question neighbourhoods share their store's descriptions (`methods.on_store`)
    owner = getattr(graph, "descriptions_key", "") or getattr(graph, "fingerprint", "") or id(graph)
    # with the switch a name's language is said in its prompt, so its description may differ: kept apart
    key = (owner, *loaded_model_key(model), bool(other_languages))
    with _DESCRIBED_LOCK:
        known = dict(_DESCRIBED.get(key, {}))
    todo = [r for r in unread if r not in known]
    if todo:
        from .description_store import DescriptionStore

        facts = _graph_facts(graph, plans)
        store = DescriptionStore.for_model(model)  # what an earlier process asked of this model, on this machine
        for r in todo:  # one by one, no batch-wide rule: a description never depends on which others were asked
            before = out.costs.saved
            known[r] = gloss_relation(model, r, facts.get(r, []), out.costs, store, out.languages.get(r, ""))
            if out.costs.saved > before:
                out.from_disk.append(r)
        with _DESCRIBED_LOCK:
            _DESCRIBED.setdefault(key, {}).update({r: known[r] for r in todo})
            while len(_DESCRIBED) > 8:
                _DESCRIBED.pop(next(iter(_DESCRIBED)))
        out.drafted_now = todo
    out.used = {r: known[r] for r in unread if known.get(r)}
    if out.used:
        entries = {**{r: list(a) for r, a in out.used.items()}, **(vocabulary.entries if vocabulary else {})}
        source = vocabulary.source if vocabulary else ""
        # read by their meaning alone (`vocabulary.embedded_text`): the names of another language the embedder
        # holds whole as English look-alikes (``avant``), never a name it knows in pieces (``interacts_with``,
        # ``nordEst``), where the name is a hedge against a wrong description
        out.vocabulary = RelationVocabulary(entries, source,
                                            meaning_only=frozenset(r for r in out.used if r in out.other_language))
    return out


def forget_descriptions() -> None:
    """Forget what the model described (a test comparing two cold runs)."""
    with _DESCRIBED_LOCK:
        _DESCRIBED.clear()
        _FACTS.clear()
