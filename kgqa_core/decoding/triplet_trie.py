"""A token trie over the triplets of a query-centric subgraph (DoG §2.3, App. C).

The paper keys a dictionary by "the so-far generation at the current
reasoning step" and looks up the valid next tokens.  We do the same with
token ids: each node is a token prefix of at least one triplet, its children
are the tokens that keep the prefix on some triplet, and a node where a
triplet's token sequence ends lists that triplet's id(s).

Why token ids of the *whole* surface string, in context: BPE and
SentencePiece tokenise a word differently after a space, after ``<`` or at
the start of a text (``"Bahamas"`` vs ``" Bahamas"``).  The decoder commits
the opener (``" <"``, ``"<"``, ...) as the model produced it, so every
triplet is tokenised as ``opener + " h -> r -> t >"`` and the opener's own
ids are cut off; what remains is exactly the id sequence the model would
produce after that opener.  Distinct surface strings never share an id
sequence (tokenisation is invertible), so a leaf names one triplet unless two
triplets render to the same string (possible only when names contain
``" -> "``); such a leaf lists both ids.

Building is cheap: triplets are tokenised in one batch by the fast tokenizer,
and `TripletTokenCache` remembers each triplet's ids per opener, so when G_q
grows only the new triplets are tokenised.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import torch

CLOSE = " >"


def triplet_body(head: str, relation: str, tail: str) -> str:
    """The text after the opening ``<``: ``" head -> relation -> tail >"`` (Tab. 6 form)."""
    return f" {head} -> {relation} -> {tail}{CLOSE}"


def triplet_surface(head: str, relation: str, tail: str) -> str:
    """The full surface form ``"< head -> relation -> tail >"``."""
    return "<" + triplet_body(head, relation, tail)


def _encode_batch(tokenizer: Any, texts: list[str]) -> list[list[int]]:
    """Batch tokenisation without special tokens; the Rust backend when there is one."""
    backend = getattr(tokenizer, "_tokenizer", None)
    if backend is not None and hasattr(backend, "encode_batch"):
        encs = backend.encode_batch(texts, add_special_tokens=False)
        return [list(e.ids) for e in encs]
    out = tokenizer(texts, add_special_tokens=False)["input_ids"]
    return [list(x) for x in out]


class TripletTokenCache:
    """Token ids of each triplet's body after a given opener, computed once.

    Keyed by (opener text, head, relation, tail) so one cache can serve every
    G_q of a question and every beam.
    """

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self._ids: dict[tuple[str, str, str, str], tuple[int, ...]] = {}
        self._opener_ids: dict[str, list[int]] = {}
        self._lock = threading.Lock()
        self.boundary_mismatches = 0  # triplets whose joint tokenisation merged into the opener

    def opener_ids(self, opener: str) -> list[int]:
        if opener not in self._opener_ids:
            self._opener_ids[opener] = _encode_batch(self.tokenizer, [opener])[0] if opener else []
        return self._opener_ids[opener]

    def body_ids(self, triplets: Sequence[Any], opener: str) -> list[tuple[int, ...]]:
        """Ids of each triplet's body as decoded right after `opener`."""
        with self._lock:
            keys = [(opener, t.head, t.relation, t.tail) for t in triplets]
            missing = list(dict.fromkeys(k for k in keys if k not in self._ids))
            if missing:
                prefix = self.opener_ids(opener)
                n = len(prefix)
                texts = [opener + triplet_body(h, r, tl) for _, h, r, tl in missing]
                encoded = _encode_batch(self.tokenizer, texts)
                fallback: list[int] = []
                for i, (key, ids) in enumerate(zip(missing, encoded)):
                    if ids[:n] == prefix and len(ids) > n:
                        self._ids[key] = tuple(ids[n:])
                    else:
                        fallback.append(i)
                if fallback:
                    # The opener merged with the head's first characters: the
                    # committed opener ids cannot be followed by the joint
                    # tokenisation, so use the body's own tokenisation.
                    self.boundary_mismatches += len(fallback)
                    alone = _encode_batch(self.tokenizer, [texts[i][len(opener):] for i in fallback])
                    for i, ids in zip(fallback, alone):
                        self._ids[missing[i]] = tuple(ids)
            return [self._ids[k] for k in keys]


@dataclass
class TripletTrie:
    """Token prefixes of G_q's triplets -> allowed next tokens; ends -> triplet ids.

    Node 0 is the root (nothing decoded yet after the opener).  ``children[n]``
    maps a token id to the child node; ``ends[n]`` lists the triplet ids whose
    sequence ends at node n.  ``sequences`` maps each triplet id to its ids.
    """

    opener: str
    children: list[dict[int, int]] = field(default_factory=lambda: [{}])
    ends: list[tuple[int, ...]] = field(default_factory=lambda: [()])
    sequences: dict[int, tuple[int, ...]] = field(default_factory=dict)
    _allowed: dict[int, torch.Tensor] = field(default_factory=dict, repr=False)
    _masks: dict[tuple[int, int], torch.Tensor] = field(default_factory=dict, repr=False)
    _under: dict[int, tuple[int, ...]] = field(default_factory=dict, repr=False)

    ROOT = 0
    MASK_CACHE = 256  # additive masks kept (one vocabulary-sized float tensor each)

    # ------------------------------------------------------------ building
    @classmethod
    def build(
        cls,
        triplets: Sequence[Any],
        tokenizer: Any = None,
        opener: str = "<",
        cache: TripletTokenCache | None = None,
    ) -> "TripletTrie":
        """A trie over `triplets` (objects with id/head/relation/tail) after `opener`."""
        if cache is None:
            if tokenizer is None:
                raise ValueError("TripletTrie.build needs a tokenizer or a TripletTokenCache")
            cache = TripletTokenCache(tokenizer)
        trie = cls(opener=opener)
        for t, ids in zip(triplets, cache.body_ids(triplets, opener)):
            trie.insert(t.id, ids)
        return trie

    def insert(self, triplet_id: int, ids: Iterable[int]) -> None:
        ids = tuple(ids)
        if not ids:
            raise ValueError(f"triplet {triplet_id} tokenised to nothing")
        node = self.ROOT
        children = self.children
        for tok in ids:
            nxt = children[node].get(tok)
            if nxt is None:
                nxt = len(children)
                children[node][tok] = nxt
                children.append({})
                self.ends.append(())
            node = nxt
        if triplet_id not in self.ends[node]:
            self.ends[node] = self.ends[node] + (triplet_id,)
        self.sequences[triplet_id] = ids
        self._allowed.clear()
        self._masks.clear()
        self._under.clear()

    # ------------------------------------------------------------- reading
    def __len__(self) -> int:
        """Number of triplets in the trie."""
        return len(self.sequences)

    @property
    def n_nodes(self) -> int:
        return len(self.children)

    def advance(self, node: int, token_id: int) -> int | None:
        """The node after `token_id`, or None if the token leaves every triplet."""
        return self.children[node].get(token_id)

    def walk(self, ids: Iterable[int]) -> int | None:
        node: int | None = self.ROOT
        for tok in ids:
            node = self.children[node].get(tok)
            if node is None:
                return None
        return node

    def allowed(self, node: int) -> list[int]:
        """Token ids that keep the decoded prefix on some triplet."""
        return list(self.children[node].keys())

    def allowed_tensor(self, node: int) -> torch.Tensor:
        """`allowed` as a cached LongTensor, for gathering logits without a vocabulary loop."""
        t = self._allowed.get(node)
        if t is None:
            t = torch.tensor(list(self.children[node].keys()), dtype=torch.long)
            self._allowed[node] = t
        return t

    def is_end(self, node: int) -> bool:
        """A triplet is complete at `node` (it may still continue into a longer one)."""
        return bool(self.ends[node])

    def is_leaf(self, node: int) -> bool:
        return not self.children[node]

    def triplets_at(self, node: int) -> tuple[int, ...]:
        return self.ends[node]

    def triplets_under(self, node: int) -> tuple[int, ...]:
        """Every triplet id whose sequence passes through `node` (memoised)."""
        got = self._under.get(node)
        if got is not None:
            return got
        out: list[int] = []
        stack = [node]
        while stack:
            n = stack.pop()
            out.extend(self.ends[n])
            stack.extend(self.children[n].values())
        res = tuple(sorted(out))
        self._under[node] = res
        return res

    def mask(self, node: int, vocab_size: int) -> torch.Tensor:
        """Additive logits mask (0 allowed, -inf elsewhere), cached per node (Eq. 2).

        For `transformers`-style logits processors; the decoder itself
        gathers `allowed_tensor` instead, which is cheaper still.
        """
        key = (node, vocab_size)
        m = self._masks.get(key)
        if m is None:
            m = torch.full((vocab_size,), float("-inf"))
            idx = self.allowed_tensor(node)
            if idx.numel():
                m[idx] = 0.0
            if len(self._masks) >= self.MASK_CACHE:
                self._masks.pop(next(iter(self._masks)))
            self._masks[key] = m
        return m
