"""Traces round-trip through JSON exactly, and faithfulness is measured correctly."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.trace.faithfulness import check_chains, ground_chain
from kgqa_core.trace.schema import (
    SCHEMA_VERSION,
    Answer,
    Candidate,
    ChainTriplet,
    ModelCall,
    Step,
    TokenOption,
    TokenPosition,
    Trace,
    TraceFormatError,
    load_trace,
    save_trace,
)


def _full_trace() -> Trace:
    trace = Trace(method="dog", question="Which country is Grand Bahama in?", model="smollm2-135m",
                  parameters={"beam_size": 2, "local_visibility": False}, seed=3,
                  graph_fingerprint="abc", topic_entities=["Grand Bahama"])
    step = Step(
        index=0, kind="dog.triplet", beam=0, subgraph_before=[1, 2], subgraph_after=[1, 2, 5],
        added_entities=["Bahamas"],
        candidates=[Candidate(label="Grand Bahama -> containedby -> Bahamas", score=-1.25, triplet_id=1,
                              triplet=("Grand Bahama", "containedby", "Bahamas"), prob=0.8, kept=True, beam=0)],
        choice="Grand Bahama -> containedby -> Bahamas", chosen_triplet_id=1, model_text="1. ",
        token_view=[TokenPosition(chosen=" Grand", chosen_id=10, chosen_prob=0.9,
                                  allowed=[TokenOption(" Grand", 10, 0.9), TokenOption(" Bah", 11, 0.1)], n_allowed=2)],
        model_calls=[ModelCall("decode", 100, 12, 12, 0.5, prompt="p", output="o")],
        tokens_in=100, tokens_out=12, seconds=0.5, extra={"chain": [1], "chain_score": -1.25},
    )
    trace.add_step(step)
    trace.answers = [Answer("Bahamas", entity="Bahamas", in_graph=True, score=-1.25)]
    trace.chains = [[ChainTriplet("Grand Bahama", "containedby", "Bahamas", 1, True, True)]]
    trace.chain_scores = [-1.25]
    return trace


def test_round_trip_is_identical(tmp_path):
    trace = _full_trace()
    again = Trace.from_json(trace.to_json())
    assert again == trace
    path = save_trace(trace, tmp_path / "runs" / "t.json")
    assert load_trace(path) == trace
    assert json.loads(path.read_text())["schema_version"] == SCHEMA_VERSION


def test_tuples_survive_the_round_trip():
    trace = _full_trace()
    again = Trace.from_json(trace.to_json())
    assert again.steps[0].candidates[0].triplet == ("Grand Bahama", "containedby", "Bahamas")
    assert isinstance(again.steps[0].token_view[0].allowed[0], TokenOption)


def test_infinite_scores_serialise_as_json():
    trace = Trace(method="x", question="q", chain_scores=[float("-inf")])
    data = json.loads(trace.to_json())
    assert data["chain_scores"][0] < -1e300


def test_not_a_trace_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"hello": 1}')
    with pytest.raises(TraceFormatError, match="bad.json: not a trace"):
        load_trace(bad)
    bad.write_text("{not json")
    with pytest.raises(TraceFormatError, match="not valid JSON"):
        load_trace(bad)


def test_newer_schema_is_refused():
    data = _full_trace().to_dict()
    data["schema_version"] = SCHEMA_VERSION + 1
    with pytest.raises(TraceFormatError, match="newer"):
        Trace.from_dict(data)


names = st.text(st.characters(blacklist_categories=("Cs",)), min_size=0, max_size=12)


@settings(max_examples=40, deadline=None)
@given(q=names, ents=st.lists(names, max_size=4), score=st.floats(allow_nan=False, allow_infinity=False))
def test_round_trip_property(q, ents, score):
    trace = Trace(method="cot", question=q, topic_entities=ents, chain_scores=[score],
                  answers=[Answer(e) for e in ents])
    assert Trace.from_json(trace.to_json()) == trace


# ------------------------------------------------------------- faithfulness
@pytest.fixture()
def graph() -> KnowledgeGraph:
    return KnowledgeGraph.from_triplets([
        ("Carlton the Bear", "sports.mascot.team", "Toronto Maple Leafs"),
        ("Toronto Maple Leafs", "sports.sports_team.sport", "Ice Hockey"),
        ("Toronto", "sports.sports_team_location.teams", "Toronto Maple Leafs"),
        ("Montreal", "location.in", "Canada"),
    ])


def test_well_formed_chain_has_no_ill_triplets(graph):
    chain = [("Carlton the Bear", "sports.mascot.team", "Toronto Maple Leafs"),
             ("Toronto Maple Leafs", "sports.sports_team.sport", "Ice Hockey")]
    report = check_chains(graph, [chain], ["Carlton the Bear"], [Answer("Ice Hockey", "Ice Hockey", True)])
    assert report.checked == 2 and report.ill_triplets == 0 and report.in_graph == 2
    assert report.answers_in_graph == 1
    assert [d.triplet_id for d in report.details] == [0, 1]


def test_hallucinated_and_disconnected_triplets_are_ill(graph):
    chain = [("Carlton the Bear", "sports.mascot.team", "Boston Bruins"),  # not in the graph
             ("Montreal", "location.in", "Canada")]  # in the graph, but not connected
    grounded = ground_chain(graph, chain, ["Carlton the Bear"])
    assert [g.in_graph for g in grounded] == [False, True]
    assert [g.grounded for g in grounded] == [False, False]
    assert "not in the graph" in grounded[0].reason
    assert "visited" in grounded[1].reason
    report = check_chains(graph, [chain], ["Carlton the Bear"])
    assert report.ill_triplets == 2 and report.ill_rate == 1.0
