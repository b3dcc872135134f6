"""DoG (Decoding on Graphs): triplet steps of each beam, beam selections, answers.

Scores are the paper's Eq. 3: a triplet's score is the sum of its tokens'
log-probabilities; a chain's is the sum of its triplets'.  Candidates the
token search did not complete carry an upper bound (``extra.exact`` False),
drawn and labelled as partial so they are never read as better than the
triplet that was actually decoded.
"""

from __future__ import annotations

from typing import Any

from kgqa_core.trace.schema import Candidate, Step, Trace

from ..scene import SceneBuilder
from .base import StepView, add_candidates, int_list, is_partial, ordinal


class DogView(StepView):
    method = "dog"
    label = "Decoding on Graphs"
    score_unit = "log-probability (Eq. 3)"
    score_is_logprob = True
    drawn_extras = frozenset({"unread", "chain", "chain_score", "chains", "chain_scores", "dropped", "answers", "error",
                              "triplet_score", "stop", "forced_conclusion", "parent_beam"})

    def step_name(self, trace: Trace, index: int) -> str:
        step = trace.steps[index]
        beam = f"beam {step.beam}" if step.beam is not None else ""
        if step.kind == "dog.beam":
            hop = sum(1 for s in trace.steps[: index + 1] if s.kind == "dog.beam")
            kept = sum(1 for c in step.candidates if c.kept)
            return f"beam selection after hop {hop}: kept {kept} of {len(step.candidates)} chains"
        if step.kind == "dog.answer":
            return " · ".join(x for x in (beam, "answer") if x)
        if step.kind == "dog.triplet":
            if step.extra.get("error"):
                return " · ".join(x for x in (beam, "constraint failure") if x)
            n = len(int_list(step.extra.get("chain"))) or 1
            return " · ".join(x for x in (beam, f"{ordinal(n)} triplet") if x)
        return super().step_name(trace, index)

    def step_layers(self, b: SceneBuilder, trace: Trace, step: Step, graph: Any | None) -> None:
        chains = step.extra.get("chains") if isinstance(step.extra.get("chains"), list) else None
        add_candidates(b, step, chains)
        if step.kind != "dog.beam":
            for tid in int_list(step.extra.get("chain")):
                b.triplet(tid, "chain", info="chain so far")

    def display_text(self, step: Step) -> str:
        """The free text before the triplet, then the triplet as the model wrote it (``< h -> r -> t >``)."""
        text = step.model_text or ""
        if step.kind == "dog.triplet" and step.choice and step.choice not in text:
            sep = "" if not text or text.endswith((" ", "\n")) else " "
            text = f"{text}{sep}< {step.choice} >"
        return text

    def score_unit_for(self, step: Step) -> str:
        if step.kind == "dog.beam":
            return "chain log-probability"
        return self.score_unit

    def score_legend(self, step: Step) -> str:
        k = "k"
        if step.kind == "dog.beam":
            return (f"Chain score = the sum of its triplets' scores, each the sum of the triplet's token "
                    f"log-probabilities (DoG Eq. 3); 0 is certain, more negative is less likely. The {k} best "
                    "chains are kept (k = beam size); the others are dropped. Kept chains are listed first.")
        return ("Score = the sum of the triplet's token log-probabilities (DoG Eq. 3); 0 is certain, more negative "
                "is less likely; the probability is in the tooltip. Kept = the triplet's chain is among the k best "
                "after this step (k = beam size). Partial = the token search stopped before finishing the triplet; "
                "the bar shows an upper bound (the shared prefix plus its first diverging token), so its full "
                "score is at most that. Kept candidates come first, then fully scored ones, then partial ones.")

    def candidate_reason(self, step: Step, cand: Candidate) -> str:
        if step.kind == "dog.beam":
            return "kept: among the k best chains" if cand.kept else "dropped: outscored by the kept chains"
        if cand.kept:
            return "kept: its chain is among the k best after this triplet"
        if is_partial(cand):
            return "dropped: the search never finished this triplet (score at most this bound)"
        return "dropped: decoded in full, but its chain scored below the kept ones"


VIEWS = [DogView()]
