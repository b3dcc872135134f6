"""Options scored as a token trie: a shared prefix read once, the same log-probs as one option at a time."""

from __future__ import annotations

import pytest

from kgqa_core.models.base import ModelBase
from kgqa_core.models.option_trie import OptionTrie, scored_alone

WALKS = [
    "Heat <-directed_by- Michael Mann",
    "Heat <-directed_by- Michael Mann -directed_by-> Collateral",
    "Heat <-directed_by- Michael Mann -directed_by-> Thief",
    "Heat -starred_actors-> Al Pacino",
    "Heat -starred_actors-> Robert De Niro",
    "Heat",
]


def test_the_trie_shares_prefixes_breadth_first():
    options = [[1, 2, 3, 4], [1, 2, 5], [1, 6, 7], [9]]
    t = OptionTrie.of(options)
    assert t.members == [0, 1, 2]  # [9] needs only the prompt's logits
    # nodes: the tokens fed (all but each option's last), shared ones once, every depth before the next
    assert [(tok, d) for tok, d, _ in t.nodes] == [(1, 0), (2, 1), (6, 1), (3, 2)]
    assert t.nodes[0][2] == [0, 1, 2] and t.nodes[1][2] == [0, 1]
    assert t.paths == {0: [0, 1, 3], 1: [0, 1], 2: [0, 2]}
    assert t.next_tokens(options) == [{2, 6}, {3, 5}, {7}, {4}]
    assert t.tokens_saved == 3 + 2 + 2 - 4
    assert OptionTrie.of([[1], []]).nodes == []


def test_llama_trie_scores_equal_one_option_at_a_time(llama_model):
    m = llama_model
    prompt = m.chat_prompt("Which walk from Heat answers: who directed Heat?")
    m.clear_prefix_cache()
    free_before = len(m._free) + len(m._pending)
    scores = m.score_continuations(prompt, [w + "\n" for w in WALKS])
    m.clear_prefix_cache()  # the prompt stays cached for the next call: let it go too
    m._drain()
    assert len(m._free) + len(m._pending) == free_before  # every option's sequence given back
    for s in scores:
        assert len(s.token_logprobs) == len(s.token_ids)
        ref = scored_alone(m, prompt, s.token_ids)
        assert s.token_logprobs[1:] == pytest.approx(ref, abs=1e-4), s.text


def test_llama_trie_over_several_decode_calls_keeps_every_option(llama_model):
    """More trie nodes than one decode call returns rows for (64): cut breadth first, each option still whole."""
    m = llama_model
    prompt = m.chat_prompt("Name a film.")
    options = [f"Film number {i} of the long list of films made in the year {1900 + i}" for i in range(12)]
    m.clear_prefix_cache()
    state = m.prefill(m.encode(prompt))
    try:
        ids = [m.continuation_ids(list(state.ids), prompt, o) for o in options]
        assert len(OptionTrie.of(ids).nodes) > 64
        trie = m._score_batch(state, ids)
        forks = ModelBase._score_batch(m, state, ids)
    finally:
        m.release(state)
    for a, b, o in zip(trie, forks, ids):
        assert len(a) == len(b) == len(o) - 1
        # llama.cpp's log-probs move a little with how a batch is cut (issue 32); the shared prefixes must not
        assert a == pytest.approx(b, abs=1.0)
    best = max(range(len(trie)), key=lambda i: sum(trie[i]))
    assert sum(trie[best]) >= max(sum(f) for f in forks) - 2.0
