"""Which words of a relation name are not English, judged by how often languages use them (wordfreq).

Why: the sentence embedder that aligns question phrases with relation names learnt English.  A name it must
spell out in pieces (``prédécesseur``) is easy to spot (`Embedder.unknown_words`), but many words of other
languages are held whole by its English vocabulary because English text borrows or abbreviates them: ``nord``,
``sud``, ``est`` ("est." = established), ``avant`` (avant-garde), ``ville``, ``père``.  To the embedder those
are English tokens with their English neighbours, so "the north of X" never reaches ``nord``.  The judgement
here comes from a general language resource, not from any dataset's questions: wordfreq's frequencies of a word
in English and in the other large European languages.  A word is "of another language" when one of them uses it
at least ~30 times as often as English does (a margin of 1.5 on the Zipf scale) *and* it is not a common English
word (fewer than ~30 uses per million English words).  A graph named in plain English flags nothing (the
shipped English graphs: none of their relation words), so it reads as before.  Without wordfreq installed
nothing is flagged (the embedder's own judgement stays).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

LANGUAGES: tuple[str, ...] = ("fr", "de", "es", "it", "pt", "nl")
LANGUAGE_NAMES = {"fr": "French", "de": "German", "es": "Spanish", "it": "Italian", "pt": "Portuguese",
                  "nl": "Dutch"}
MARGIN = 1.5  # Zipf units: 10**1.5 ~ 32 times as frequent in the other language
COMMON_IN_ENGLISH = 4.5  # Zipf 4.5 ~ 30 per million words: a word this common is English whatever else it is


@dataclass(frozen=True)
class ForeignWord:
    """A word judged not English, with the language that uses it most and both frequencies (Zipf scale)."""

    word: str
    language: str
    zipf_english: float
    zipf_there: float

    @property
    def language_name(self) -> str:
        return LANGUAGE_NAMES.get(self.language, self.language)


@functools.lru_cache(maxsize=1)
def _zipf():
    try:
        from wordfreq import zipf_frequency
    except ImportError:  # optional: without it only the embedder's judgement counts
        return None
    return zipf_frequency


@functools.lru_cache(maxsize=65536)
def foreign_word(word: str) -> ForeignWord | None:
    """`word` as a word of another language than English, or None (English, unknown everywhere, or no wordfreq).

    >>> [w.word for w in map(foreign_word, ["nord", "est", "genre", "country", "P26"]) if w]
    ['nord', 'est']
    """
    zipf = _zipf()
    if zipf is None or not word or not any(c.isalpha() for c in word) or len(word) < 2:
        return None
    english = zipf(word, "en")
    if english >= COMMON_IN_ENGLISH:
        return None
    there, language = max((zipf(word, lang), lang) for lang in LANGUAGES)
    if there - english < MARGIN:
        return None
    return ForeignWord(word, language, round(english, 2), round(there, 2))


def foreign_words(text: str) -> list[ForeignWord]:
    """The words of `text` (a relation name as words) judged not English, in order."""
    return [w for w in map(foreign_word, text.split()) if w is not None]


def available() -> bool:
    """Whether the language judgement can be made here (wordfreq is installed)."""
    return _zipf() is not None


def name_language(text: str) -> str:
    """The language a relation name (as words) is in, by its words judged not English: the language most of them
    are likeliest of, ties to the first word's ("" when none is judged, or without wordfreq).

    >>> name_language("nom subdivision mère")
    'French'
    """
    return words_language(foreign_words(text))


def words_language(words: list[ForeignWord]) -> str:
    """The language most of `words` (judged not English) are likeliest of, ties to the first word's ("" for none)."""
    if not words:
        return ""
    counts: dict[str, int] = {}
    for w in words:
        counts[w.language] = counts.get(w.language, 0) + 1
    best = max(counts.values())
    first = next(w.language for w in words if counts[w.language] == best)
    return LANGUAGE_NAMES.get(first, first)
