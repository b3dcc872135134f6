"""How a suggested topic entity was found, in words a user reads (not ``(bracket, 1.00)``)."""

from __future__ import annotations

from typing import Any

_PLAIN = {
    "override": "named by you",
    "bracket": "marked with [ ] in the question",
    "exact": "exact name match",
    "case-insensitive": "name match, ignoring case",
}


def link_reason(method: str, score: float) -> str:
    """``exact name match``, ``fuzzy match 87%``...: why linking suggested an entity."""
    if method == "fuzzy":
        return f"fuzzy match {round(score * 100):d}%"
    return _PLAIN.get(method, f"{method} match {round(score * 100):d}%")


def topic_option_label(entity: str, candidate: Any | None) -> str:
    """The label of one topic-entity option: the name, then why it is offered."""
    if candidate is None:
        return f"{entity}  · added by you"
    return f"{entity}  · {link_reason(candidate.method, candidate.score)}"
