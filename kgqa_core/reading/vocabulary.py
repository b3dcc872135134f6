"""The user's own words for their graph's relations: ``spouse: wife, husband, married to``.

A domain expert knows that their ``is_in_country`` answers "where is" and
that ``spouse`` is a wife; no list written from one benchmark's questions
can know that for every graph.  A vocabulary is a small text file, one
relation a line: the relation's name as the graph spells it, a colon, and
the words people use for it, separated by commas (a name that holds a colon
itself, an IRI or ``schema:name``, ends at the first colon followed by a
space).  Blank lines and lines starting with ``#`` are skipped.  The readers add these words to the
relation's own name (`kgqa_core.reading.readers`), and the model's path
choice is told them; the vocabulary is saved with every run that used it.

Examples
--------
>>> v = RelationVocabulary.parse("spouse: wife, husband, married to\\n# comment\\nis_in_country: where is")
>>> v.aliases("spouse")
['wife', 'husband', 'married to']
>>> v.describe({"is_in_country"})
['is_in_country: where is']
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

MAX_VOCABULARY_BYTES = 1_000_000
MAX_ALIASES = 50


class VocabularyError(ValueError):
    """A vocabulary file with a problem, naming the file and line."""


@dataclass
class RelationVocabulary:
    """Aliases per relation name (in file order)."""

    entries: dict[str, list[str]] = field(default_factory=dict)
    source: str = ""  # the file it came from, for messages and the trace
    # relations whose aliases are the model's English for a name the sentence embedder cannot read (in pieces, or
    # words of another language, `drafting.describe_relations`): embedded by that meaning alone (`embedded_text`)
    meaning_only: frozenset[str] = field(default_factory=frozenset, compare=False)

    def __bool__(self) -> bool:
        return bool(self.entries)

    def aliases(self, relation: str) -> list[str]:
        return list(self.entries.get(relation, []))

    def describe(self, relations: Iterable[str]) -> list[str]:
        """One line per relation of `relations` that has aliases: ``relation: alias, alias``."""
        return [f"{r}: {', '.join(self.entries[r])}" for r in sorted(relations) if self.entries.get(r)]

    def to_text(self) -> str:
        return "".join(f"{r}: {', '.join(a)}\n" for r, a in self.entries.items())

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "entries": {r: list(a) for r, a in self.entries.items()}}

    @classmethod
    def from_dict(cls, data: Any) -> "RelationVocabulary":
        if not isinstance(data, dict) or not isinstance(data.get("entries", {}), dict):
            raise VocabularyError("a vocabulary must be an object with 'entries': {relation: [aliases]}")
        entries = {}
        for r, a in data.get("entries", {}).items():
            if not isinstance(r, str) or not isinstance(a, list) or not all(isinstance(x, str) for x in a):
                raise VocabularyError(f"vocabulary entry {r!r}: aliases must be a list of texts")
            entries[r] = list(a)
        return cls(entries, str(data.get("source", "")))

    @classmethod
    def parse(cls, text: str, source: str = "vocabulary") -> "RelationVocabulary":
        """Read the text format (module docstring); every bad line is reported with its number, all at once."""
        entries: dict[str, list[str]] = {}
        problems = []
        for n, raw in enumerate(text.split("\n"), start=1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            # a relation name may hold ':' itself ("schema:name", an IRI): then ": " ends it
            relation, colon, rest = line.partition(": ") if ": " in line else line.partition(":")
            relation = relation.strip()
            aliases = [a.strip() for a in rest.split(",") if a.strip()]
            if not colon:
                problems.append(f"line {n}: no ':' between the relation and its words")
            elif not relation:
                problems.append(f"line {n}: no relation name before ':'")
            elif not aliases:
                problems.append(f"line {n}: no words after '{relation}:'")
            elif len(aliases) > MAX_ALIASES:
                problems.append(f"line {n}: {len(aliases)} words for {relation!r} (at most {MAX_ALIASES})")
            else:
                merged = entries.setdefault(relation, [])
                merged += [a for a in aliases if a not in merged]
        if problems:
            shown = problems[:10] + ([f"... and {len(problems) - 10} more"] if len(problems) > 10 else [])
            raise VocabularyError(f"{source}: " + "; ".join(shown))
        return cls(entries, source)

    @classmethod
    def read(cls, path: str | Path) -> "RelationVocabulary":
        p = Path(path)
        try:
            data = p.read_bytes()
        except OSError as exc:
            raise VocabularyError(f"{p}: cannot be read ({exc.strerror or exc})") from None
        if len(data) > MAX_VOCABULARY_BYTES:
            raise VocabularyError(f"{p}: {len(data)} bytes; a vocabulary may have at most {MAX_VOCABULARY_BYTES}")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise VocabularyError(f"{p}: not UTF-8 text (byte {exc.start})") from None
        return cls.parse(text, str(p))

    def unknown(self, graph: Any) -> list[str]:
        """Relations the vocabulary names that the graph does not hold (a typo the user should see)."""
        known = set(getattr(graph, "relations", []) or [])
        return [r for r in self.entries if known and r not in known]


# The meaning alone (on) or joined to the name (off).  Why: the embedder misreads a name of another language that it
# holds whole as an English look-alike, and joined to it the meaning is pulled towards the misreading: "before" is
# 0.41 close to "avant (before, earlier than)", under `alignment.COVER_AT` (0.45), where it is 0.77 close to
# "before, earlier than".  `drafting.describe_relations` sets `meaning_only` to such names only: a name the embedder
# knows in pieces (``interacts_with``, ``nordEst``) keeps its name beside the description, a hedge where the 1.5B's
# description is wrong (``interacts_with`` "collaborates with", ``nordEst`` "northwestern").  Measured with DoG on
# DBpedia's 80 dev and 60 fresh questions: 105 against 103 (every described name read alone: 108, but the made-up
# pharma graph lost 2 of 16 through ``interacts_with``); graphs named in English have no such name and read as before
# (docs/benchmarks.md, "DBpedia today")
MEANING_ONLY = True


def embedded_text(relation: str, vocabulary: RelationVocabulary | None) -> str:
    """What the readers' sentence embedder reads for a relation: `relation_text`, but for a relation the model
    described because the embedder cannot read its name (`RelationVocabulary.meaning_only`), that description alone.

    >>> v = RelationVocabulary({"avant": ["before", "earlier than"]}, meaning_only=frozenset({"avant"}))
    >>> embedded_text("avant", v), relation_text("avant", v)
    ('before, earlier than', 'avant (before, earlier than)')
    """
    aliases = vocabulary.aliases(relation) if vocabulary else []
    if MEANING_ONLY and aliases and relation in vocabulary.meaning_only:
        return ", ".join(aliases)
    return relation_text(relation, vocabulary)


def relation_text(relation: str, vocabulary: RelationVocabulary | None) -> str:
    """What the readers embed for a relation: its words (``deathPlace``: "death place"), then the user's aliases.

    >>> relation_text("is_in_country", RelationVocabulary.parse("is_in_country: where is"))
    'is in country (where is)'
    """
    from ..graph.hub_caps import relation_words

    words = relation_words(relation) or relation
    aliases = vocabulary.aliases(relation) if vocabulary else []
    return f"{words} ({', '.join(aliases)})" if aliases else words
