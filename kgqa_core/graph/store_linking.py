"""Topic-entity linking against a remote store, where the entity list cannot be read.

An upload's linker indexes every entity name; a store has millions, so
instead every word n-gram of the question (stopword-only n-grams skipped) is
looked up as an exact label in one batched query, as written and title-cased.
A longer match hides the shorter ones inside it ("The Matrix Reloaded" over
"The Matrix").  Fuzzy matching is not offered on a store: name the entity
when the question misspells it (the UI and CLI say so).
"""

from __future__ import annotations

import re
from typing import Any

from .linking import STOPWORDS, EntityCandidate, case_factor, length_factor

_WORD = re.compile(r"\w+")
_BRACKET = re.compile(r"\[([^\[\]]+)\]")
_MAX_WORDS = 6


def link_in_store(question: str, store: Any, limit: int = 10) -> list[EntityCandidate]:
    """Ranked topic-entity candidates for `question` found by exact label lookups in `store`."""
    brackets = [m.group(1).strip() for m in _BRACKET.finditer(question)]
    if brackets:
        found = store.lookup_names(brackets)
        out = [EntityCandidate(found[b], 1.0, "bracket", b) for b in brackets if b in found]
        if out:
            return out[:limit]
    tokens = list(_WORD.finditer(question))
    spans: dict[str, tuple[int, int]] = {}
    for i in range(len(tokens)):
        for j in range(i + 1, min(len(tokens), i + _MAX_WORDS) + 1):
            words = [t.group().lower() for t in tokens[i:j]]
            if all(w in STOPWORDS or (w.isdigit() and len(w) < 3) for w in words):
                continue
            text = question[tokens[i].start() : tokens[j - 1].end()]
            for variant in dict.fromkeys((text, text.title())):
                spans.setdefault(variant, (i, j))
    if not spans:
        return []
    found = store.lookup_names(list(spans))
    hits = sorted(((spans[m], m, found[m]) for m in found), key=lambda h: (-(h[0][1] - h[0][0]), h[0][0]))
    taken: list[tuple[int, int]] = []
    out: list[EntityCandidate] = []
    for (i, j), mention, entity in hits:
        if any(a <= i and j <= b for a, b in taken):
            continue
        taken.append((i, j))
        base = 0.9 if entity == mention else 0.8
        score = base * length_factor(mention) * case_factor(mention, i)
        out.append(EntityCandidate(entity, round(min(score, 0.95), 4), "exact" if base == 0.9 else "case-insensitive", mention))
    out.sort(key=lambda c: (-c.score, -len(c.mention), c.entity))
    return out[:limit]
