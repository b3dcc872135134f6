"""The model's look at the graph's relations: which of them a question asks about, beyond what an embedder matches.

Why: the walks the reader offers the model are chosen by a sentence embedder's
closeness between the question's words and the relations' names, and an
English embedder misses paraphrases that the language model itself knows
("the screenwriter of X also wrote": `written_by`; "which licences": 
`distributed_under`; "what does X pull in": `depends_on`).  The walk the
question needs is then never offered, and no later look can choose it.

So the model is asked, once per question, how likely each relation of the
walks is as "the relation the question asks about", against how likely it is
with no question at all (pointwise mutual information, the calibration of
Holtzman et al. 2021, "Surface form competition"): a relation the model
thinks likely anyway (a short, common name) gains nothing from the prior,
one the question makes likelier gains.  Nothing comes from a word list:
only the graph's relation names, the user's aliases for them and the
model's log-probabilities.

The cost is one batch of short continuations (a relation's words each) after
the question; the no-question scores depend only on the graph's relations,
and are kept per model for the next question.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from ..models.interface import PromptText, loaded_model_key
from .reading import RelationPlan
from .vocabulary import RelationVocabulary, relation_text

LOOK_HEAD = ("Each question below is followed by one relation of a knowledge graph that the question asks "
             "about.\n\n")
# The question left out: what the model expects of a relation name with nothing to read (the prior it is weighed
# against).
NO_QUESTION = "?"


@dataclass
class RelationLook:
    """How much a question raises each relation's likelihood, in nats (its log-probability with the question
    minus without one), and the model call that read it."""

    gain: dict[str, float] = field(default_factory=dict)
    calls: list[Any] = field(default_factory=list)
    forward_passes: int = 0

    def walk_score(self, plan: RelationPlan) -> float:
        """A walk's score: its hops' mean gain, so a walk with one hop the question does not ask for pays for it."""
        return sum(self.gain.get(h.relation, 0.0) for h in plan.hops) / max(1, len(plan.hops))


# (`loaded_model_key`, relation's text) -> log P(text | no question)
_PRIORS: dict[tuple[Any, ...], float] = {}


def _texts(relations: Sequence[str], vocabulary: RelationVocabulary | None) -> list[str]:
    return [" " + relation_text(r, vocabulary) + "\n" for r in relations]


def _scored(model: Any, question: str, texts: Sequence[str]) -> tuple[list[float], Any, int, str]:
    """Each relation's text after the question's line, one batch: the question is read once, the fixed first line
    once a session (`PromptText`).  Returns the totals, the scores, the forward passes and the prompt."""
    prompt = PromptText(LOOK_HEAD + f"Question: {question}\nRelation:", LOOK_HEAD)
    with model.lock:
        before = model.counter.snapshot()
        scores = model.score_continuations(prompt, list(texts))
        after = model.counter.snapshot()
    return [float(s.total) for s in scores], scores, after[0] - before[0], prompt


def relation_look(model: Any, question: str, relations: Sequence[str],
                  vocabulary: RelationVocabulary | None = None) -> RelationLook:
    """How much the question raises each of `relations` in the model's eyes (see the module's docstring).

    Parameters
    ----------
    model : a model backend (`kgqa_core.models.interface`)
    question : the question as the user wrote it
    relations : the relations of the walks from the question's entities
    vocabulary : the user's aliases, written after a relation's words as the readers embed them

    Returns
    -------
    A `RelationLook`: each relation's gain in nats and the model call (kept in the trace).
    """
    relations = list(dict.fromkeys(relations))
    if not relations:
        return RelationLook()
    texts = _texts(relations, vocabulary)
    asked, scores, passes, prompt = _scored(model, question, texts)
    key = loaded_model_key(model)
    missing = [t for t in texts if (*key, t) not in _PRIORS]
    if missing:
        prior, _, more, _ = _scored(model, NO_QUESTION, missing)
        passes += more
        _PRIORS.update({(*key, t): p for t, p in zip(missing, prior)})
    gain = {r: a - _PRIORS[(*key, t)] for r, t, a in zip(relations, texts, asked)}
    call = model.call_record("reads.reading (the relations the question asks about)", scores, prompt)
    call.forward_passes = passes
    return RelationLook(gain=gain, calls=[call], forward_passes=passes)
