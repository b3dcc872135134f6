"""DoG's step filters: PlannedRelations (question_relations: the reading's relations, each as often as planned) and
WithinDepth (stay_at_depth), alone and inside the chain beam."""

from __future__ import annotations

import pytest

from kgqa_core.decoding.chain_beam import BeamCandidate, ChainBeam
from kgqa_core.decoding.dog_guide import DogGuides
from kgqa_core.decoding.query_subgraph import QueryCentricSubgraph
from kgqa_core.decoding.step_filters import PlannedRelations, StepView, WithinDepth
from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.graph.readings import triplet_of

from test_walk_to_depth import SHOTS  # the 135M model copies these: one triplet, then the answer

GRAPH = KnowledgeGraph.from_triplets(
    [
        ("Heat", "directed_by", "Michael Mann"),
        ("Heat", "release_year", "1995"),
        ("Heat", "has_tags", "michael mann"),
        ("Collateral", "directed_by", "Michael Mann"),
    ],
    name="heat",
)



def _first_step(model, relations):
    state = model.prefill(model.encode(SHOTS + "Question: who directed Heat?\nAnswer: 1."))
    chain = BeamCandidate(state=state, subgraph=QueryCentricSubgraph(GRAPH, ["Heat"]))
    planned = PlannedRelations(relations)
    beam = ChainBeam(model, GRAPH, DogGuides(model, GRAPH, max_steps=4), width=1, max_new_tokens=32,
                     force_conclusion=False, filters=[planned])
    round_ = beam.advance([chain])
    assert len(round_.searched) == 1, [f.free_text for f in round_.finished]
    searched = round_.searched[0]
    written = GRAPH.triplet(triplet_of(searched.extensions[0].hypothesis.triplet_id))
    offered = {GRAPH.triplet(triplet_of(rid)).relation for rid in searched.search.candidates}
    for kept in round_.kept:
        model.release(kept.state)
    return planned, written, offered


@pytest.mark.parametrize("relations", [frozenset(), frozenset({"release_year"})])
def test_a_step_offers_only_the_relations_the_question_names(backend_model, relations):
    planned, written, offered = _first_step(backend_model, relations)
    if not relations:  # the model copies its examples: the director
        assert written.relation == "directed_by" and planned.narrowed == 0
        return
    assert written.relation == "release_year" and offered == {"release_year"}
    assert (planned.narrowed, planned.seen) == (1, 1)
    assert "release_year" in planned.summary()


def test_a_relation_the_step_cannot_offer_leaves_the_step_as_it_was(backend_model):
    planned, written, _ = _first_step(backend_model, frozenset({"in_language"}))
    assert written.relation == "directed_by"
    assert (planned.narrowed, planned.seen, planned.fell_back) == (0, 1, 1)  # a dead end: the full offer
    assert "offered everything" in planned.summary()


def _after_heats_director(model):
    """A chain that wrote Heat's director (no KV state: the step's offer is all these tests read) and its guide."""
    first = GRAPH.find("Heat", "directed_by", "Michael Mann").id
    sub = QueryCentricSubgraph(GRAPH, ["Heat"])
    sub.expand(GRAPH.triplet(first))
    chain = BeamCandidate(state=None, subgraph=sub, chain=[first], triplet_scores=[0.0])
    guides = DogGuides(model, GRAPH, max_steps=4)
    return chain, guides, guides.for_chain(sub.triplet_ids, chain.chain)


def test_a_chain_as_deep_as_the_question_is_offered_only_triplets_within_that_depth(backend_model):
    """stay_at_depth: "who starred in Cemetery Man" must not walk on to a co-star's other film."""
    model = backend_model
    chain, guides, full = _after_heats_director(model)
    collateral = GRAPH.find("Collateral", "directed_by", "Michael Mann").id
    assert collateral in full.allowed_ids

    view = StepView(GRAPH, chain.chain, ["Heat"], guides)

    def offered(max_depth):
        f = WithinDepth(max_depth)
        return set(f.apply(view, full)[0].allowed_ids), f.steps

    # one hop named: the chain stands one hop out, so Collateral (two hops out) is not offered; Heat's own are
    got, capped = offered(1)
    assert collateral not in got and capped == 1
    assert got == {GRAPH.find("Heat", "release_year", "1995").id, GRAPH.find("Heat", "has_tags", "michael mann").id}
    assert offered(2) == (set(full.allowed_ids), 0)  # two hops named: the way on stays open
    assert offered(0) == (set(full.allowed_ids), 0)  # off
    # nothing left within the depth: the chain may not open another triplet (it concludes)
    only_on = guides.restricted(full, [collateral])
    guide, note = WithinDepth(1).apply(view, only_on)
    assert not guide.may_open and "further out were not offered (directed_by)" in note


def test_a_named_relation_is_walked_no_more_often_than_the_question_names_it(backend_model):
    """uses: "who directed Heat" names directed_by once, so the chain may not walk on to Michael Mann's other films."""
    model = backend_model
    collateral = GRAPH.find("Collateral", "directed_by", "Michael Mann").id
    chain, guides, full = _after_heats_director(model)

    view = StepView(GRAPH, chain.chain, ["Heat"], guides)

    def offered(uses):
        return set(PlannedRelations(frozenset({"directed_by"}), uses).apply(view, full)[0].allowed_ids)

    assert offered({"directed_by": 2}) == {collateral}  # "the films of the director of Heat": there and back
    # once: nothing of directed_by is left, so the step is offered everything (the rule never leaves it empty)...
    assert offered({"directed_by": 1}) == set(full.allowed_ids)
    assert offered({}) == {collateral}  # no count: the relation alone
    # ...unless the chain stands as deep as the question names: then nothing asked for is left and it concludes
    planned = PlannedRelations(frozenset({"directed_by"}), {"directed_by": 1}, min_depth=1)
    assert not planned.apply(view, full)[0].may_open and planned.narrowed == 1


def test_a_step_that_leads_to_a_dead_end_for_the_relations_still_to_walk_is_not_offered(backend_model):
    """"the release years of the films directed by the director of Heat": a film with no year is a dead end."""
    model = backend_model
    g = KnowledgeGraph.from_triplets([
        ("Heat", "directed_by", "Michael Mann"), ("Collateral", "directed_by", "Michael Mann"),
        ("Thief", "directed_by", "Michael Mann"), ("Thief", "release_year", "1981"),
    ])
    first = g.find("Heat", "directed_by", "Michael Mann").id
    sub = QueryCentricSubgraph(g, ["Heat"])
    sub.expand(g.triplet(first))
    chain = BeamCandidate(state=None, subgraph=sub, chain=[first], triplet_scores=[0.0])
    guides = DogGuides(model, g, max_steps=6)
    full = guides.for_chain(sub.triplet_ids, chain.chain)
    planned = PlannedRelations(frozenset({"directed_by", "release_year"}), {"directed_by": 2, "release_year": 1},
                               min_depth=3)
    guide, note = planned.apply(StepView(g, chain.chain, ["Heat"], guides), full)
    assert set(guide.allowed_ids) == {g.find("Thief", "directed_by", "Michael Mann").id}
    assert "left out" in note


BORDERS = KnowledgeGraph.from_triplets(
    [
        ("texas", "borders", "oklahoma"),
        ("oklahoma", "borders", "texas"),
        ("oklahoma", "capital", "oklahoma city"),
        ("oklahoma", "largest city", "texas"),  # another relation between the same two: stays offered
        ("texas", "borders", "louisiana"),
    ],
    name="borders",
)


def test_a_fact_the_chain_holds_is_not_offered_again_the_other_way_round(backend_model):
    from kgqa_core.decoding.step_filters import NoRestatement

    first = BORDERS.find("texas", "borders", "oklahoma").id
    sub = QueryCentricSubgraph(BORDERS, ["texas"])
    sub.expand(BORDERS.triplet(first))
    guides = DogGuides(backend_model, BORDERS, max_steps=4)
    full = guides.for_chain(sub.triplet_ids, [first])
    back = BORDERS.find("oklahoma", "borders", "texas").id
    assert back in full.allowed_ids
    f = NoRestatement()
    guide, note = f.apply(StepView(BORDERS, [first], ["texas"], guides), full)
    assert set(guide.allowed_ids) == set(full.allowed_ids) - {back}
    assert BORDERS.find("oklahoma", "largest city", "texas").id in guide.allowed_ids
    assert "oklahoma -borders-> texas" in note and f.steps == 1 and "skip_restatements" in f.summary()
    # nothing held yet: the first step is the paper's offer
    assert f.apply(StepView(BORDERS, [], ["texas"], guides), full)[0] is full


def test_skip_restatements_is_a_workbench_piece_the_paper_preset_turns_off():
    from kgqa_core.methods.dog import DogGuidance, DogParams
    from kgqa_core.reading.reading import QuestionReading

    unsure = QuestionReading(reader="none")
    assert [f.name for f in DogGuidance.from_reading(unsure, DogParams()).filters] == ["skip_restatements"]
    assert DogParams.PRESETS["paper"]["skip_restatements"] is False
    off = DogParams(skip_restatements=False)
    assert DogGuidance.from_reading(unsure, off).filters == []


def test_an_unsure_reading_narrows_a_step_to_its_likely_plans_relations_and_less_the_less_sure_it_is(backend_model):
    """unsure_relations: the relations of the plans that hold the given share of an unsure reading's probability."""
    from kgqa_core.methods.dog import DogGuidance, DogParams
    from kgqa_core.reading.reading import PlanHop, QuestionReading, RelationPlan

    def reading(*plans):
        best = plans[0]
        return QuestionReading("paths", hops=len(best.hops), confidence=best.confidence, sure=True,
                               relations=best.relations, plans=list(plans))

    spread = reading(RelationPlan("texas", (PlanHop("borders"), PlanHop("capital")), 0.45),
                     RelationPlan("texas", (PlanHop("borders"),) * 3, 0.4),
                     RelationPlan("texas", (PlanHop("largest city"),), 0.15))
    assert not spread.guides(0.5)
    g = DogGuidance.from_reading(spread, DogParams(unsure_relations=0.8))
    assert [f.name for f in g.filters] == ["skip_restatements", "unsure_relations"]
    assert g.walk_out.min_depth == 2  # its plans all walk two hops or more (unsure_depth: tests/decoding/test_unsure_depth.py)
    f = g.filters[-1]
    assert f.relations == {"borders", "capital"} and not f.uses and not f.order  # no count, no order: plans differ
    guides = DogGuides(backend_model, BORDERS, max_steps=4)
    full = guides.for_chain(QueryCentricSubgraph(BORDERS, ["texas"]).triplet_ids, [])
    guide, note = f.apply(StepView(BORDERS, [], ["texas"], guides), full)
    kept = {BORDERS.triplet(triplet_of(t)).relation for t in guide.allowed_ids}
    assert kept <= {"borders", "capital"} and len(guide.allowed_ids) < len(full.allowed_ids)
    assert "2 most likely plan(s), 85% of its probability" in note and "largest city" in note
    assert "unsure_relations: 1 of 1 step(s)" in f.summary()
    # asked for all of its probability, the plans name every relation the step offers: nothing is narrowed
    everything = DogGuidance.from_reading(spread, DogParams(unsure_relations=1.0)).filters[-1]
    assert everything.apply(StepView(BORDERS, [], ["texas"], guides), full) == (full, "")
    # the default (0.8) narrows as above; off (the paper preset): an unsure reading narrows nothing
    assert [f.name for f in DogGuidance.from_reading(spread, DogParams()).filters] == ["skip_restatements",
                                                                                       "unsure_relations"]
    assert [f.name for f in DogGuidance.from_reading(spread, DogParams(unsure_relations=0.0)).filters] == \
        ["skip_restatements"]
    assert DogParams.PRESETS["paper"]["unsure_relations"] == 0.0
