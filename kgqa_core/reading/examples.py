"""Worked examples for the question reader's first look, made from the user's own graph (LPKG's idea).

Why: the first look asks the model to write, unprompted by any example, the walk a question asks for
(`readers._unlisted_choice`).  LPKG (paper §3.2) teaches a model to plan from questions grounded in the
graph itself; here a few such questions, worked out as walks, go before the question.  They are grounded
in the user's graph (`lpkg.patterns.ground_patterns`) and worded by the template verbaliser
(`lpkg.verbalise`), so they speak the graph's own relation names: nothing in them is written from any
dataset's questions.  They are the same for every question of a graph, so a session reads them once (they
are part of the prompt's fixed text).

Examples
--------
>>> from kgqa_core.graph.knowledge_graph import KnowledgeGraph
>>> g = KnowledgeGraph.from_triplets([("Ann", "spouse", "Bob"), ("Bob", "ethnicity", "germans")])
>>> print(graph_examples(g, 1), end="")
Examples:
The question's entity: Bob
Question: What is the ethnicity of Bob?
Walk: Bob -ethnicity-> germans
<BLANKLINE>
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .paths import plan_ends
from .reading import PlanHop, RelationPlan

EXAMPLE_PATTERNS = ("1p", "2p")  # one and two hops, taken in turn
MAX_GRAPHS = 32  # examples kept for this many (graph, n, seed) at most
_MADE: dict[tuple[str, int, int], str] = {}  # (graph fingerprint, n, seed) -> the examples' text


def graph_examples(graph: Any, n: int, seed: int = 0) -> str:
    """`n` questions of `graph` with the walk that answers each, as prompt text ("" when none can be made).

    Parameters
    ----------
    graph : an in-memory graph (`KnowledgeGraph`); a store the grounder cannot sample gives "".
    n : examples at most (one-hop and two-hop questions in turn).
    seed : the grounder's seed: the same graph, `n` and seed give the same examples.
    """
    key = (str(getattr(graph, "fingerprint", id(graph))), n, seed)
    if key in _MADE:
        return _MADE[key]
    from ..lpkg.patterns import ground_patterns
    from ..lpkg.verbalise import TemplateVerbaliser

    try:
        instances = ground_patterns(graph, EXAMPLE_PATTERNS, n, seed=seed) if n > 0 else []
    except Exception:  # a graph store the grounder cannot sample: the reader goes without examples
        instances = []
    blocks = []
    for inst in instances:
        branch = inst.branches[0]
        plan = RelationPlan(branch.anchor, tuple(PlanHop(h.relation, not h.inverse) for h in branch.hops))
        ends = plan_ends(graph, plan)
        if not ends:
            continue
        first = next(iter(ends))
        plan = replace(plan, walk=ends[first], example=first)
        question = TemplateVerbaliser().verbalise(inst).question
        blocks.append(f"The question's entity: {branch.anchor}\nQuestion: {question}\nWalk: {plan.example_text}\n")
    text = "Examples:\n" + "\n".join(blocks) + "\n" if blocks else ""
    if len(_MADE) >= MAX_GRAPHS:  # a long session over many graphs: the oldest go
        _MADE.pop(next(iter(_MADE)))
    _MADE[key] = text
    return text
