"""Fuzzy search over entity names, for search boxes and "did you mean" hints.

Its own module (rapidfuzz only) so that the graph classes can offer search
without importing the linker, which imports the loaders, which import the
graph classes.
"""

from __future__ import annotations

from typing import Sequence

from rapidfuzz import fuzz, process
from rapidfuzz.utils import default_process


def search_entity_names(query: str, names: Sequence[str], limit: int = 10) -> list[tuple[str, float]]:
    """Names matching `query`, best first, with scores in 0..1 (for search boxes)."""
    q = query.strip()
    if not q or limit <= 0:
        return []
    scores: dict[str, float] = {}
    folded_q = q.casefold()
    for n in names:
        if n == q:
            scores[n] = 1.0
        elif len(n) == len(q) and n.casefold() == folded_q:
            scores[n] = 0.95
    for name, score, _ in process.extract(
        q, names, scorer=fuzz.WRatio, processor=default_process, limit=limit * 2, score_cutoff=50.0
    ):
        s = 0.9 * score / 100.0
        if s > scores.get(name, 0.0):
            scores[name] = s
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], len(kv[0]), kv[0]))
    return [(n, round(s, 4)) for n, s in ranked[:limit]]

