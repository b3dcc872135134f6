"""The options scored after one prompt, as a token trie: a shared prefix is one node.

Scoring an option needs the logits after each of its tokens but the last.  Options
written after one prompt mostly begin alike (walks from one entity, answers of one
list), so reading them as a trie reads each shared token once.  The nodes are listed
breadth first: a node comes after its parent, and every node of one depth before
any node of the next, so any cut of the list into decode calls feeds each option's
tokens in order and keeps the options that share a node equally long (llama.cpp
requires both of a token that belongs to several sequences).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class OptionTrie:
    """Nodes (token, depth, members) breadth first; `paths[i]`: option i's node per token but its last.

    Members are the options of more than one token (an option of one token needs
    only the prompt's own logits), numbered 0.. in `members` (their option indices).

    Examples
    --------
    >>> t = OptionTrie.of([[5, 6, 7], [5, 6, 8, 9], [4]])
    >>> [(tok, depth) for tok, depth, _ in t.nodes]
    [(5, 0), (6, 1), (8, 2)]
    >>> t.paths
    {0: [0, 1], 1: [0, 1, 2]}
    """

    nodes: list[tuple[int, int, list[int]]] = field(default_factory=list)
    members: list[int] = field(default_factory=list)
    paths: dict[int, list[int]] = field(default_factory=dict)

    @classmethod
    def of(cls, options: list[list[int]]) -> "OptionTrie":
        trie = cls()
        trie.members = [i for i, ids in enumerate(options) if len(ids) > 1]
        trie.paths = {i: [] for i in trie.members}
        index: dict[tuple[int, int], int] = {}  # (parent node or -1, token) -> node
        depth = max((len(options[i]) - 1 for i in trie.members), default=0)
        for d in range(depth):
            for m, i in enumerate(trie.members):
                body = options[i][:-1]
                if d >= len(body):
                    continue
                path = trie.paths[i]
                key = (path[-1] if path else -1, body[d])
                node = index.get(key)
                if node is None:
                    node = index[key] = len(trie.nodes)
                    trie.nodes.append((body[d], d, []))
                trie.nodes[node][2].append(m)
                path.append(node)
        return trie

    def next_tokens(self, options: list[list[int]]) -> list[set[int]]:
        """Per node, the tokens that follow it in some option (whose log-probs are wanted)."""
        wanted: list[set[int]] = [set() for _ in self.nodes]
        for i, path in self.paths.items():
            for j, node in enumerate(path):
                wanted[node].add(options[i][j + 1])
        return wanted

    @property
    def tokens_saved(self) -> int:
        """Tokens one fork per option would have read that the trie reads once."""
        return sum(len(p) for p in self.paths.values()) - len(self.nodes)


def scored_alone(model: Any, prompt: str, ids: list[int]) -> list[float]:
    """Log-probs of tokens 2.. of one option read after `prompt` with nothing else in the model's cache.

    The reference the batched ways of scoring are measured against: llama.cpp's
    log-probs move with how a batch is cut and where cells lie in the cache.
    """
    model.clear_prefix_cache()
    state = model.prefill(model.encode(prompt))
    try:
        rows = model.extend(state, ids[:-1])
        return [float(rows[j - 1, ids[j]]) for j in range(1, len(ids))]
    finally:
        model.release(state)
