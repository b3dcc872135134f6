"""The answer line's first item at a sure reading's depth, decoded under the trie of the entities the path reaches.

Real 135M model on both in-process backends (the server's walk is checked against in-process llama.cpp in
tests/models/test_server_backend.py).
"""

from __future__ import annotations

import pytest

from kgqa_core.decoding.decoders import answer_among, force_conclusion
from kgqa_core.decoding.prompt import parse_answers

PROMPT = ("Context: [ Heat -> starred_actors -> Al Pacino | Heat -> starred_actors -> Robert De Niro | "
          "Collateral -> starred_actors -> Tom Cruise ]\nQuestion: who starred in Heat?\nAnswer: "
          "< Heat -> starred_actors -> Al Pacino >")


def test_the_item_is_one_of_the_names_and_ends_with_it(backend_model):
    m = backend_model
    names = ["Al Pacino", "Robert De Niro", "Tom Cruise"]
    state = m.prefill(m.encode(PROMPT))
    forced_before, out_before = m.counter.tokens_forced, m.counter.tokens_out
    n_before = len(state.ids) + len(m.encode(" Therefore, the answer is"))
    free = force_conclusion(m, state, first_only=True, reached=names)
    assert free.text.startswith(" Therefore, the answer is * ")
    (answer,) = parse_answers(free.text)
    assert answer in names and free.text.endswith(answer), free.text  # no period, no line end, no second item
    assert m.decode(free.ids) == f" * {answer}"
    read = len(free.ids) - free.unread  # nothing follows the item: the trie's run after the last choice is not read
    assert len(free.positions) == read and max(len(p.allowed_logprobs) for p in free.positions) > 1
    # the state holds the item up to its last token read (that one and the rest are not fed: nothing comes after)
    assert list(state.ids[n_before:]) == free.ids[:read - 1]
    written = m.counter.tokens_out - out_before
    assert written == read
    assert 0 <= m.counter.tokens_forced - forced_before < read


def test_the_names_tail_after_the_last_choice_is_not_read(backend_model):
    """Once one name is left the rest of it is the graph's text: no pass of the model is run for it, and the
    item is the same as when every token is read (the reference: `search_triplets` reading them all)."""
    from kgqa_core.decoding.beam import TripletBeamSearch
    from kgqa_core.decoding.constraint import TripletGuide
    from kgqa_core.decoding.decoders import ANSWER_ITEM
    from kgqa_core.decoding.triplet_trie import TripletTrie

    m = backend_model
    names = ["Al Pacino", "Robert De Niro", "Tom Cruise"]
    prompt = m.encode(PROMPT + " Therefore, the answer is")
    trie = TripletTrie(opener=ANSWER_ITEM.format(""))
    for i, name in enumerate(names):
        trie.insert(i, m.encode(ANSWER_ITEM.format(name)))
    full_state = m.prefill(prompt)
    passes = m.counter.forward_passes
    (full,) = TripletBeamSearch(m, 1).search(full_state, TripletGuide(trie)).hypotheses
    full_passes = m.counter.forward_passes - passes
    state = m.prefill(prompt)
    passes, out_before = m.counter.forward_passes, m.counter.tokens_out
    free = answer_among(m, state, names)
    assert free.ids == full.token_ids and free.text == ANSWER_ITEM.format(names[full.triplet_id])
    assert free.unread > 0 and len(full.token_ids) - free.unread == len(free.positions)
    for got, want in zip(free.positions, full.positions[:len(free.positions)], strict=True):
        # the same tokens; in-process llama.cpp reads a prompt again from its cache in other batch splits (issue 32)
        assert got.token == want.token and got.logprob == pytest.approx(want.logprob, abs=0.5)
    assert m.counter.forward_passes - passes == full_passes - 1  # the tail's pass is the one saved
    assert m.counter.tokens_out - out_before == len(free.positions)


def test_one_name_is_written_by_the_trie_alone(backend_model):
    m = backend_model
    state = m.prefill(m.encode(PROMPT + " Therefore, the answer is"))
    forced_before = m.counter.tokens_forced
    free = answer_among(m, state, ["Robert De Niro", "Robert De Niro", " "])  # repeats and blanks are dropped
    assert free.text == " * Robert De Niro" and free.stop == "stop"
    assert free.unread == len(free.ids) - 1 and len(free.positions) == 1  # only the first token's row is read
    assert m.counter.tokens_forced - forced_before == 1  # no choice was the model's; the rest is not counted


def test_without_names_the_line_is_free_as_before(backend_model):
    m = backend_model
    state = m.prefill(m.encode(PROMPT))
    free = force_conclusion(m, state, first_only=True, reached=())
    assert free.text.startswith(" Therefore, the answer is") and parse_answers(free.text)


def _copies_a_triplet(model, state, *args, **kwargs):
    """What the 135M wrote on llama.cpp after 'the answer is *' at the end of a long chain: an item that begins a
    triplet again (' Heat ->'), which the line's rule cuts, so the line names nothing; as `free_text` leaves it,
    the state holds every token but the stop's last."""
    from kgqa_core.decoding.free_text import FreeText

    ids = model.encode(" Heat ->")
    model.step(state, ids[:-1])
    model.counter.tokens_out += len(ids)  # as `free_text` counts them
    return FreeText("", ids, "stop")


def test_a_line_that_names_nothing_gets_its_item_among_the_chain_entities(backend_model, monkeypatch):
    import kgqa_core.decoding.decoders as decoders

    m = backend_model
    names = ["Al Pacino", "Robert De Niro"]
    # the reference: the phrase written, the item chosen at once under the names' trie
    ref_state = m.prefill(m.encode(PROMPT))
    m.step(ref_state, m.encode(decoders.conclusion_written(item_marker=True)))
    ref = answer_among(m, ref_state, names, item=" {}")
    monkeypatch.setattr(decoders, "free_text", _copies_a_triplet)
    state = m.prefill(m.encode(PROMPT))
    out_before = m.counter.tokens_out
    free = force_conclusion(m, state, item_marker=True, fallback=names)
    assert free.chosen_among and free.text == " Therefore, the answer is *" + ref.text, free.text
    (answer,) = parse_answers(free.text)
    assert answer in names
    # what the model wrote left the state; the item stands where it began, read as in the reference
    assert list(state.ids) == list(ref_state.ids) and free.ids == ref.ids
    for got, want in zip(free.positions, ref.positions, strict=True):  # the last id read again: the same numbers
        assert got.allowed_logprobs == pytest.approx(want.allowed_logprobs, abs=1e-3)
    assert free.unread == ref.unread
    assert m.counter.tokens_out - out_before == len(m.encode(" Heat ->")) + len(free.ids) - free.unread  # the dropped count


def test_a_line_that_names_nothing_stays_empty_without_names(backend_model, monkeypatch):
    import kgqa_core.decoding.decoders as decoders

    monkeypatch.setattr(decoders, "free_text", _copies_a_triplet)
    m = backend_model
    free = force_conclusion(m, m.prefill(m.encode(PROMPT)), item_marker=True)
    assert not free.chosen_among and not parse_answers(free.text)
