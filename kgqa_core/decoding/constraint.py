"""Guides: which tokens may come next (one small class per constraint).

In the spirit of outlines' guides and transformers' LogitsProcessor, each
constraint is an object with a state that answers "which token ids may
follow?" and "what state after this token?".  The DoG decoder switches
between them:

* `OpeningDetector` (free text): which vocabulary tokens open a triplet,
  i.e. contain ``<`` (``"<"``, ``" <"``, ``"<<"``, ``'("<'`` ...).  Special
  tokens (``<|im_end|>``) never open one.  Also the mask that forbids opening
  once a chain has its maximum number of triplets.
* `TripletGuide` (inside a triplet): the token trie of G_q; state = trie node.

`dog_guide.DogGuide` joins the two into one DoG chain step's state machine.

Both are computed once (per tokenizer / per trie) and applied per step by
tensor gathers or cached additive masks, never by a Python loop over the
vocabulary.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from typing import Any, Sequence

import torch

from .triplet_trie import TripletTrie


class ConstraintError(RuntimeError):
    """The constraint allows no token (an empty G_q, or a broken trie)."""


class OpeningDetector:
    """Tokens whose text contains ``<``: the model opening a triplet in free text."""

    _cache: "weakref.WeakKeyDictionary[Any, OpeningDetector]" = weakref.WeakKeyDictionary()
    _lock = threading.Lock()

    def __init__(self, tokenizer: Any, vocab_size: int | None = None) -> None:
        self.tokenizer = tokenizer
        n = vocab_size or len(tokenizer)
        special = set(getattr(tokenizer, "all_special_ids", []) or [])
        special.update(getattr(tokenizer, "added_tokens_decoder", {}) or {})
        raw = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
        opens = torch.zeros(n, dtype=torch.bool)
        self._opener_text: dict[int, str] = {}
        for tid, piece in enumerate(raw):  # once per tokenizer, at setup
            if piece is None or "<" not in piece or tid in special:
                continue
            text = tokenizer.decode([tid])
            if "<" in text:
                opens[tid] = True
                self._opener_text[tid] = text[: text.index("<") + 1]
        # SentencePiece byte fallback spells "<" as "<0x3C>": that raw piece contains
        # "<" and decodes to "<", so the loop above already caught it.
        self.opens = opens
        self.ids = opens.nonzero().flatten()

    @classmethod
    def for_tokenizer(cls, tokenizer: Any, vocab_size: int | None = None) -> "OpeningDetector":
        with cls._lock:
            det = cls._cache.get(tokenizer)
            if det is None or (vocab_size and det.opens.numel() != vocab_size):
                det = cls(tokenizer, vocab_size)
                cls._cache[tokenizer] = det
            return det

    def is_opening(self, token_id: int) -> bool:
        return 0 <= token_id < self.opens.numel() and bool(self.opens[token_id])

    def opener_text(self, token_id: int) -> str:
        """The token's text up to and including its first ``<`` (what is committed)."""
        return self._opener_text[token_id]

    def is_pure(self, token_id: int) -> bool:
        """The token ends at its ``<`` (``" <"``): commit it as it is."""
        return self.tokenizer.decode([token_id]) == self._opener_text.get(token_id)


@dataclass(frozen=True)
class Write:
    """A forced run: the constraint allows exactly these tokens, one after another."""

    tokens: tuple[int, ...]


@dataclass(frozen=True)
class Generate:
    """A choice: one of ``allowed`` (None: any token but the ``forbidden`` ones); with ``may_end`` the triplet may also end here."""

    allowed: torch.Tensor | None
    may_end: bool = False
    forbidden: torch.Tensor | None = None


@dataclass(frozen=True)
class Done:
    """The triplet is complete and cannot continue."""


Instruction = Write | Generate | Done


@dataclass
class TripletGuide:
    """The trie constraint of one triplet: state = trie node (Eq. 2).

    `instruction` answers what may come next in outlines' shape: `Write`
    (the forced run a decoder feeds in one pass), `Generate` (a set) or
    `Done`.  A node that allows nothing raises `ConstraintError`; callers
    record it in the trace and stop the chain.
    """

    trie: TripletTrie

    @property
    def initial_state(self) -> int:
        return TripletTrie.ROOT

    def allowed(self, state: int) -> torch.Tensor:
        ids = self.trie.allowed_tensor(state)
        if ids.numel() == 0 and not self.trie.is_end(state):
            msg = (
                "the graph constraint allows no token: G_q is empty"
                if state == TripletTrie.ROOT
                else f"the graph constraint allows no token at trie node {state}"
            )
            raise ConstraintError(msg)
        return ids

    def instruction(self, state: int) -> Instruction:
        """What may follow trie node `state`: a forced run, a choice, or the end."""
        trie = self.trie
        if trie.is_leaf(state) and trie.is_end(state):
            return Done()
        allowed = self.allowed(state)
        if allowed.numel() > 1 or trie.is_end(state):
            return Generate(allowed, may_end=trie.is_end(state))
        run: list[int] = []
        node = state
        while True:
            ids = trie.allowed_tensor(node)
            if ids.numel() != 1 or trie.is_end(node):
                break
            tok = int(ids[0])
            run.append(tok)
            node = self.advance(node, tok)
        return Write(tuple(run))

    def advance(self, state: int, token_id: int) -> int:
        nxt = self.trie.advance(state, token_id)
        if nxt is None:
            raise ConstraintError(f"token {token_id} is not allowed at trie node {state}")
        return nxt

    def is_complete(self, state: int) -> bool:
        return self.trie.is_end(state)

    def can_continue(self, state: int) -> bool:
        return not self.trie.is_leaf(state)

    def constrain(self, state: int, logits: torch.Tensor) -> torch.Tensor:
        """Logits with every disallowed token at -inf (Eq. 2), via a cached mask."""
        return logits + self.trie.mask(state, logits.shape[-1]).to(logits.dtype)


class TrieLogitsProcessor:
    """`TripletGuide` as a ``fn(generated_ids, logits) -> logits`` processor.

    For `GenerationConfig(logits_processor=...)` in `generate`: constrains a generation
    that starts right after the opener to one triplet of the trie; once a
    triplet is complete and cannot continue, only EOS-like `end_ids` remain.
    """

    def __init__(self, guide: TripletGuide, end_ids: Sequence[int] = ()) -> None:
        self.guide = guide
        self.end_ids = list(end_ids)

    def __call__(self, generated_ids: Sequence[int], logits: torch.Tensor) -> torch.Tensor:
        state = self.guide.trie.walk(generated_ids)
        if state is None:
            raise ConstraintError("generated ids left the trie")
        if self.guide.trie.is_leaf(state) and self.guide.trie.is_end(state):
            m = torch.full_like(logits, float("-inf"))
            if self.end_ids:
                m[torch.tensor(self.end_ids)] = 0.0
            return logits + m
        self.guide.allowed(state)  # raises when nothing is allowed
        return self.guide.constrain(state, logits)
