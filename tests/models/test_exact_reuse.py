"""The bookkeeping of exact prompt reuse (no model): whole batches, and the kept states' longest-prefix lookup."""

from __future__ import annotations

import ctypes

from kgqa_core.models.exact_reuse import ExactStates, exact_reuse_default, whole_batches


def _blob(n: int) -> ctypes.Array:
    return (ctypes.c_uint8 * n)()


def test_whole_batches():
    assert [whole_batches(n, 256) for n in (0, 1, 255, 256, 257, 511, 512, 989)] == [0, 0, 0, 256, 256, 256, 512, 768]


def test_the_longest_kept_prefix_that_leaves_a_token_to_read():
    states = ExactStates()
    ids = list(range(1000))
    states.put(ids[:256], _blob(10))
    states.put(ids[:768], _blob(30))
    states.put([7] * 512, _blob(20))  # another prompt
    n, blob = states.best(ids)
    assert n == 768 and len(blob) == 30
    assert states.best(ids[:768])[0] == 256  # the whole prompt kept leaves nothing to read: the shorter one
    assert states.best([9] * 300) == (0, None)


def test_the_oldest_states_go_first_when_over_the_byte_budget():
    states = ExactStates(max_bytes=50)
    states.put([1] * 256, _blob(20))
    states.put([2] * 256, _blob(20))
    states.best([1] * 300)  # used: now the most recent
    states.put([3] * 256, _blob(20))
    assert states.has([1] * 256) and states.has([3] * 256) and not states.has([2] * 256)
    assert len(states) == 2


def test_exact_reuse_is_on_unless_turned_off(monkeypatch):
    monkeypatch.delenv("KGQA_LLAMA_EXACT", raising=False)
    assert exact_reuse_default()
    for off in ("0", "false", "no", "off"):
        monkeypatch.setenv("KGQA_LLAMA_EXACT", off)
        assert not exact_reuse_default()
