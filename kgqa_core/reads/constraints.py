"""Constraints of the pruning subtask (§3.2, §4.2): values, options, and pruning.

A constraint option is (position, operator, value): ``entity_2 = KITT``,
``date_3 > 1990``, ``date_3 max``.  Values come from the question: entities
that the question mentions (entity linking, plus the names of G_k's own
entities found in the question text: C = E_question ∩ E_graph, Eq. 3),
numbers, and dates.  ``min``/``max`` need no value but are offered only when
the question has a superlative cue ("latest", "first", "most"...), because a
model asked "prune to the maximum?" on every question with a date node would
prune questions that never asked for it.

Only options that change G_k are offered: applying the option must remove at
least one triplet and leave at least one entity at its position.

Pruning follows the paper's subtree rule (retain only the subtrees from the
root that meet the constraint) at every level of the constraint's branch: an
entity on the path from the root to the constraint position survives only if
one of its descendants at that position satisfies the constraint.  At the
root's children this is exactly the paper's rule; applying it further down
also filters constraints that sit below a shared hub (the films of one
director released in 1997), where cutting only at the root's children would
keep or drop everything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from .abstract_structure import AbstractStructure
from .values import DateTuple, MONTHS, is_topic_id, parse_date, parse_number, strip_literal

OPERATORS = ("=", "<", "<=", ">", ">=", "min", "max")
COMPARISONS = ("=", "<", "<=", ">", ">=")

_SUPERLATIVES = {
    "latest", "earliest", "first", "last", "most", "least", "oldest", "newest", "youngest",
    "largest", "smallest", "biggest", "highest", "lowest", "longest", "shortest", "recent",
    "best", "worst", "maximum", "minimum", "greatest", "fewest", "top", "final", "initial",
    "max", "min", "tallest", "heaviest", "lightest", "richest", "earliest", "furthest", "closest",
}


@dataclass(frozen=True)
class ConstraintValue:
    """A value the question mentions: a graph entity, a number or a date."""

    text: str
    kind: str  # "entity" | "num" | "date"
    number: float | None = None
    date: DateTuple | None = None
    source: str = ""  # "linked", "mentioned", "question number", "question date"


@dataclass(frozen=True)
class ConstraintOption:
    position: str
    operator: str
    value: ConstraintValue | None = None

    @property
    def text(self) -> str:
        if self.value is None:
            return f"{self.position} {self.operator}"
        return f"{self.position} {self.operator} {self.value.text}"


# ---------------------------------------------------------------- question
_MONTH_NAMES = "|".join(sorted(MONTHS, key=len, reverse=True))
_DATE_PATTERNS = [
    re.compile(r"\b\d{4}[-/]\d{1,2}(?:[-/]\d{1,2})?\b"),
    re.compile(rf"\b(?:{_MONTH_NAMES})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}\b", re.I),
    re.compile(rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:{_MONTH_NAMES})\.?,?\s+\d{{4}}\b", re.I),
    re.compile(rf"\b(?:{_MONTH_NAMES})\.?\s+\d{{4}}\b", re.I),
]
_NUMBER_IN_TEXT = re.compile(r"(?<![\w.])[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w])")


def parse_question_values(question: str) -> list[ConstraintValue]:
    """Numbers and dates the question states; four-digit years count as dates."""
    values: list[ConstraintValue] = []
    taken: list[tuple[int, int]] = []
    for pattern in _DATE_PATTERNS:
        for m in pattern.finditer(question):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            d = parse_date(m.group(0))
            if d is not None:
                taken.append(m.span())
                values.append(ConstraintValue(m.group(0), "date", None, d, "question date"))
    for m in _NUMBER_IN_TEXT.finditer(question):
        if any(a < m.end() and m.start() < b for a, b in taken):
            continue
        number = parse_number(m.group(0))
        if number is None:
            continue
        year = parse_date(m.group(0), allow_bare_year=True) if re.fullmatch(r"\d{4}", m.group(0)) else None
        if year is not None and 1000 <= number <= 2100:
            values.append(ConstraintValue(m.group(0), "date", number, year, "question date"))
        else:
            values.append(ConstraintValue(m.group(0), "num", number, None, "question number"))
    return values


def has_superlative(question: str) -> bool:
    words = set(re.findall(r"[a-z]+", question.lower()))
    return bool(words & _SUPERLATIVES)


def _norm(text: str) -> str:
    return " ".join(strip_literal(text).casefold().split())


def constraint_entities(
    question: str,
    structure: AbstractStructure,
    linked: Iterable[str] = (),
) -> list[ConstraintValue]:
    """Entities of G_k (outside the root) that the question names.

    ``linked`` are the entity linker's results for the question; an entity
    of G_k whose name appears in the question as a whole word also counts
    (the linker may rank it below its cut-off).  Mentions inside the start
    entity's own mention are ignored ("Knight" in "Knight Rider").
    """
    q = question.casefold()
    root_spans = [(m.start(), m.end()) for m in re.finditer(re.escape(_norm(structure.root_id)), q)] if _norm(structure.root_id) else []
    in_graph: dict[str, str] = {}
    for node in structure.nodes.values():
        if node.parent is None:
            continue
        for e in node.entities:
            in_graph.setdefault(_norm(e), e)
    found: dict[str, ConstraintValue] = {}
    for name in linked:
        key = _norm(name)
        if key in in_graph and key != _norm(structure.root_id):
            found.setdefault(key, ConstraintValue(in_graph[key], "entity", source="linked"))
    for key, entity in in_graph.items():
        if key in found or key == _norm(structure.root_id) or is_topic_id(entity):
            continue
        if parse_number(entity) is not None or parse_date(entity) is not None:
            continue  # literals are matched as numbers / dates
        # "College/University" names alternatives: either part may be the mention.
        forms = [key] + ([p.strip() for p in key.split("/")] if "/" in key else [])
        forms = [f for f in forms if len(f) >= 4 or " " in f]
        spans = [
            (m.start(), m.end())
            for form in forms
            for m in re.finditer(rf"(?<!\w){re.escape(form)}(?!\w)", q)
        ]
        spans = [s for s in spans if not any(a <= s[0] and s[1] <= b for a, b in root_spans)]
        if spans:
            found[key] = ConstraintValue(entity, "entity", source="mentioned")
    return list(found.values())


# ----------------------------------------------------------------- options
def _comparable(entity: str, node_type: str, value: ConstraintValue | None) -> float | DateTuple | None:
    if node_type == "date":
        d = parse_date(entity, allow_bare_year=True)
        if d is None:
            return None
        if value is not None and value.date is not None:
            return d[: len(value.date)]
        return d
    if node_type == "num":
        return parse_number(entity)
    return None


def _target(node_type: str, value: ConstraintValue) -> float | DateTuple | None:
    if node_type == "date":
        return value.date
    if node_type == "num":
        return value.number
    return None


def satisfying(structure: AbstractStructure, option: ConstraintOption) -> set[str]:
    """Entities at the option's position that meet it."""
    node = structure[option.position]
    ents = node.entities
    op, value = option.operator, option.value
    if value is not None and value.kind == "entity":
        return {e for e in ents if _norm(e) == _norm(value.text)} if op == "=" else set()
    if op in ("min", "max"):
        keyed = {e: _comparable(e, node.type, None) for e in ents}
        keyed = {e: k for e, k in keyed.items() if k is not None}
        if not keyed:
            return set()
        best = (max if op == "max" else min)(keyed.values())
        return {e for e, k in keyed.items() if k == best}
    if value is None:
        return set()
    target = _target(node.type, value)
    if target is None:
        return set()
    out = set()
    for e in ents:
        k = _comparable(e, node.type, value)
        if k is None:
            continue
        if (
            (op == "=" and k == target)
            or (op == "<" and k < target)
            or (op == "<=" and k <= target)
            or (op == ">" and k > target)
            or (op == ">=" and k >= target)
        ):
            out.add(e)
    return out


def apply_constraint(structure: AbstractStructure, option: ConstraintOption) -> set[int]:
    """Prune G_k in place to the subtrees that meet ``option``; returns removed triplet ids."""
    path = structure.path_from_root(option.position)
    keep: dict[str, set[str]] = {option.position: satisfying(structure, option)}
    for i in range(len(path) - 2, 0, -1):
        child = structure[path[i + 1]]
        keep[path[i]] = {link.parent_entity for link in child.links if link.entity in keep[path[i + 1]]}
    removed: set[int] = set()
    for node_id in path[1:]:
        drop = set(structure[node_id].entities) - keep[node_id]
        removed |= structure.remove_entities(node_id, drop)
    return removed


def constraint_options(
    structure: AbstractStructure,
    values: list[ConstraintValue],
    question: str,
    used: Iterable[ConstraintOption] = (),
) -> list[ConstraintOption]:
    """Every (position, operator, value) that would prune G_k without emptying its position, each text once."""
    used = list(used)
    used_values = {u.value for u in used if u.value is not None}
    used_extremes = {u.position for u in used if u.value is None}
    used_positions = {u.position for u in used}
    candidates: list[ConstraintOption] = []
    for node in structure.nodes.values():
        if node.parent is None or node.id in used_positions:
            continue
        for value in values:
            if value in used_values:
                continue
            if value.kind == "entity":
                candidates.append(ConstraintOption(node.id, "=", value))
            elif node.type in ("num", "date") and _target(node.type, value) is not None:
                candidates.extend(ConstraintOption(node.id, op, value) for op in COMPARISONS)
        if node.type in ("num", "date") and node.id not in used_extremes and has_superlative(question):
            candidates.extend(ConstraintOption(node.id, op) for op in ("max", "min"))
    out = []
    texts: set[str] = set()
    for option in candidates:
        if option.text in texts:  # one value read two ways (a graph entity "4317" and the number 4317): one option
            continue
        trial = structure.copy()
        if not satisfying(trial, option):
            continue
        if apply_constraint(trial, option) and trial[option.position].links:
            out.append(option)
            texts.add(option.text)
    return out
