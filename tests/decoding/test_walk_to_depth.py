"""DoG's walk to depth: an answer line written too few hops out is taken back and the chain goes on.

The prompt's examples answer right after their first triplet, so the 135M
model copies that and answers one hop out; the question names two hops, so
the beam must cut the answer line off (its KV cells too), write the next
step number and let the model open a second triplet.
"""

from __future__ import annotations

import pytest
import torch

from kgqa_core.decoding.step_filters import WalkOut
from kgqa_core.decoding.chain_beam import BeamCandidate, ChainBeam, answer_sentence_start
from kgqa_core.decoding.step_offers import chain_depth, frontier_triplets
from kgqa_core.decoding.dog_guide import DogGuides
from kgqa_core.decoding.query_subgraph import QueryCentricSubgraph
from kgqa_core.graph.knowledge_graph import KnowledgeGraph

GRAPH = KnowledgeGraph.from_triplets(
    [
        ("Heat", "directed_by", "Michael Mann"),
        ("Collateral", "directed_by", "Michael Mann"),
        ("Collateral", "release_year", "2004"),
        ("Heat", "release_year", "1995"),
        ("Alien", "directed_by", "Ridley Scott"),
    ],
    name="heat",
)
SHOTS = "".join(
    f"Question: who directed {film}?\nAnswer: 1. < {film} -> directed_by -> {who} > This tells us {who} directed "
    f"{film}. Therefore, the answer is * {who}.\n\n"
    for film, who in [("Alien", "Ridley Scott"), ("Up", "Pete Docter"), ("Jaws", "Steven Spielberg")]
)
QUESTION = "Question: when were the films directed by the director of Heat released?\nAnswer: 1."


def test_chain_depth_counts_hops_from_the_topic_not_triplets():
    heat = GRAPH.find("Heat", "directed_by", "Michael Mann").id
    collateral = GRAPH.find("Collateral", "directed_by", "Michael Mann").id
    heat_year = GRAPH.find("Heat", "release_year", "1995").id
    assert chain_depth(GRAPH, [], ["Heat"]) == 0
    assert chain_depth(GRAPH, [heat, heat_year], ["Heat"]) == 1  # two facts of the topic: one hop
    assert chain_depth(GRAPH, [heat, collateral], ["Heat"]) == 2
    assert chain_depth(GRAPH, [collateral], ["Heat"]) == 0  # not reached from the topic


def test_frontier_triplets_lead_on_from_the_farthest_entities():
    heat = GRAPH.find("Heat", "directed_by", "Michael Mann").id
    collateral = GRAPH.find("Collateral", "directed_by", "Michael Mann").id
    year = GRAPH.find("Collateral", "release_year", "2004").id
    heat_year = GRAPH.find("Heat", "release_year", "1995").id
    everything = [t.id for t in GRAPH.triplets_by_ids(range(5))]
    assert frontier_triplets(GRAPH, [heat], ["Heat"], everything) == [collateral]
    assert frontier_triplets(GRAPH, [heat, collateral], ["Heat"], everything) == [year]
    assert set(frontier_triplets(GRAPH, [], ["Heat"], everything)) == {heat, heat_year}  # no triplet yet: the topic


def test_answer_sentence_start_keeps_the_sentences_before_the_answer():
    text = " This tells us Michael Mann directed Heat. Therefore, the answer is * Michael Mann."
    assert text[:answer_sentence_start(text)] == " This tells us Michael Mann directed Heat."
    assert answer_sentence_start("So the answer is X") == 0
    assert answer_sentence_start(" He did.\nThe answer is * X.") == len(" He did.\n")


@pytest.mark.parametrize("min_depth", [0, 2])
def test_an_early_answer_is_taken_back_and_the_chain_opens_another_triplet(backend_model, min_depth):
    model = backend_model
    first = GRAPH.find("Heat", "directed_by", "Michael Mann").id
    walked = " < Heat -> directed_by -> Michael Mann >"
    prompt_ids = model.encode(SHOTS + QUESTION + walked)
    state = model.prefill(prompt_ids)
    sub = QueryCentricSubgraph(GRAPH, ["Heat"])
    sub.expand(GRAPH.triplet(first))
    chain = BeamCandidate(state=state, subgraph=sub, chain=[first], triplet_scores=[0.0], text=walked)
    guides = DogGuides(model, GRAPH, max_steps=4)
    beam = ChainBeam(model, GRAPH, guides, width=1, max_new_tokens=64, force_conclusion=False,
                     walk_out=WalkOut(min_depth, max_steps=4) if min_depth else None)
    round_ = beam.advance([chain])
    if min_depth == 0:  # the model copies the examples: it answers one hop out
        assert [f.chain.text for f in round_.finished] and not round_.searched
        assert "the answer is * Michael Mann" in round_.finished[0].free_text
        assert round_.finished[0].taken_back is None
        return
    assert not round_.finished and len(round_.searched) == 1
    searched = round_.searched[0]
    taken = searched.taken_back
    assert taken is not None and taken.depth == 1 and taken.min_depth == 2 and taken.written == " 2."
    assert taken.text.lstrip().startswith("Therefore, the answer is")
    assert searched.free_text.endswith(" 2.") or " 2." in searched.free_text
    assert "answer is" not in searched.free_text  # the answer line is gone from the chain's text
    kept = round_.kept[0]
    assert kept.chain[0] == first and len(kept.chain) == 2 and kept.walked_on == 1
    # the step was offered only what leads on from Michael Mann: Collateral, two hops out
    assert (taken.offered, taken.of) == (1, 2)
    assert kept.chain[1] == GRAPH.find("Collateral", "directed_by", "Michael Mann").id
    assert chain_depth(GRAPH, kept.chain, ["Heat"]) == 2
    # the KV state holds exactly the chain's tokens: its next-token logits match a fresh read of them
    assert kept.state.ids == prompt_ids + kept.generated_ids
    model.clear_prefix_cache()
    fresh = model.prefill(kept.state.ids)
    a, b = kept.state.logits.float().log_softmax(-1), fresh.logits.float().log_softmax(-1)
    top = a.topk(10).indices
    # read in one batch vs token by token: llama.cpp's kernels differ by batch shape (tests/models/test_backends.py)
    assert int(a.argmax()) == int(b.argmax())
    assert float((a[top] - b[top]).abs().max()) < 0.5, float((a[top] - b[top]).abs().max())
    model.release(fresh)


def test_the_trace_note_quotes_what_was_taken_back_as_text():
    from kgqa_core.decoding.chain_beam import TakenBack
    from kgqa_core.methods.dog import taken_back_note

    taken = TakenBack(" Therefore, the answer is * <b>Michael Mann</b>.", depth=1, min_depth=2, written=" 2.",
                      offered=1, of=2)
    note = taken_back_note(taken, went_on=True)
    assert note == ("the chain wrote its answer 1 hop(s) from the question's entity, its reading says 2: "
                    "'Therefore, the answer is * <b>Michael Mann</b>.' was taken back and '2.' written; the next "
                    "triplet was offered only from the chain's farthest entities: 1 of 2 G_q triplets; it went on "
                    "to this triplet")
    assert taken_back_note(TakenBack("x" * 300, 0, 1, " 1."), went_on=False).endswith(
        "...' was taken back and '1.' written; it answered again, and that answer stands")


def test_a_chain_with_just_enough_triplets_left_is_offered_only_the_way_out(backend_model):
    """max_steps 2, one hop walked, two named: the last triplet must lead on, whatever the model writes first."""
    model = backend_model
    first = GRAPH.find("Heat", "directed_by", "Michael Mann").id
    walked = " < Heat -> directed_by -> Michael Mann >"
    prompt_ids = model.encode(SHOTS + QUESTION + walked)
    sub = QueryCentricSubgraph(GRAPH, ["Heat"])
    sub.expand(GRAPH.triplet(first))
    chain = BeamCandidate(state=model.prefill(prompt_ids), subgraph=sub, chain=[first], triplet_scores=[0.0],
                          text=walked)
    beam = ChainBeam(model, GRAPH, DogGuides(model, GRAPH, max_steps=2), width=1, max_new_tokens=64,
                     force_conclusion=False, walk_out=WalkOut(2, max_steps=2))
    round_ = beam.advance([chain])
    assert len(round_.searched) == 1
    assert round_.kept[0].chain == [first, GRAPH.find("Collateral", "directed_by", "Michael Mann").id]
    searched = round_.searched[0]
    # narrowed before the free text; the model answered anyway, so the take-back says so (and carries the counts)
    assert (searched.narrowed is not None) != (searched.taken_back is not None)
    counts = searched.narrowed or searched.taken_back
    assert (counts.offered, counts.of) == (1, 2)
    model.release(round_.kept[0].state)


def test_a_name_the_chain_has_reached_in_another_case_does_not_lead_on():
    g = KnowledgeGraph.from_triplets([("Omega Doom", "written_by", "Albert Pyun"),
                                      ("Sword", "written_by", "Albert Pyun"),
                                      ("Sword", "has_tags", "albert pyun"), ("Sword", "has_genre", "Fantasy")])
    chain = [g.find("Omega Doom", "written_by", "Albert Pyun").id, g.find("Sword", "written_by", "Albert Pyun").id]
    everything = [t.id for t in g.triplets_by_ids(range(4))]
    assert frontier_triplets(g, chain, ["Omega Doom"], everything) == [g.find("Sword", "has_genre", "Fantasy").id]


@pytest.mark.parametrize("walk_out_first", [False, True])
def test_walk_out_first_narrows_every_step_short_of_the_depth(backend_model, walk_out_first):
    """max_steps 4 leaves room, so only walk_out_first narrows the step before the model writes."""
    model = backend_model
    first = GRAPH.find("Heat", "directed_by", "Michael Mann").id
    walked = " < Heat -> directed_by -> Michael Mann >"
    sub = QueryCentricSubgraph(GRAPH, ["Heat"])
    sub.expand(GRAPH.triplet(first))
    chain = BeamCandidate(state=model.prefill(model.encode(SHOTS + QUESTION + walked)), subgraph=sub, chain=[first],
                          triplet_scores=[0.0], text=walked)
    beam = ChainBeam(model, GRAPH, DogGuides(model, GRAPH, max_steps=4), width=1, max_new_tokens=64,
                     force_conclusion=False, walk_out=WalkOut(2, first=walk_out_first, max_steps=4))
    guide, narrowed = beam._narrow(chain, beam.guides.for_chain(sub.triplet_ids, chain.chain))
    if not walk_out_first:
        assert narrowed is None and len(guide.allowed_ids) == 2
    else:
        assert (narrowed.offered, narrowed.of, narrowed.depth, narrowed.min_depth) == (1, 2, 1, 2)
        assert guide.allowed_ids == [GRAPH.find("Collateral", "directed_by", "Michael Mann").id]
    model.release(chain.state)
