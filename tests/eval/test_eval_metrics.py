"""Answer normalisation, strict Hits@1, set metrics, triplet F1 and bootstrap intervals."""

import numpy as np
import pytest

from kgqa_core.eval.metrics import (
    QuestionMetrics, bootstrap, format_table, normalize_answer, question_metrics, score_answers, summarize, triplet_prf,
)
from kgqa_core.trace.schema import Answer, ChainTriplet, FaithfulnessReport, Trace


@pytest.mark.parametrize("a,b", [
    ("The Matrix", "matrix"), ("  Heat!! ", "heat"), ("Spider-Man", "spider man"), ("AL PACINO", "al pacino"),
    ("Amélie", "amélie"), ("a  Beautiful   Mind", "beautiful mind"), ("Ｈｅａｔ", "heat"),
])
def test_normalisation(a, b):
    assert normalize_answer(a) == b


def test_articles_only_removed_as_words():
    assert normalize_answer("Theodore Anand") == "theodore anand"


def test_strict_hits1_vs_lenient():
    # READS App. C: gold "apple", prediction "pear, apple, banana" -> Hits@1 = 0 (lenient would say 1)
    s = score_answers(["pear", "apple", "banana"], ["apple"])
    assert s.hits1 == 0.0 and s.hits_any == 1.0
    assert s.precision == pytest.approx(1 / 3) and s.recall == 1.0
    assert s.f1 == pytest.approx(0.5) and s.exact_match == 0.0


def test_empty_prediction_scores_zero_and_empty_gold_is_rejected():
    s = score_answers([], ["x"])
    assert (s.hits1, s.precision, s.recall, s.f1, s.exact_match, s.n_predicted) == (0, 0, 0, 0, 0, 0)
    assert score_answers(["", "  "], ["x"]).n_predicted == 0
    with pytest.raises(ValueError):
        score_answers(["x"], [])


def test_exact_match_ignores_order_case_and_duplicates():
    s = score_answers(["the heat", "Collateral", "Heat"], ["Collateral", "Heat"])
    assert s.exact_match == 1.0 and s.hits1 == 1.0 and s.n_predicted == 2 and s.f1 == 1.0


def test_alternative_forms_of_one_answer_count_once():
    # the model wrote "Mann" but linked it to the entity "Michael Mann"
    s = score_answers([["Mann", "Michael Mann"]], ["Michael Mann"])
    assert s.hits1 == 1.0 and s.precision == 1.0


def test_triplet_prf():
    gold = [("Heat", "directed_by", "Michael Mann"), ("Heat", "release_year", "1995")]
    assert triplet_prf([("heat", "directed_by", "michael mann")], gold) == (1.0, 0.5, pytest.approx(2 / 3))
    assert triplet_prf([], gold) == (0.0, 0.0, 0.0)


def test_question_metrics_from_trace():
    t = Trace(method="m", question="q", answers=[Answer("Heat", "Heat")], model_calls=3, tokens_in=30, tokens_out=6,
              chains=[[ChainTriplet("Michael Mann", "directed", "Heat")]],
              faithfulness=FaithfulnessReport(checked=1, ill_triplets=1))
    m = question_metrics(t, ["Heat"], gold_chain=[("Heat", "directed_by", "Michael Mann")], wall_seconds=2.0)
    assert m.hits1 == 1.0 and m.triplet_f1 == 0.0 and m.ill_triplets == 1 and m.cited_triplets == 1
    assert m.seconds == 2.0 and m.model_calls == 3
    assert question_metrics(t, ["Heat"]).triplet_f1 is None  # no gold chain -> no triplet metric
    err = question_metrics(Trace(method="m", question="q", error="boom"), ["Heat"])
    assert err.error and err.hits1 == 0.0


def test_bootstrap_ci_contains_the_mean_and_narrows_with_n():
    rng = np.random.default_rng(1)
    small = rng.integers(0, 2, 20).astype(float)
    large = rng.integers(0, 2, 2000).astype(float)
    stat = lambda v: float(v["x"].mean())  # noqa: E731
    e_small = bootstrap({"x": small}, stat, seed=0)
    e_large = bootstrap({"x": large}, stat, seed=0)
    for e, x in ((e_small, small), (e_large, large)):
        assert e.low <= x.mean() <= e.high
    assert (e_large.high - e_large.low) < (e_small.high - e_small.low)
    assert bootstrap({"x": small}, stat, seed=0) == e_small  # fixed seed -> same interval
    assert bootstrap({"x": np.array([])}, stat) is None
    one = bootstrap({"x": np.array([1.0])}, stat)
    assert one.low == one.high == 1.0


def test_summarize_macro_f1_ill_rate_and_percentiles():
    ms = [
        QuestionMetrics(hits1=1, precision=1.0, recall=1.0, f1=1.0, cited_triplets=2, ill_triplets=0, seconds=1,
                        model_calls=2, tokens_in=200, tokens_out=20, error_class="C1"),
        QuestionMetrics(hits1=0, precision=0.0, recall=0.0, f1=0.0, cited_triplets=2, ill_triplets=2, seconds=3,
                        model_calls=2, tokens_in=100, tokens_out=20, error_class="E1", error=True),
    ]
    g = summarize("dog", ms, n_boot=200)
    assert g.n == 2 and g.errors == 1 and g.hits1.value == 0.5
    assert g.f1.value == pytest.approx(0.5)  # harmonic mean of macro P=0.5 and R=0.5
    assert g.ill_triplet_rate.value == pytest.approx(0.5) and g.ill_triplets == 2
    assert g.tokens_in_per_request == pytest.approx(75.0)
    assert g.seconds_p50 == pytest.approx(2.0) and g.seconds_p95 == pytest.approx(2.9)
    assert g.error_classes == {"C1": 1, "C2": 0, "E1": 1, "E2": 0, "E3": 0}
    assert g.triplet_f1 is None
    table = format_table([g])
    assert "dog" in table and "0.500 [" in table
