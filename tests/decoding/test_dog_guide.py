"""DogGuide: one chain step's constraint as a state machine (free text, then a triplet at a trie node)."""

from __future__ import annotations

import pytest

from kgqa_core.decoding.constraint import Done, Generate, Write
from kgqa_core.decoding.dog_guide import DogGuides, InFreeText, InTriplet
from kgqa_core.graph.knowledge_graph import KnowledgeGraph

GRAPH = KnowledgeGraph.from_triplets(
    [
        ("Heat", "directed_by", "Michael Mann"),
        ("Heat", "release_year", "1995"),
        ("Collateral", "directed_by", "Michael Mann"),
    ],
    name="heat",
)


@pytest.fixture(scope="module")
def guides(small_model):
    return DogGuides(small_model, GRAPH, max_steps=2, repeat_triplets=False, reverse_readings=False)


def _spell(guide, state, text_ids):
    for tok in text_ids:
        state = guide.advance(state, tok)
    return state


def test_free_text_allows_any_token_and_an_opener_enters_the_triplet(guides, small_model):
    guide = guides.for_chain([0, 1], chain=[])
    state = guide.initial_state
    assert state == InFreeText(may_open=True)
    instruction = guide.instruction(state)
    assert isinstance(instruction, Generate) and instruction.allowed is None and instruction.forbidden is None
    word = small_model.encode(" Heat")[0]
    assert guide.advance(state, word) == state  # an ordinary word stays in free text
    opener = small_model.encode(" <")[0]
    inside = guide.advance(state, opener)
    assert inside == InTriplet(" <", 0)


def test_inside_the_triplet_the_trie_answers_write_generate_and_done(guides, small_model):
    guide = guides.for_chain([0, 1], chain=[])
    state = guide.open(" <")
    body = small_model.encode(" < Heat -> directed_by -> Michael Mann >")[1:]
    seen = set()
    while not guide.is_final(state):
        instruction = guide.instruction(state)
        seen.add(type(instruction))
        if isinstance(instruction, Write):
            assert list(instruction.tokens) == body[: len(instruction.tokens)]
            state = _spell(guide, state, instruction.tokens)
            body = body[len(instruction.tokens):]
        else:
            assert isinstance(instruction, Generate) and body[0] in instruction.allowed.tolist()
            state = guide.advance(state, body[0])
            body = body[1:]
    assert body == [] and isinstance(guide.instruction(state), Done)
    assert seen == {Write, Generate}  # " Heat" is forced, the relation is a choice
    assert guide.triplet_guide(" <").trie.triplets_at(state.node) == (0,)


def test_a_full_chain_may_not_open_and_its_own_triplets_are_left_out(guides, small_model):
    full = guides.for_chain([0, 1], chain=[0, 1])
    assert not full.may_open
    instruction = full.instruction(full.initial_state)
    assert instruction.forbidden is not None and small_model.encode(" <")[0] in instruction.forbidden.tolist()
    with pytest.raises(ValueError):
        full.open(" <")
    one = guides.for_chain([0, 1, 2], chain=[0])
    assert one.may_open and one.allowed_ids == [1, 2]  # repeat_triplets False: triplet 0 is not offered again
