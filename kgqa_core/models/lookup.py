"""Prompt lookup decoding: guess the next tokens by copying them from the context.

Greedy decoding on a CPU waits on one forward pass per token, and a pass that
carries a few more tokens costs little more than one that carries one (the
weights are read once either way).  Text written over a graph repeats its
context -- entity names from the triplets, the examples' phrasing -- so the
tokens that followed the last few tokens where they occurred before are a
good guess of what comes next.  A decoder feeds the guess with the chosen
token in one pass, keeps the guessed tokens its own greedy choice agrees with,
and rewinds the state past the rest (`LanguageModel.rewind`).  Used by the
free-text decoder (`kgqa_core.decoding.free_text`) and the models' `generate`.
"""

from __future__ import annotations

import os

LOOKUP_DRAFT_TOKENS = 6  # guessed tokens per pass where a backend does not say (`lookup_draft`)
LOOKUP_NGRAMS = (3, 2)  # the last n tokens looked up in the context, longest first


def lookup_draft_tokens(model: object = None) -> int:
    """The guess length: $KGQA_LOOKUP_DRAFT when it is a number, else the backend's ``lookup_draft``.

    Whether guessing pays depends on what a pass over several tokens costs
    against a pass over one.  Measured on this project's 2-core CPU with the
    1.5B model, one thread (docs/benchmarks.md, "Prompt lookup decoding"): transformers
    takes 357 ms for one token and 625 ms for seven, so guesses are nearly
    free and it guesses 6; llama.cpp takes 139 ms for one and 501 ms for
    seven (its CPU kernels are compute-bound), so a guess costs almost half a
    token, more than the guesses save, and it does not guess (0); two
    guessed tokens were slower too (DoG p50 9.0 s against 8.3 s).
    """
    value = os.environ.get("KGQA_LOOKUP_DRAFT", "").strip()
    if value.isdigit():
        return int(value)
    return int(getattr(model, "lookup_draft", LOOKUP_DRAFT_TOKENS))


def lookup_draft(context: list[int], n: int) -> list[int]:
    """Up to `n` tokens that followed the last few tokens of `context` where they last occurred before.

    Parameters
    ----------
    context : the ids the model has read and chosen so far (prompt and text).
    n : how many tokens to guess at most.

    Returns
    -------
    The tokens after the most recent earlier occurrence of the last 3 (else 2)
    tokens of `context`, or [] when neither occurs earlier.

    Examples
    --------
    >>> lookup_draft([5, 6, 7, 8, 9, 1, 5, 6, 7], 3)
    [8, 9, 1]
    >>> lookup_draft([1, 2, 3], 4)
    []
    """
    if n <= 0:
        return []
    size = len(context)
    for k in LOOKUP_NGRAMS:
        if size <= k:
            continue
        tail = context[-k:]
        first = tail[0]
        for start in range(size - k - 1, -1, -1):
            if context[start] == first and context[start:start + k] == tail:
                return context[start + k:start + k + n]
    return []
