"""The two looks together (reader option ``blend``, off by default): the listed look's choice with the quick look's
odds mixed in, over the listed walks only."""

from __future__ import annotations

import math

import pytest

from kgqa_core.reading import readers
from kgqa_core.reading.readers import blended_choice, make_reader
from kgqa_core.reading.reading import PlanHop, RelationPlan
from kgqa_core.reads.scoring import decision_from_scores


def _plan(*relations: str, example: str = "") -> RelationPlan:
    return RelationPlan("Ann", tuple(PlanHop(r) for r in relations), walk=("Ann", *[f"{r}-end" for r in relations]),
                        example=example)


def _decision(texts, probs):
    return decision_from_scores(texts, [math.log(p) for p in probs])


def test_off_by_default_and_a_checked_reader_option():
    assert readers.BLEND == 0.0
    assert make_reader("paths:blend=0.5", model=object()).blend == 0.5
    with pytest.raises(ValueError, match="blend"):
        make_reader("paths:blended=0.5", model=object())


@pytest.mark.parametrize("weight, expected", [(0.0, [0.6, 0.4]), (1.0, [0.5, 0.5]), (0.5, [0.5, 0.5])])
def test_each_judge_counts_its_weight_and_the_result_is_renormalised_over_the_listed_walks(weight, expected):
    """The quick look scored a third walk the list left out: its mass does not count, the two listed walks share
    what is left (0.2 and 0.2, so the quick look alone is even between them)."""
    listed = _decision(["a", "b"], [0.6, 0.4])
    quick = _decision(["a", "b", "c"], [0.2, 0.2, 0.6])
    if weight == 0.5:  # sqrt(0.2 * 0.6) : sqrt(0.2 * 0.4)
        total = math.sqrt(0.12) + math.sqrt(0.08)
        expected = [math.sqrt(0.12) / total, math.sqrt(0.08) / total]
    got = [o.prob for o in blended_choice(listed, quick, [], weight).options]
    assert got == pytest.approx(expected, abs=1e-9)


def test_a_walk_listed_once_gets_the_quick_looks_mass_of_both_its_forms():
    """A walk over a relation held both ways is listed once (`distinct_walks`), but the quick look scored each
    form: the listed form stands for both."""
    kept, twin, other = _plan("borders", example="x"), _plan("borders", "borders", example="y"), _plan("capital")
    texts = [readers._option_text(p) for p in (kept, twin, other)]
    quick = _decision(texts, [0.3, 0.3, 0.4])
    listed = _decision([texts[0], texts[2]], [0.5, 0.5])
    with_twin = blended_choice(listed, quick, [(twin, kept)], 1.0)
    assert [o.prob for o in with_twin.options] == pytest.approx([0.6, 0.4])
    alone = blended_choice(listed, quick, [], 1.0)
    assert [o.prob for o in alone.options] == pytest.approx([3 / 7, 4 / 7])


def test_the_lists_calls_and_costs_are_kept():
    listed = _decision(["a", "b"], [0.6, 0.4])
    listed.calls, listed.forward_passes, listed.tokens_in = ["call"], 7, 120
    out = blended_choice(listed, _decision(["a", "b"], [0.9, 0.1]), [], 0.5)
    assert (out.calls, out.forward_passes, out.tokens_in) == (["call"], 7, 120)
    assert out.chosen.text == "a"


def test_a_listed_reading_with_the_blend_reads_as_blended_choice_of_its_two_looks(backend_model):
    """On the model, both backends: with the quick look never sure enough (``quick=1.01``) the walks are listed;
    the blended reading makes the same model calls as the reading without it (the blend is arithmetic on its two
    looks), its plans' probabilities still sum to one, and its explanation says so; without it nothing is said."""
    from kgqa_core.graph.knowledge_graph import KnowledgeGraph

    graph = KnowledgeGraph.from_triplets([
        ("Ann", "spouse", "Bob"), ("Bob", "ethnicity", "germans"), ("Ann", "ethnicity", "dutch"),
        ("Ann", "place_of_birth", "Delft"), ("Delft", "is_in_country", "Netherlands")], name="people")
    question = "what is the ethnicity of Ann's wife"
    spec = "paths:quick=1.01,read_back=0,joint=0,horizon=0"
    plain = make_reader(spec, backend_model).read(question, graph, ["Ann"])
    mixed = make_reader(spec + ",blend=0.5", backend_model).read(question, graph, ["Ann"])
    purposes = [c.purpose for c in mixed.calls]
    assert purposes == [c.purpose for c in plain.calls] and any(p.startswith("reads.reading order") for p in purposes)
    assert "`reading_blend`" in mixed.explanation and "`reading_blend`" not in plain.explanation
    assert math.isclose(sum(p.confidence for p in mixed.plans), 1.0, abs_tol=1e-6)
