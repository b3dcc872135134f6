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

LOOKUP_DRAFT_TOKENS = 6  # guessed tokens per pass (`lookup_draft`); $KGQA_LOOKUP_DRAFT overrides, 0 is off
LOOKUP_NGRAMS = (3, 2)  # the last n tokens looked up in the context, longest first


def lookup_draft_tokens() -> int:
    """The guess length: $KGQA_LOOKUP_DRAFT when it is a number, else `LOOKUP_DRAFT_TOKENS`."""
    value = os.environ.get("KGQA_LOOKUP_DRAFT", "").strip()
    return int(value) if value.isdigit() else LOOKUP_DRAFT_TOKENS


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
