"""The answer line's first item at a sure reading's depth, decoded under the trie of the entities the path reaches.

Real 135M model on both in-process backends (the server's walk is checked against in-process llama.cpp in
tests/models/test_server_backend.py).
"""

from __future__ import annotations

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
