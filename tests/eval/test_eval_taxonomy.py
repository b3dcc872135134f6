"""READS error taxonomy (App. F, Tab. 10) on hand-made traces."""

import pytest

from kgqa_core.eval.taxonomy import classify_error, classify_result, retrieved_entities
from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.trace.schema import Answer, Step, Trace

G = KnowledgeGraph.from_triplets([
    ("Heat", "directed_by", "Michael Mann"),       # 0
    ("Heat", "starred_actors", "Al Pacino"),       # 1
    ("Heat", "release_year", "1995"),              # 2
    ("Collateral", "directed_by", "Michael Mann"),  # 3
])
GOLD = ["Michael Mann"]


def trace(answers, *subgraphs, extra=None):
    t = Trace(method="reads", question="who directed Heat", answers=[Answer(a, a) for a in answers], extra=extra or {})
    for ids in subgraphs:
        t.add_step(Step(index=0, kind="reads.search", subgraph_after=list(ids)))
    return t


@pytest.mark.parametrize("answers,subgraph,expected", [
    (["Michael Mann"], [0, 1], "C1"),
    (["Al Pacino", "Michael Mann"], [0, 1], "E2"),
    (["Al Pacino"], [0, 1], "E3"),
    ([], [0, 1], "E3"),
    (["Michael Mann"], [1, 2], "C2"),
    (["Al Pacino"], [1, 2], "E1"),
    ([], [2], "E1"),
])
def test_five_classes(answers, subgraph, expected):
    assert classify_error(trace(answers, subgraph), G, GOLD) == expected


def test_union_over_steps_counts_as_retrieved():
    # retrieved at step 1, pruned away by step 2: still "retrieved" -> not E1
    assert classify_error(trace(["Al Pacino"], [0, 1], [1]), G, GOLD) == "E3"


def test_method_without_subgraph_is_not_classified():
    assert classify_error(trace(["Michael Mann"]), G, GOLD) is None
    assert retrieved_entities(trace(["x"]), G) is None


def test_extra_retrieved_triplets_as_ids_or_triplets():
    assert classify_error(trace(["Al Pacino"], extra={"retrieved_triplets": [0]}), G, GOLD) == "E3"
    t = trace(["michael mann"], extra={"retrieved_triplets": [["Heat", "starred_actors", "Al Pacino"]]})
    assert classify_error(t, G, GOLD) == "C2"


def test_matching_is_normalised():
    assert classify_result(["the michael mann"], ["Michael Mann"], {"Michael Mann"}) == "C1"
