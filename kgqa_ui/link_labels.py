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


# How a candidate was found that makes it a topic entity whatever its score: the name is in the question
# as written (the score only ranks it: a short or lower-case mention scores lower, "Mexico" got 0.84).
ALWAYS_PRESELECTED = ("override", "bracket", "exact")
PRESELECT_SCORE = 0.85


def preselected(candidates: list[Any], threshold: float = PRESELECT_SCORE, limit: int = 3) -> list[str]:
    """The topic entities ticked for the user: every exact name match, then the best others above ``threshold``.

    Fuzzy and case-folded matches fill up to ``limit`` places; exact ones are never left out
    (a label that says "exact name match" on an unticked entity made READS ignore Mexico).
    With nothing above the threshold the best candidate is offered.
    """
    sure = [c.entity for c in candidates if c.method in ALWAYS_PRESELECTED]
    likely = [c.entity for c in candidates if c.method not in ALWAYS_PRESELECTED and c.score >= threshold]
    picked = list(dict.fromkeys(sure + likely[: max(0, limit - len(sure))]))
    return picked or [c.entity for c in candidates[:1]]
