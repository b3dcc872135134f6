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


CAST = KnowledgeGraph.from_triplets(
    [
        ("Heat", "starred_actors", "Al Pacino"),  # 0
        ("Heat", "starred_actors", "Robert De Niro"),  # 1
        ("Heat", "starred_actors", "Val Kilmer"),  # 2
        ("Heat", "directed_by", "Michael Mann"),  # 3
        ("Serpico", "starred_actors", "Al Pacino"),  # 4
        ("Scarface", "starred_actors", "Al Pacino"),  # 5
        ("Casino", "starred_actors", "Robert De Niro"),  # 6
        ("The Irishman", "starred_actors", "Al Pacino"),  # 7
    ],
    name="cast",
)


def test_the_listing_cap_leaves_out_the_rest_of_a_relation_the_chain_listed(small_model):
    capped = DogGuides(small_model, CAST, max_steps=6, topics=["Heat"], max_listed=2)
    every = list(range(8))
    # one actor written: nothing is left out yet
    assert capped.for_chain(every, chain=[0]).allowed_ids == [1, 2, 3, 4, 5, 6, 7]
    # two actors of Heat written (a list): the third actor leaves the trie; the next hop stays
    step = capped.for_chain(every, chain=[0, 1])
    assert step.allowed_ids == [3, 4, 5, 6, 7] and capped.listed_out(every, [0, 1]) == {2}
    # a hop to Al Pacino, then his films: a film (a hop) and a second (its sibling) make a list of two,
    # so Robert De Niro's films stay but Al Pacino's last film leaves
    assert capped.listed_out(every, [0, 4]) == set()
    assert capped.listed_out(every, [0, 4, 5]) == {7}  # The Irishman; Heat (0) is in the chain already
    assert capped.listed_out([0, 1, 4, 5, 6], [1, 6]) == set()  # one film of De Niro: not a list
    no_cap = DogGuides(small_model, CAST, max_steps=6, topics=["Heat"], max_listed=0)
    assert no_cap.for_chain(every, chain=[0, 1]).allowed_ids == [2, 3, 4, 5, 6, 7]


def test_a_chain_whose_only_next_triplets_are_listed_ones_must_conclude(small_model):
    capped = DogGuides(small_model, CAST, max_steps=6, topics=["Heat"], max_listed=2)
    step = capped.for_chain([0, 1, 2], chain=[0, 1])
    assert step.allowed_ids == [] and not step.may_open
