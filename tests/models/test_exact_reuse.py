"""The bookkeeping of exact prompt reuse (no model): batch cuts, and the kept states' longest-prefix lookup."""

from __future__ import annotations

import ctypes

from kgqa_core.models.exact_reuse import ExactStates, batch_cuts, exact_reuse_default, plain_cuts, whole_batches


def _blob(n: int) -> ctypes.Array:
    return (ctypes.c_uint8 * n)()


def test_whole_batches():
    assert [whole_batches(n, 256) for n in (0, 1, 255, 256, 257, 511, 512, 989)] == [0, 0, 0, 256, 256, 256, 512, 768]


def test_batch_cuts_split_at_the_fixed_part_and_every_batch_around_it():
    assert batch_cuts(700, 0, 256) == plain_cuts(700, 256) == [256, 512]
    assert batch_cuts(1300, 989, 256) == [256, 512, 768, 989, 1245]
    assert batch_cuts(300, 70, 256) == [70]
    assert batch_cuts(512, 256, 256) == [256]  # a fixed part on a whole batch: one cut there
    assert batch_cuts(300, 300, 256) == batch_cuts(300, 0, 256) == [256]  # the whole prompt: no fixed part inside
    # two prompts of one method cut their shared part alike, whatever follows it
    a, b = batch_cuts(1100, 989, 256), batch_cuts(1500, 989, 256)
    assert [c for c in a if c <= 989] == [c for c in b if c <= 989]


def test_the_longest_kept_prefix_that_leaves_a_token_to_read():
    states = ExactStates()
    ids = list(range(1000))
    cuts = batch_cuts(1000, 0, 256)
    states.put(ids[:256], _blob(10), cuts)
    states.put(ids[:768], _blob(30), cuts)
    states.put([7] * 512, _blob(20), cuts)  # another prompt
    n, blob = states.best(ids, cuts)
    assert n == 768 and len(blob) == 30
    assert states.best(ids[:768], cuts)[0] == 256  # the whole prompt kept leaves nothing to read: the shorter one
    assert states.best([9] * 300, cuts) == (0, None)


def test_a_kept_prefix_is_taken_only_where_a_fresh_read_cuts_the_same_way():
    states = ExactStates()
    ids = list(range(1300))
    fixed_cuts = batch_cuts(1300, 989, 256)
    states.put(ids[:989], _blob(10), fixed_cuts)  # a method's fixed part, kept whole
    assert states.best(ids, fixed_cuts)[0] == 989
    assert states.best(ids, batch_cuts(1300, 0, 256)) == (0, None)  # read without the fixed part: cut at 768, 1024
    assert states.best(ids, batch_cuts(1300, 900, 256)) == (0, None)  # another fixed part: 989 is no cut of it
    states.put(ids[:1245], _blob(10), fixed_cuts)  # a re-ask's last cut, read after the fixed part
    assert states.best(ids, fixed_cuts)[0] == 1245
    assert states.best(ids, batch_cuts(1300, 0, 256)) == (0, None)
    states.put(ids[:768], _blob(10), plain_cuts(1300, 256))  # whole batches only: valid for both
    assert states.best(ids, batch_cuts(1300, 0, 256))[0] == 768


def test_the_oldest_states_go_first_when_over_the_byte_budget():
    states = ExactStates(max_bytes=50)
    cuts = [256]
    states.put([1] * 256, _blob(20), cuts)
    states.put([2] * 256, _blob(20), cuts)
    states.best([1] * 300, cuts)  # used: now the most recent
    states.put([3] * 256, _blob(20), cuts)
    assert states.has([1] * 256) and states.has([3] * 256) and not states.has([2] * 256)
    assert len(states) == 2


def test_exact_reuse_is_on_unless_turned_off(monkeypatch):
    monkeypatch.delenv("KGQA_LLAMA_EXACT", raising=False)
    assert exact_reuse_default()
    for off in ("0", "false", "no", "off"):
        monkeypatch.setenv("KGQA_LLAMA_EXACT", off)
        assert not exact_reuse_default()
