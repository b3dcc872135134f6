"""What an edit of the graph changed in a run: the Explore page's counterfactual check, in words.

Why: "the answer changed: the method follows the graph's evidence" was shown
whenever two answer sets differed.  Removing ``Jose CORONA plays_position
Goalkeeper`` made a run gain six goalkeepers who are not Mexican, and the
green box still praised the method.  A changed answer is not yet a faithful
one: this report says what changed (answers gained and lost), whether the
edited triplets were on the original chain (or on the new one), and which
answers of the edited run its own chain does not support, and only calls the
change consistent with the edit when all three agree.

Pure functions over traces (no Streamlit), so the verdicts are unit-tested.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from kgqa_core.trace.gold import normalise_answer
from kgqa_core.trace.grounding import AnswerGrounding, ground_answers
from kgqa_core.trace.schema import Trace


@dataclass(frozen=True)
class Edit:
    """One change to the edited copy: ``op`` is "removed" or "added"."""

    op: str
    triplet_id: int
    head: str
    relation: str
    tail: str

    @property
    def text(self) -> str:
        return f"{self.head} -> {self.relation} -> {self.tail}"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Edit":
        return cls(str(data["op"]), int(data["triplet_id"]), str(data["head"]), str(data["relation"]), str(data["tail"]))

    def to_dict(self) -> dict[str, Any]:
        return {"op": self.op, "triplet_id": self.triplet_id, "head": self.head, "relation": self.relation,
                "tail": self.tail}


@dataclass
class EditEffect:
    """How the run on the edited graph differs from the run on the original."""

    gained: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    removed_on_chain: list[Edit] = field(default_factory=list)     # removed, and the original's best chain cited it
    removed_on_other: list[Edit] = field(default_factory=list)     # removed, cited by another of its chains
    removed_elsewhere: list[Edit] = field(default_factory=list)    # removed, not cited by the original run
    added_on_chain: list[Edit] = field(default_factory=list)       # added, and the edited run's chains cite it
    unsupported: list[AnswerGrounding] = field(default_factory=list)  # edited run's answers its chains do not reach

    @property
    def changed(self) -> bool:
        return bool(self.gained or self.lost)

    @property
    def level(self) -> str:
        """``success`` only when the change is explained by the edit and every new answer is supported."""
        if self.unsupported and self.changed:
            return "warning"
        if not self.changed and self.removed_on_chain:
            return "warning"
        if self.changed and (self.removed_on_chain or self.added_on_chain) and not self.unsupported:
            return "success"
        return "info"

    @property
    def headline(self) -> str:
        if not self.changed:
            if self.removed_on_chain:
                return ("The answer did not change although the edit removed a triplet of the original chain: the "
                        "answer does not rest on that triplet alone (see the new chain).")
            return "The answer did not change; the edit touched no triplet the original chain cited."
        if self.unsupported:
            return (f"The answer changed, but {len(self.unsupported)} answer(s) of the edited run are not supported "
                    "by its own chain: the change is not evidence that the method follows the graph.")
        if self.removed_on_chain or self.added_on_chain:
            return ("The answer changed with the edit: an edited triplet was on a chain, and every answer of the "
                    "edited run is reached by its chain.")
        return ("The answer changed although no edited triplet was on either run's chain: the search went "
                "another way, which the edit alone does not explain.")

    def details(self) -> list[str]:
        """Plain-text lines (shown as text): what was gained, lost, and where the edited triplets were."""
        out = []
        if self.gained:
            out.append(f"Answers gained ({len(self.gained)}): " + ", ".join(self.gained))
        if self.lost:
            out.append(f"Answers lost ({len(self.lost)}): " + ", ".join(self.lost))
        if self.kept and self.changed:
            out.append(f"Answers kept ({len(self.kept)}): " + ", ".join(self.kept))
        for e in self.removed_on_chain:
            out.append(f"Removed #{e.triplet_id} ({e.text}): it was on the original run's chain.")
        for e in self.removed_on_other:
            out.append(f"Removed #{e.triplet_id} ({e.text}): cited by another chain of the original run, "
                       "not its best one.")
        for e in self.removed_elsewhere:
            out.append(f"Removed #{e.triplet_id} ({e.text}): not on the original run's chains.")
        for e in self.added_on_chain:
            out.append(f"Added #{e.triplet_id} ({e.text}): the edited run's chain cites it.")
        for a in self.unsupported:
            out.append(f"Not supported by the edited run's chain: {a.answer} ({a.explanation}).")
        return out


def _chain_ids(chains: Iterable[Iterable[Any]]) -> set[int]:
    return {ct.triplet_id for chain in chains for ct in chain if ct.triplet_id is not None}


def _chain_texts(chains: Iterable[Iterable[Any]]) -> set[tuple[str, str, str]]:
    return {(ct.head.strip(), ct.relation.strip(), ct.tail.strip()) for chain in chains for ct in chain}


def _names(trace: Trace) -> dict[str, str]:
    """Normalised answer -> the name shown (the linked entity when there is one)."""
    out: dict[str, str] = {}
    for a in trace.answers:
        name = a.entity or a.text
        out.setdefault(normalise_answer(name), name)
    return out


def edit_effect(original: Trace, edited: Trace, edits: Iterable[Edit], edited_graph: Any | None = None) -> EditEffect:
    """Compare the run on the original graph with the run on the edited copy, given the edits made."""
    before, after = _names(original), _names(edited)
    effect = EditEffect(
        gained=[after[k] for k in after if k not in before],
        lost=[before[k] for k in before if k not in after],
        kept=[after[k] for k in after if k in before],
    )
    best_ids = _chain_ids(original.chains[:1])
    other_ids = _chain_ids(original.chains[1:])
    best_text, other_text = _chain_texts(original.chains[:1]), _chain_texts(original.chains[1:])
    new_ids, new_text = _chain_ids(edited.chains), _chain_texts(edited.chains)
    for e in edits:
        key = (e.head.strip(), e.relation.strip(), e.tail.strip())
        if e.op == "removed":
            if e.triplet_id in best_ids or key in best_text:
                effect.removed_on_chain.append(e)
            elif e.triplet_id in other_ids or key in other_text:
                effect.removed_on_other.append(e)
            else:
                effect.removed_elsewhere.append(e)
        elif e.op == "added" and (e.triplet_id in new_ids or key in new_text):
            effect.added_on_chain.append(e)
    report = ground_answers(edited.answers, edited.chains, edited_graph, edited.topic_entities)
    effect.unsupported = [a for a in report.answers if not (a.grounded and a.at_end)]
    return effect
