"""The READS error taxonomy (App. F, Tab. 10): where a wrong answer went wrong.

Two questions decide the class of a result:

1. Does the subgraph the method *retrieved* contain a gold answer entity?
2. Is the very first predicted answer gold?

=========================  ==================================================  =====
retrieved subgraph         first answer                                         class
=========================  ==================================================  =====
contains a gold answer     gold                                                 C1
contains a gold answer     not gold, but a gold answer is later in the list    E2 (pruning: gold not filtered to the top)
contains a gold answer     not gold, and no gold answer in the list            E3 (answering: wrong answer position)
lacks every gold answer    gold                                                 C2 (right without support: ungrounded)
lacks every gold answer    not gold                                             E1 (searching: answer never retrieved)
=========================  ==================================================  =====

The retrieved subgraph is the union of every step's ``subgraph_after``
(triplet ids resolved against the question's graph) - what the method had in
view at any point - or ``trace.extra["retrieved_triplets"]`` (ids or
``[h, r, t]`` lists) for methods that record it there.  Methods that expose no
subgraph (Direct reads the whole linearised graph) get ``None``: the split
between "not retrieved" and "not reasoned" is undefined for them.
"""

from __future__ import annotations

from typing import Sequence

from ..graph.knowledge_graph import KnowledgeGraph
from ..trace.schema import Trace
from .metrics import normalize_answer, predicted_answer_forms

ERROR_CLASS_DESCRIPTIONS = {
    "C1": "correct: first answer gold, answer in the retrieved subgraph",
    "C2": "correct but ungrounded: first answer gold, yet not in the retrieved subgraph",
    "E1": "search error: no gold answer in the retrieved subgraph",
    "E2": "pruning error: a gold answer is predicted, but not first",
    "E3": "answering error: the subgraph holds a gold answer, the prediction none",
}


def retrieved_entities(trace: Trace, graph: KnowledgeGraph) -> set[str] | None:
    """Entities of the subgraph the method retrieved, or None if it exposes none."""
    extra = trace.extra.get("retrieved_triplets") if isinstance(trace.extra, dict) else None
    entities: set[str] = set()
    found = False
    if extra is not None:
        found = True
        for item in extra:
            if isinstance(item, int) and not isinstance(item, bool):
                if graph.has_triplet_id(item):
                    t = graph.triplet(item)
                    entities.update((t.head, t.tail))
            elif isinstance(item, (list, tuple)) and len(item) == 3:
                entities.update((str(item[0]), str(item[2])))
    ids: set[int] = set()
    for step in trace.steps:
        ids.update(step.subgraph_after)
    if ids:
        found = True
        entities |= graph.entities_of(ids)
    return entities if found else None


def classify_result(
    predicted: Sequence[str | Sequence[str]],
    gold_answers: Sequence[str],
    retrieved: set[str] | None,
) -> str | None:
    """The Tab. 10 class from a prediction list, gold answers and the retrieved entities."""
    if retrieved is None:
        return None
    gold = {normalize_answer(g) for g in gold_answers} - {""}
    in_subgraph = any(normalize_answer(e) in gold for e in retrieved)
    correct = []
    for p in predicted:
        forms = [p] if isinstance(p, str) else list(p)
        correct.append(any(normalize_answer(f) in gold for f in forms))
    first_correct = bool(correct) and correct[0]
    if in_subgraph:
        if first_correct:
            return "C1"
        return "E2" if any(correct) else "E3"
    return "C2" if first_correct else "E1"


def classify_error(trace: Trace, graph: KnowledgeGraph, gold_answers: Sequence[str]) -> str | None:
    """Classify one trace as C1/C2/E1/E2/E3, or None when it exposes no retrieved subgraph."""
    return classify_result(predicted_answer_forms(trace), gold_answers, retrieved_entities(trace, graph))
