"""Neighbour branches (§4.2.2): first-order facts around the main paths, filtered once.

Candidates are the triplets touching an entity of a main path that are not
themselves on a main path.  They are grouped by (entity, relation,
direction):

* when a group already has a member on a main path, the paper keeps the
  main-path entity and deletes the other neighbours of that relation
  (``sibling_rule="drop"``).  That loses every other answer of a list
  question ("what films did Joel Zwick direct": the main path holds one
  film, the others are exactly these siblings), so the default
  ``"compact"`` keeps the main-path entity on its path and folds the
  siblings into ONE compact candidate; ``"keep"`` treats them like any
  other neighbours;
* when a group fans out to many entities it becomes one compact candidate,
  ``(Film A; Film B; ... +3 more) -> directed_by -> Joel Zwick``, holding
  the triplet ids it lists, so the relevance prompt stays short.

All candidates go to the model in one numbered list; `parse_relevance`
reads the answer robustly (numbers, ranges, echoed triplets, yes/no lines)
and counts whatever it names that is not a candidate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from rapidfuzz import fuzz

from .. import progress
from ..graph.knowledge_graph import KnowledgeGraph
from .paths import KGPath


SIBLING_RULES = ("compact", "drop", "keep")


@dataclass
class Branch:
    """One candidate branch: a triplet, or a fan-out of one relation, around an anchor."""

    anchor: str  # the main-path entity it hangs from
    relation: str
    forward: bool  # anchor is the head of the triplets
    others: list[str]  # entities at the other end (listed ones)
    triplet_ids: list[int]  # triplets of the listed entities
    hidden: int = 0  # further entities of the fan-out left out of the list

    @property
    def label(self) -> str:
        if len(self.others) == 1 and not self.hidden:
            other = self.others[0]
        else:
            more = f" ... +{self.hidden} more" if self.hidden else ""
            other = "(" + "; ".join(self.others) + more + ")"
        if self.forward:
            return f"{self.anchor} -> {self.relation} -> {other}"
        return f"{other} -> {self.relation} -> {self.anchor}"


@dataclass
class BranchCandidates:
    branches: list[Branch] = field(default_factory=list)
    dropped_siblings: int = 0  # triplets removed by the sibling rule
    truncated: int = 0  # candidates beyond max_branches
    hub_groups: int = 0  # fan-outs larger than max_group, left out
    notes: list[str] = field(default_factory=list)


@progress.in_phase(progress.CONTEXT_RANKING)
def candidate_branches(
    graph: KnowledgeGraph,
    main_paths: Sequence[KGPath],
    fanout: int = 3,
    max_listed: int = 8,
    max_branches: int = 40,
    sibling_rule: str = "compact",
    max_group: int = 100,
) -> BranchCandidates:
    """First-order neighbour branches of the entities on the main paths.

    Entities are visited in path order.  A group of one relation with more
    than ``fanout`` members becomes one compact candidate listing up to
    ``max_listed`` of them.  A group of more than ``max_group`` (a hub
    such as a genre with thousands of films) is left out: eight names out of
    thousands tell the model nothing and cost prompt tokens.
    """
    if sibling_rule not in SIBLING_RULES:
        raise ValueError(f"sibling_rule must be one of {', '.join(SIBLING_RULES)}, not {sibling_rule!r}")
    on_path: set[int] = set()
    anchors: list[str] = []
    for p in main_paths:
        on_path.update(p.triplet_ids)
        for e in p.entities:
            if e not in anchors:
                anchors.append(e)
    out = BranchCandidates()
    used: set[int] = set(on_path)
    for anchor in anchors:
        groups: dict[tuple[str, bool], list] = {}
        for t in graph.neighbours(anchor):
            forward = t.head == anchor
            groups.setdefault((t.relation, forward), []).append(t)
        for (relation, forward), trips in groups.items():
            fresh = [t for t in trips if t.id not in used]
            if not fresh:
                continue
            siblings = sibling_rule != "keep" and any(t.id in on_path for t in trips)
            if siblings and sibling_rule == "drop":
                out.dropped_siblings += len(fresh)
                used.update(t.id for t in fresh)
                continue
            used.update(t.id for t in fresh)
            if len(fresh) > max_group:
                out.hub_groups += 1
                continue
            if siblings or len(fresh) > fanout:
                listed = fresh[:max_listed]
                out.branches.append(
                    Branch(anchor, relation, forward, [t.other(anchor) for t in listed],
                           [t.id for t in listed], hidden=len(fresh) - len(listed))
                )
            else:
                for t in fresh:
                    out.branches.append(Branch(anchor, relation, forward, [t.other(anchor)], [t.id]))
    if len(out.branches) > max_branches:
        out.truncated = len(out.branches) - max_branches
        out.branches = out.branches[:max_branches]
        out.notes.append(
            f"{out.truncated} neighbour branches beyond max_branches={max_branches} were not shown to the model"
        )
    if out.hub_groups:
        out.notes.append(
            f"{out.hub_groups} relation fan-outs of more than {max_group} entities (hubs) left out of the branches"
        )
    if out.dropped_siblings:
        out.notes.append(
            f"{out.dropped_siblings} neighbour triplets dropped: their relation already leads along a main path (§4.2.2)"
        )
    return out


# ---------------------------------------------------------------- parsing
@dataclass
class RelevanceJudgement:
    """What the model's relevance answer selected (1-based candidate numbers)."""

    kept: list[int] = field(default_factory=list)
    rejected: list[int] = field(default_factory=list)  # named explicitly as irrelevant
    invalid: list[str] = field(default_factory=list)  # numbers/triplets that are not candidates
    none_relevant: bool = False


_NEGATIVE = re.compile(r"\b(no|not|irrelevant|unrelated|none|neither|nor)\b", re.I)
_NUMBER = re.compile(r"(?<![\w.])#?(\d{1,4})(?:\s*(?:-|–|to)\s*(\d{1,4}))?(?![\w])")
_LEADING_NUMBER = re.compile(r"^\s*(?:[-*•]\s*)?(?:fact\s*|#)?\(?(\d{1,4})[.):\]]?\s+", re.I)


def _is_negative(clause: str) -> bool:
    return bool(_NEGATIVE.search(clause))


def _norm(text: str) -> str:
    text = text.lower().replace("“", '"').replace("”", '"')
    text = re.sub(r"\s*(->|<-|→)\s*", " -> ", text)
    text = re.sub(r"[\"'`*]", "", text)
    return re.sub(r"\s+", " ", text).strip(" .,;:")


def parse_relevance(text: str, labels: Sequence[str]) -> RelevanceJudgement:
    """Read the model's relevance answer against the numbered candidates ``labels``.

    Accepted forms: ``1, 3, 5``; ``1-3``; ``#2``; ``Relevant: 2 and 4``;
    lines echoing a candidate (``3. A -> r -> B`` or just ``A -> r -> B``);
    per-item verdicts (``1: yes``, ``2. not relevant``); ``none``.  A
    number outside 1..n, or an echoed triplet that matches no candidate, is
    ignored and reported in ``invalid``.
    """
    n = len(labels)
    normed = [_norm(l) for l in labels]
    judgement = RelevanceJudgement()
    kept: dict[int, None] = {}
    rejected: dict[int, None] = {}

    def resolve_triplet(segment: str, hint: int | None) -> int | None:
        """The candidate an echoed triplet names: exact, or a cut-off echo of one."""
        s = _norm(segment)
        if hint is not None and 1 <= hint <= n:
            lab = normed[hint - 1]
            if s == lab or (len(s) > 8 and s in lab) or fuzz.ratio(s, lab) >= 85:
                return hint
        for i, lab in enumerate(normed):
            if s == lab:
                return i + 1
        if len(s) > 8:
            partial = [i for i, lab in enumerate(normed) if s in lab or lab in s]
            if len(partial) == 1:
                return partial[0] + 1
        return None

    stripped = text.strip()
    if re.fullmatch(r"(?is)\W*(none|no relevant facts?|nothing)\W*(\.|relevant)?\W*", stripped):
        judgement.none_relevant = True
        return judgement
    for raw_line in text.splitlines():
        line = raw_line.strip()
        if not line:
            continue
        lead = _LEADING_NUMBER.match(line)
        hint = int(lead.group(1)) if lead else None
        if "->" in line or "→" in line or "<-" in line:
            body = line[lead.end():] if lead else line
            body = re.sub(r"\s*[:\-–]\s*(yes|no|relevant|not relevant|irrelevant)\.?\s*$", "", body, flags=re.I)
            idx = resolve_triplet(body, hint)
            verdict_neg = bool(re.search(r"\b(not relevant|irrelevant|: no\b|- no\b)", line, re.I))
            if idx is None:
                judgement.invalid.append(line)
            elif verdict_neg:
                rejected.setdefault(idx, None)
            else:
                kept.setdefault(idx, None)
            continue
        if lead is not None and not _NUMBER.search(line[lead.end():]):
            # "3. yes" / "3: not relevant" / "3. Relevant"
            if not 1 <= hint <= n:
                judgement.invalid.append(str(hint))
            elif _is_negative(line[lead.end():]):
                rejected.setdefault(hint, None)
            else:
                kept.setdefault(hint, None)
            continue
        for clause in re.split(r"(?<=[.;])\s+(?=[A-Za-z])", line):
            target = rejected if _is_negative(clause) else kept
            for m in _NUMBER.finditer(clause):
                lo = int(m.group(1))
                hi = int(m.group(2)) if m.group(2) else lo
                if hi < lo or hi - lo > n:
                    hi = lo
                for k in range(lo, hi + 1):
                    if 1 <= k <= n:
                        target.setdefault(k, None)
                    else:
                        judgement.invalid.append(str(k))
    judgement.kept = [k for k in kept if k not in rejected]
    judgement.rejected = list(rejected)
    return judgement


def numbered_list(labels: Iterable[str]) -> str:
    return "\n".join(f"{i}. {label}" for i, label in enumerate(labels, start=1))
