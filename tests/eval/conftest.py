"""Shared helpers for the evaluation tests: a fake method registered under a test name."""

from __future__ import annotations

import json
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest

from kgqa_core.parameters import MethodParams, param
from kgqa_core.trace.schema import Answer, ChainTriplet, Step

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "datasets" / "metaqa_sample" / "metaqa_dev_50.jsonl"


class FakeModel:
    name = "fake-model"
    revision = "0"


@dataclass(frozen=True)
class FakeParams(MethodParams):
    beam_size: int = param(1, "unused", min=1, max=16)
    hops: int = param(2, "unused", min=1, max=4)


def _fake_run(request, params, rec) -> None:
    """Answers with the topic entity's first neighbour; raises on questions containing 'boom'."""
    _fake_run.calls.append(request.question)
    if "boom" in request.question:
        raise RuntimeError("the fake method exploded")
    topic = request.topic_entities[0]
    first = request.graph.neighbours(topic)[0]
    rec.count_call(50)
    rec.count_call(50)
    rec.step(Step(index=0, kind="fake.search", subgraph_after=[first.id]))
    ans = first.other(topic)
    rec.trace.answers = [Answer(text=ans, entity=ans, in_graph=True)]
    rec.trace.chains = [[ChainTriplet(first.head, first.relation, first.tail, first.id, True, True)]]


_fake_run.calls = []


@pytest.fixture
def fake_method(monkeypatch):
    """Register method 'fake' (module kgqa_fake_method) and return its call log."""
    from kgqa_core.methods import base

    module = types.ModuleType("kgqa_fake_method")
    module.SPEC = base.MethodSpec("fake", _fake_run, FakeParams, "a test method")
    _fake_run.calls = []
    monkeypatch.setitem(sys.modules, "kgqa_fake_method", module)
    monkeypatch.setitem(base.METHODS, "fake", "kgqa_fake_method")
    return _fake_run.calls


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def fake_model():
    return FakeModel()


@pytest.fixture
def sample_path() -> Path:
    return SAMPLE


@pytest.fixture
def jsonl(tmp_path):
    """Write rows (dicts or raw strings) as a JSONL file and return its path."""
    return lambda rows, name="data.jsonl": write_jsonl(tmp_path / name, rows)


@pytest.fixture
def small_dataset(tmp_path) -> Path:
    return _small_dataset(tmp_path / "small.jsonl")


def _small_dataset(path: Path) -> Path:
    graph = [["Heat", "directed_by", "Michael Mann"], ["Heat", "starred_actors", "Al Pacino"],
             ["Collateral", "directed_by", "Michael Mann"]]
    rows = [
        {"id": "q1", "question": "who directed Heat", "topic_entities": ["Heat"], "answers": ["Michael Mann"],
         "graph": graph, "type": "1hop", "gold_chain": [["Heat", "directed_by", "Michael Mann"]]},
        {"id": "q2", "question": "who starred in Heat", "topic_entities": ["Heat"], "answers": ["Al Pacino"],
         "graph": graph, "type": "1hop"},
        {"id": "q3", "question": "boom: which films did Michael Mann direct", "topic_entities": ["Michael Mann"],
         "answers": ["Heat", "Collateral"], "graph": graph, "type": "2hop"},
    ]
    return write_jsonl(path, rows)
