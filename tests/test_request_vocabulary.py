"""`MethodRequest.vocabulary` reaches the method: on an in-memory graph and through a graph store's run."""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass

import pytest

from kgqa_core.graph import KnowledgeGraph
from kgqa_core.graph.store import Neighbourhood, StoreCosts
from kgqa_core.methods import base
from kgqa_core.methods.base import MethodRequest, run_method
from kgqa_core.parameters import MethodParams, preset_param
from kgqa_core.reading.vocabulary import RelationVocabulary
from kgqa_core.trace.schema import Answer

TRIPLETS = [("Heat", "directed_by", "Michael Mann"), ("Heat", "release_year", "1995")]


@dataclass(frozen=True)
class _Params(MethodParams):
    preset: str = preset_param()


def _run(request, params, rec) -> None:
    _run.seen.append(request.vocabulary)
    rec.trace.answers = [Answer(text="Michael Mann", entity="Michael Mann", in_graph=True)]


_run.seen = []


@pytest.fixture
def spy(monkeypatch):
    module = types.ModuleType("kgqa_spy_method")
    module.SPEC = base.MethodSpec("spy", _run, _Params, "records the request's vocabulary")
    monkeypatch.setitem(sys.modules, "kgqa_spy_method", module)
    monkeypatch.setitem(base.METHODS, "spy", "kgqa_spy_method")
    _run.seen = []
    return _run.seen


class _Store:
    """The least a graph store offers `run_on_store`: names, a neighbourhood, costs, a description."""

    is_local = False
    name = "fake store"
    fingerprint = "store-fp"

    def __init__(self) -> None:
        self.costs = StoreCosts()
        self.graph = KnowledgeGraph.from_triplets(TRIPLETS, name="fetched")

    def lookup_names(self, names):
        return {n: n for n in names if self.graph.has_entity(n)}

    def subgraph_around(self, seeds):
        return Neighbourhood(graph=self.graph, seeds=list(seeds), hops=1)

    def describe(self):
        return {"endpoint": "http://localhost/sparql"}


def test_the_vocabulary_reaches_the_method_on_a_graph_and_on_a_store(spy):
    vocab = RelationVocabulary.parse("directed_by: director, made by", "words.txt")
    assert MethodRequest(graph=None, question="q", model=None).vocabulary is None  # optional
    for graph in (KnowledgeGraph.from_triplets(TRIPLETS, name="films"), _Store()):
        trace = run_method("spy", MethodRequest(graph=graph, question="who directed Heat", model=None,
                                                topic_entities=["Heat"], vocabulary=vocab))
        assert not trace.error, trace.error
        assert spy[-1] is vocab
    assert len(spy) == 2 and trace.extra["graph_store"]["name"] == "fake store"  # the second ran through the store
