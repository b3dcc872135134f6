"""Prompt reuse that gives the numbers a fresh process gives (llama.cpp): whole batches into an emptied cache.

Why: an answer should not depend on what the process ran before it (issue
32).  llama.cpp's numbers for a prompt depend on two things besides its
tokens, both measured (docs/benchmarks.md, "The same answer whatever ran
before"): the batches it is read in (a batch of under 64 tokens is computed
another way, so a reused prefix that leaves a short batch where a fresh read
has a long one moves log-probabilities by up to 0.4 nats), and where its
cells sit in the one KV cache every sequence shares (another sequence's
cells before them move the numbers by 0.2-0.6 nats).  So a prompt is read
*exactly* when

* the cache is empty when it is read (every sequence of the run before it
  has been released), so its cells fill the cache from its first cell, as in
  a fresh process; and
* a reused prefix ends on a whole batch (a multiple of ``N_BATCH`` tokens)
  and was itself read that way, so the rest is read in the batches a fresh
  read of the whole prompt uses.

The keys and values of such a prefix are kept as bytes (in memory here, on
disk in `prompt_cache.PromptStateStore` under their own file extension, so
a prefix saved by a non-exact read is never taken for one) and restored into
the emptied cache: the cells and every number after them are those of a
fresh read, bit for bit.  What it costs: the part of a prompt past its last
whole batch is read again (at most ``N_BATCH - 1`` tokens more than reusing
every cached token), measured in docs/benchmarks.md.

A prompt may name its *fixed part* (a method's instructions and examples,
the same for every question): it is then read as batches of its own (every
read of that prompt splits there, cold or warm, so a fresh read and a reused
one still compute the same batches) and its state is kept whole, so the next
question reuses all of it, not only its whole batches (`batch_cuts`).

``KGQA_LLAMA_EXACT=0`` turns it off (reuse any cached prefix, as before).
"""

from __future__ import annotations

import ctypes
import os
from collections import OrderedDict
from typing import Sequence

N_BATCH = 256  # tokens per decode call of the llama.cpp backend (and the launcher's --n_batch): where reads cut
EXACT_EXT = "kvx"  # saved prefixes read exactly (an emptied cache, whole batches)


def exact_reuse_default() -> bool:
    """Whether the llama.cpp backend reuses prompts only where the numbers stay a fresh read's ($KGQA_LLAMA_EXACT)."""
    return os.environ.get("KGQA_LLAMA_EXACT", "1").strip().lower() not in ("0", "false", "no", "off")


def whole_batches(n: int, batch: int) -> int:
    """The longest prefix of `n` tokens that ends on a whole batch.

    >>> whole_batches(700, 256)
    512
    >>> whole_batches(255, 256)
    0
    """
    return (max(0, n) // batch) * batch


def batch_cuts(n: int, fixed: int, batch: int) -> list[int]:
    """Where a read of `n` tokens whose first `fixed` are its method's fixed part splits its batches.

    Every `batch` tokens from the start, and at `fixed` (when it is inside the
    prompt), then every `batch` tokens from there.  The cuts below a position
    depend only on the tokens and the fixed part before it, so two prompts of
    one method split their shared part alike.

    >>> batch_cuts(700, 0, 256)
    [256, 512]
    >>> batch_cuts(1300, 989, 256)
    [256, 512, 768, 989, 1245]
    >>> batch_cuts(300, 70, 256)
    [70]
    """
    cuts: list[int] = []
    start = 0
    if 0 < fixed < n:
        cuts = plain_cuts(fixed, batch) + [fixed]
        start = fixed
    return cuts + list(range(start + batch, n, batch))


def plain_cuts(n: int, batch: int) -> list[int]:
    """The cuts below `n` of a read that split only every `batch` tokens (how saved prefixes on disk were read)."""
    return list(range(batch, n, batch))


class ExactStates:
    """The keys and values of recently read prompts, each cut at a whole batch, as bytes (most recent first).

    Only prefixes read exactly are put here (`exact_reuse`), so restoring one
    into an emptied cache gives the cells a fresh read gives.  At most
    ``max_bytes`` are kept in all, the most recent first (the 1.5B model's
    keys and values take about 28 KB a token, so 256 MB hold some 9,000
    tokens: a few questions' prompts; a 7B model's, about a fifth of that).
    """

    def __init__(self, max_bytes: int = 256 << 20) -> None:
        self.max_bytes = max_bytes
        # prefix ids -> (keys and values, the batch cuts below the prefix's end it was read with)
        self._states: OrderedDict[tuple[int, ...], tuple[ctypes.Array, tuple[int, ...]]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._states)

    def clear(self) -> None:
        self._states.clear()

    def best(self, ids: Sequence[int], cuts: Sequence[int] = ()) -> tuple[int, ctypes.Array | None]:
        """The longest kept prefix of `ids` that leaves at least one token to read: (its length, its bytes).

        Only a prefix that ends on one of `cuts` (the batch cuts of a fresh
        read of `ids`) and was read with the same cuts before it is taken.
        """
        best: tuple[int, ctypes.Array | None] = (0, None)
        wanted = set(cuts)
        for key, (blob, below) in self._states.items():
            n = len(key)
            if best[0] < n < len(ids) and n in wanted and tuple(c for c in cuts if c < n) == below \
                    and tuple(ids[:n]) == key:
                best = (n, blob)
        if best[1] is not None:
            key = tuple(ids[: best[0]])
            self._states.move_to_end(key, last=False)
        return best

    def has(self, ids: Sequence[int]) -> bool:
        return tuple(ids) in self._states

    def put(self, ids: Sequence[int], blob: ctypes.Array, cuts: Sequence[int]) -> None:
        """Keep the state of the prefix `ids`, read with the batch `cuts` (those below its end count)."""
        key = tuple(ids)
        self._states[key] = (blob, tuple(c for c in cuts if c < len(key)))
        self._states.move_to_end(key, last=False)
        while sum(len(b) for b, _ in self._states.values()) > self.max_bytes and len(self._states) > 1:
            self._states.popitem(last=True)
