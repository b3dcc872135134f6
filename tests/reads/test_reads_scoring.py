"""Option scoring: length bias (trie normalisation) and position bias (order-symmetric permutations)."""

import math

import pytest

from kgqa_core.reads.scoring import (
    ModelChooser,
    PromptParts,
    combine_permutations,
    permutation_orders,
    softmax,
    trie_logprobs,
)


def test_trie_scores_form_a_distribution_and_ignore_forced_tokens():
    # options: [5, 1], [5, 2, 9, 9, 9], [7]; prefix () branches 5|7, prefix (5,) branches 1|2
    ids = [[5, 1], [5, 2, 9, 9, 9], [7]]
    lps = [[-0.5, -2.0], [-0.5, -0.3, -0.01, -0.01, -0.01], [-1.2]]
    scores = trie_logprobs(ids, lps)
    assert math.isclose(sum(math.exp(s) for s in scores), 1.0, rel_tol=1e-9)
    # the forced tail (9, 9, 9) costs nothing: changing its log-probs changes nothing
    lps2 = [[-0.5, -2.0], [-0.5, -0.3, -4.0, -4.0, -4.0], [-1.2]]
    assert trie_logprobs(ids, lps2) == scores


def test_long_option_is_not_favoured_for_its_length():
    """The per-token mean rewards a long option whose tail is copied; the trie score does not."""
    short = ([11], [-1.0])  # the model's first choice
    long = ([12, 20, 21, 22, 23, 24, 25, 26], [-2.0] + [-0.01] * 7)  # worse first token, easy copy
    ids, lps = [short[0], long[0]], [short[1], long[1]]
    means = [sum(x) / len(x) for x in lps]
    assert means[1] > means[0]  # the bias the mean would show
    trie = trie_logprobs(ids, lps)
    assert trie[0] > trie[1]
    assert math.isclose(trie[0] - trie[1], 1.0)  # only the branching token counts


def test_permutation_orders_are_closed_under_reversal():
    assert permutation_orders(4, 1) == [[0, 1, 2, 3]]
    assert permutation_orders(4, 2) == [[0, 1, 2, 3], [3, 2, 1, 0]]
    four = permutation_orders(4, 4)
    assert len(four) == 4 and [2, 3, 0, 1] in four and [1, 0, 3, 2] in four
    assert permutation_orders(1, 4) == [[0]]
    assert combine_permutations([[0.0, -2.0], [-1.0, -1.0]]) == [-0.5, -1.5]
    assert math.isclose(sum(softmax([-0.5, -1.5, float("-inf")])), 1.0)


QUESTION = PromptParts(
    head="Question: what is the capital of France?\nWhich option answers the question?\n\nOptions:\n",
    tail="Reply with one option, copied exactly.",
)


def test_reversing_the_options_does_not_change_the_choice(small_model):
    chooser = ModelChooser(small_model, permutations=2)
    options = ["Paris", "London", "Berlin", "None"]
    a = chooser.choose("test", QUESTION, options)
    b = chooser.choose("test", QUESTION, options[::-1])
    assert a.chosen.text == b.chosen.text
    pa = {o.text: o.prob for o in a.options}
    pb = {o.text: o.prob for o in b.options}
    for text in options:
        assert abs(pa[text] - pb[text]) < 1e-3
    assert math.isclose(sum(pa.values()), 1.0, rel_tol=1e-6)
    # cost: one shared prefill, one step per order for its list, one batched option forward per order
    assert a.forward_passes == 5 and len(a.calls) == 2
    assert all(c.prompt_tokens > 0 and "1. " in c.prompt for c in a.calls)


def test_single_order_costs_two_forward_passes(small_model):
    d = ModelChooser(small_model, permutations=1).choose("test", QUESTION, ["Paris", "London"])
    assert d.forward_passes == 2 and len(d.calls) == 1


def test_padding_an_option_does_not_change_its_probability(small_model):
    """With the prompt fixed, a long tail after the deciding tokens leaves the trie score unchanged."""
    prompt = small_model.chat_prompt("What is the capital of France? Answer with a city.")
    end = small_model.tokenizer.eos_token
    plain = small_model.score_continuations(prompt, ["Paris" + end, "London" + end])
    padded = small_model.score_continuations(
        prompt, ["Paris" + end, "London, the large and very famous capital city of England" + end])
    p_plain = trie_logprobs([s.token_ids for s in plain], [s.token_logprobs for s in plain])
    p_padded = trie_logprobs([s.token_ids for s in padded], [s.token_logprobs for s in padded])
    assert p_plain == pytest.approx(p_padded, abs=1e-3)
    assert plain[1].mean != pytest.approx(padded[1].mean, abs=1e-3)  # the raw mean does move


def test_bad_settings_are_rejected(small_model):
    with pytest.raises(ValueError, match="length_norm"):
        ModelChooser(small_model, length_norm="sum")
    with pytest.raises(ValueError, match="duplicate"):
        ModelChooser(small_model).choose("test", QUESTION, ["a", "a"])
