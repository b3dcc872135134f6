"""Grading a run against its gold answers: one verdict for the app's cards, Compare and ``kgqa_core show``.

Why here and not in the UI: the CLI prints the same verdict the app shows
(``ask --gold``), and both read it from the gold saved in the trace
(`Trace.gold_answers`), so a card is graded only against its own question's
gold.  Matching ignores case, repeated white space and punctuation at the
ends ("The Wrecking Crew." is "the wrecking crew"); the evaluation's stricter
metrics (articles, inner punctuation) stay in `kgqa_core.eval.metrics`.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Iterable, Sequence

from .schema import Answer


def normalise_answer(text: str) -> str:
    text = unicodedata.normalize("NFKC", str(text)).casefold().strip()
    text = re.sub(r"\s+", " ", text)
    return text.strip(" .,;:'\"")


@dataclass(frozen=True)
class GoldGrade:
    """Hit@1 (the first answer is gold) and how many distinct gold answers the run found."""

    hit_at_1: bool
    matched: int
    predicted: int
    gold: int

    @property
    def text(self) -> str:
        """Plain words, no emoji (a system without an emoji font shows empty boxes)."""
        lead = "first answer correct" if self.hit_at_1 else ("partly correct" if self.matched else "not correct")
        return f"{lead}: {self.matched}/{self.gold} gold found"


def grade(answers: Sequence[Answer], gold: Iterable[str]) -> GoldGrade | None:
    """The grade of ``answers`` against ``gold``; None when there is no gold."""
    gold_set = {normalise_answer(g) for g in gold if str(g).strip()}
    if not gold_set:
        return None
    preds = [normalise_answer(a.entity or a.text) for a in answers]
    preds_alt = [normalise_answer(a.text) for a in answers]
    found = {p for p in preds + preds_alt if p in gold_set}
    hit = bool(answers) and (preds[0] in gold_set or preds_alt[0] in gold_set)
    return GoldGrade(hit_at_1=hit, matched=len(found), predicted=len(answers), gold=len(gold_set))
