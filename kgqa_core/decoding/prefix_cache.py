"""Reuse the KV cache of the prompt part every question shares.

The Tab. 6 prompt starts with the instructions and three in-context examples
(about 1,200 tokens) before the question's own graph.  That part is the same
for every question asked with the same model and variant, so its keys and
values are computed once per process and forked for each question; only the
question's context is run through the model.  This is exact: a causal model's
cache for a prefix does not depend on what follows it.  The boundary is
checked on token ids (the full prompt's ids must start with the prefix ids),
so a tokenizer that merges across it just gets a shorter shared prefix.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from ..models.local_model import PromptState

_LOCK = threading.Lock()
_STATES: "OrderedDict[tuple[int, str, tuple[int, ...]], PromptState]" = OrderedDict()
MAX_ENTRIES = 6


def clear() -> None:
    with _LOCK:
        _STATES.clear()


def prefill_with_shared_prefix(model: Any, ids: list[int], shared_text: str) -> tuple[PromptState, int]:
    """The state after `ids`, reusing a cached state for the tokens of `shared_text`.

    Returns (state, number of prompt tokens taken from the cache).
    """
    prefix = model.encode(shared_text) if shared_text else []
    # A merge across the boundary changes the last prefix token: back off until ids agree.
    while prefix and ids[: len(prefix)] != prefix:
        prefix = prefix[:-1]
    if len(prefix) < 2 or len(prefix) >= len(ids):
        return model.prefill(ids), 0
    key = (id(model), getattr(model, "name", ""), tuple(prefix))
    with _LOCK:
        cached = _STATES.get(key)
        if cached is not None:
            _STATES.move_to_end(key)
    reused = 0
    with model.lock:
        if cached is None:
            cached = model.prefill(prefix)
            with _LOCK:
                _STATES[key] = cached
                while len(_STATES) > MAX_ENTRIES:
                    _STATES.popitem(last=False)
        else:
            reused = len(prefix)
        state = cached.fork()
        model.step(state, ids[len(prefix):])
    return state, reused
