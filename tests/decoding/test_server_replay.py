"""Replaying the in-process stop rules over a server's reply: the same stop, in linear time.

The server path checks the stop rules (answer line, runaway example, loop)
after every token of the returned text, as the in-process decoder does.
Issue 31: ``decode(body[:k])`` for every k made a long reply quadratic.
`prefix_texts` gives every prefix's text with a bounded decode per token;
these tests hold it to the exact decode and count the tokens it decodes.
"""

from __future__ import annotations

import pytest

from kgqa_core.decoding.free_text import default_stop, is_looping
from kgqa_core.decoding.server_steps import ANCHOR_EVERY, PREFIX_CONTEXT, RemoteDecoding, prefix_texts

MIXED = ("1. The film Heat was directed by Michael Mann, été 日本語 🙂 — "
         "< Heat -> directed_by -> Michael Mann > This tells us\n\tthat  spaces   stay. ")


class CountingTokenizer:
    """The packaged 135M model's tokenizer, counting how many tokens are decoded in all."""

    def __init__(self) -> None:
        from kgqa_core.models.manager import ModelLoadError
        from kgqa_core.models.server_model import local_tokenizer

        try:
            self.tok, _ = local_tokenizer("smollm2-135m")
        except (ModelLoadError, OSError) as exc:
            pytest.skip(f"the packaged 135M tokenizer is not installed: {exc}")
        self.decoded = 0

    def encode(self, text: str) -> list[int]:
        return list(self.tok.encode(text, add_special_tokens=False))

    def decode(self, ids) -> str:
        self.decoded += len(ids)
        return self.tok.decode(list(ids), skip_special_tokens=False, clean_up_tokenization_spaces=False)


@pytest.fixture(scope="module")
def tok():
    return CountingTokenizer()


def test_every_prefix_text_is_the_exact_decode(tok):
    ids = tok.encode(MIXED * 5)
    texts = list(prefix_texts(tok, ids))
    assert [k for k, _ in texts] == list(range(1, len(ids) + 1))
    assert all(text == tok.decode(ids[:k]) for k, text in texts)


def test_prefix_texts_decode_a_bounded_number_of_tokens_per_token(tok):
    ids = tok.encode(MIXED * 40)  # about 2,000 tokens
    tok.decoded = 0
    for _ in prefix_texts(tok, ids):
        pass
    per_token = tok.decoded / len(ids)
    assert per_token <= 2 * (ANCHOR_EVERY + PREFIX_CONTEXT), per_token  # decode(ids[:k]) for each k: len(ids) / 2


class _Model(CountingTokenizer):
    def __init__(self, tok: CountingTokenizer) -> None:
        self.tok, self.decoded = tok.tok, 0


@pytest.mark.parametrize("text", [
    MIXED * 3 + "Therefore, the answer is Michael Mann.\nQuestion: who else?" + MIXED,
    "1. Heat is a film by Michael Mann. 2. Heat is a film by Michael Mann. 3. Heat is a film by Michael Mann. "
    "4. more text",
    MIXED * 6 + "Therefore",
])
def test_the_first_stop_is_where_the_exact_replay_stops(tok, text):
    model = _Model(tok)
    ids = model.encode(text)
    exact = None
    for k in range(1, len(ids) + 1):
        part = model.decode(ids[:k])
        cut = default_stop(part)
        if cut is not None or is_looping(part):
            exact = (k, part, cut)
            break
    assert exact is not None  # each text stops: an answer line, a sentence a third time, a unit a third time
    assert RemoteDecoding(model)._first_rule(ids, default_stop, True) == exact
