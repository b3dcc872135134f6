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
    free = force_conclusion(m, state, first_only=True, reached=names)
    assert free.text.startswith(" Therefore, the answer is * ")
    (answer,) = parse_answers(free.text)
    assert answer in names and free.text.endswith(answer), free.text  # no period, no line end, no second item
    assert m.decode(free.ids) == f" * {answer}"
    assert len(free.positions) == len(free.ids) and max(len(p.allowed_logprobs) for p in free.positions) > 1
    assert list(state.ids[-len(free.ids):]) == free.ids  # the state holds the item: the chain may be read on
    written = m.counter.tokens_out - out_before
    assert written == len(free.ids) and 0 < m.counter.tokens_forced - forced_before < written  # names part after " *"


def test_one_name_is_written_by_the_trie_alone(backend_model):
    m = backend_model
    state = m.prefill(m.encode(PROMPT + " Therefore, the answer is"))
    forced_before = m.counter.tokens_forced
    free = answer_among(m, state, ["Robert De Niro", "Robert De Niro", " "])  # repeats and blanks are dropped
    assert free.text == " * Robert De Niro" and free.stop == "stop"
    assert m.counter.tokens_forced - forced_before == len(free.ids)  # no choice was the model's


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
    assert m.counter.tokens_out - out_before == len(m.encode(" Heat ->")) + len(free.ids)  # the dropped ones count


def test_a_line_that_names_nothing_stays_empty_without_names(backend_model, monkeypatch):
    import kgqa_core.decoding.decoders as decoders

    monkeypatch.setattr(decoders, "free_text", _copies_a_triplet)
    m = backend_model
    free = force_conclusion(m, m.prefill(m.encode(PROMPT)), item_marker=True)
    assert not free.chosen_among and not parse_answers(free.text)
