"""DoG's conclude_at_depth: a chain whose path has walked a sure reading's whole plan writes its answer line there.

Without it the chain lists the hop's other triplets ("Collateral -> directed_by -> Michael Mann" after "Heat ->
directed_by -> Michael Mann"), tokens that add no answer the graph's completion would not add.
"""

from __future__ import annotations

import pytest

from kgqa_core.decoding.chain_beam import BeamCandidate, ChainBeam
from kgqa_core.decoding.dog_guide import DogGuides
from kgqa_core.decoding.query_subgraph import QueryCentricSubgraph
from kgqa_core.decoding.step_filters import ConcludeAtDepth
from kgqa_core.graph.knowledge_graph import KnowledgeGraph

from test_walk_to_depth import GRAPH, SHOTS

QUESTION = "Question: when were the films directed by the director of Heat released?\nAnswer: 1."


def _chain(model, *facts):
    """A chain that wrote `facts` (head, relation, tail), with its KV state."""
    ids = [GRAPH.find(*f).id for f in facts]
    walked = "".join(f" {i + 1}. < {h} -> {r} -> {t} >" for i, (h, r, t) in enumerate(facts))[3:]
    state = model.prefill(model.encode(SHOTS + QUESTION + walked))
    sub = QueryCentricSubgraph(GRAPH, ["Heat"])
    for i in ids:
        sub.expand(GRAPH.triplet(i))
    return BeamCandidate(state=state, subgraph=sub, chain=ids, triplet_scores=[0.0] * len(ids), text=walked)


def test_the_path_must_walk_the_plan_exactly():
    heat = GRAPH.find("Heat", "directed_by", "Michael Mann").id
    collateral = GRAPH.find("Collateral", "directed_by", "Michael Mann").id
    year = GRAPH.find("Collateral", "release_year", "2004").id
    heat_year = GRAPH.find("Heat", "release_year", "1995").id
    plan = ConcludeAtDepth(("directed_by", "directed_by", "release_year"), 0.95)
    assert not plan.reached(GRAPH, [], ["Heat"])
    assert not plan.reached(GRAPH, [heat], ["Heat"])
    assert not plan.reached(GRAPH, [heat, collateral], ["Heat"])
    assert plan.reached(GRAPH, [heat, collateral, year], ["Heat"])
    assert not plan.reached(GRAPH, [heat_year], ["Heat"])  # a fact of the topic on another relation
    assert not plan.reached(GRAPH, [collateral, year], ["Heat"])  # not from the question's entity
    assert ConcludeAtDepth(("release_year",)).reached(GRAPH, [heat_year], ["Heat"])


@pytest.mark.parametrize("done", [True, False])
def test_a_chain_that_completed_the_plan_writes_its_answer_line_and_one_that_did_not_goes_on(backend_model, done):
    model = backend_model
    facts = [("Heat", "directed_by", "Michael Mann"), ("Collateral", "directed_by", "Michael Mann")]
    if done:
        facts.append(("Collateral", "release_year", "2004"))
    chain = _chain(model, *facts)
    conclude = ConcludeAtDepth(("directed_by", "directed_by", "release_year"), 0.95)
    beam = ChainBeam(model, GRAPH, DogGuides(model, GRAPH, max_steps=6), width=1, max_new_tokens=64,
                     force_conclusion=True, conclude=conclude)
    round_ = beam.advance([chain])
    try:
        if done:
            assert [f.stop for f in round_.finished] == ["depth"] and not round_.searched
            finished = round_.finished[0]
            assert finished.forced_conclusion and finished.free_text.startswith(" Therefore, the answer is")
            assert finished.free_text.count("*") <= 1, finished.free_text  # one item: the graph adds the rest
            assert "walked the question's reading to its end" in conclude.note() and "95% sure" in conclude.note()
            assert "Collateral" not in conclude.note()
        else:
            assert all(f.stop != "depth" for f in round_.finished)
    finally:
        for kept in round_.kept:
            model.release(kept.state)
        model.release(chain.state)


def test_a_depth_conclusion_ends_after_its_first_answer_whatever_its_name_holds():
    from kgqa_core.decoding.free_text import first_answer_end
    from kgqa_core.decoding.prompt import parse_answers

    for text, kept in [(" * playwright, and * poet.", " * playwright"),
                       (" * austin, texas, * laredo, texas", " * austin, texas"),
                       (" * 2004 and * 1995", " * 2004"),
                       (" * Mel Gibson; * Jodie Foster", " * Mel Gibson"),
                       (" Mel Gibson.\nNext", " Mel Gibson.")]:
        cut = first_answer_end(text)
        assert cut is not None and text[:cut] == kept, (text, cut)
        assert parse_answers(" Therefore, the answer is" + text[:cut]) == parse_answers(
            " Therefore, the answer is" + kept)
    assert parse_answers(" Therefore, the answer is * austin, texas") == ["austin, texas"]
    assert first_answer_end(" * austin, texas") is None  # one item and no line end yet: the model writes on


def test_the_answer_item_is_chosen_among_the_path_s_end_and_the_entities_the_chain_wrote():
    """A sure reading can be a hop too long: the item may then be an entity the chain wrote before the path's end
    (not the question's own), as well as one the path reaches at its last hop."""
    from types import SimpleNamespace

    facts = [("Heat", "directed_by", "Michael Mann"), ("Collateral", "directed_by", "Michael Mann"),
             ("Collateral", "release_year", "2004")]
    ids = [GRAPH.find(*f).id for f in facts]
    sub = QueryCentricSubgraph(GRAPH, ["Heat"])
    for i in ids:
        sub.expand(GRAPH.triplet(i))
    chain = BeamCandidate(state=None, subgraph=sub, chain=ids, triplet_scores=[0.0] * len(ids), text="")
    names = ChainBeam._reached(SimpleNamespace(graph=GRAPH), chain)
    # the chain's own first (within the cap), then the path's end (here only Collateral's year: the path does not
    # come back to Heat); before, only the path's end: "2004"
    assert names == ["Michael Mann", "Collateral", "2004"], names
    assert "Heat" not in names  # never the question's own entity
