"""Any text given as a plan is a PlanParseError (then LPKG's fallback plan), never RecursionError/MemoryError."""

from __future__ import annotations

import time

import pytest

from kgqa_core.lpkg.plan_parser import MAX_NESTING, PlanParseError, parse_plan

HOSTILE = {
    "3000 nested calls": "Ans_1 = " + "Search(" * 3000 + '"a"' + ")" * 3000,
    "10000 unary minus": "Ans_1 = " + "-" * 10_000 + "1",
    "10000 spaced minus": "Ans_1 = " + "- " * 10_000 + "1",
    "10000 not": "Ans_1 = " + "not " * 10_000 + "x",
    "3000 nested lists": "Ans_1 = Compare(Answers=" + "[" * 3000 + "]" * 3000 + ")",
    "attribute chain": "Ans_1 = a" + ".b" * 20_000,
    "nested lambdas": "Ans_1 = " + "lambda: " * 5000 + "1",
    "huge plan": 'Ans_1 = Get_Answer("' + "a" * 2_000_000 + '")',
    "many lines": 'Ans_1 = Get_Answer("a")\n' * 50_000,
    "nul byte": 'Ans_1 = Get_Answer("a\x00")',
    "deep f-string": 'Ans_1 = f"' + "{" * 3000 + "x" + "}" * 3000 + '"',
    "deep dict": "Ans_1 = " + "{1: " * 3000 + "1" + "}" * 3000,
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_plans_are_a_plan_parse_error(name):
    started = time.perf_counter()
    with pytest.raises(PlanParseError) as err:
        parse_plan(HOSTILE[name], original_question="q")
    assert "\n" not in str(err.value)
    assert time.perf_counter() - started < 5


def test_strings_may_hold_long_runs_of_dashes_and_brackets():
    text = ('Sub_Question_1: str = "' + "-" * 200 + "(" * 60 + '"\n'
            'Ans_1 = Get_Answer(query=Sub_Question_1)\n')
    plan = parse_plan(text, original_question="q")
    assert plan.final == "Ans_1"


def test_nesting_at_the_limit_is_still_read_as_a_plan_error_not_a_crash():
    text = "Ans_1 = Get_Answer(" + "(" * (MAX_NESTING - 2) + '"a"' + ")" * (MAX_NESTING - 2) + ")"
    plan = parse_plan(text, original_question="q")
    assert plan.final == "Ans_1"


def test_line_numbers_count_form_feeds_as_ast_does():
    text = 'Sub_Question_1: str = "a"\x0c\nAns_1 = Get_Answer(query=Sub_Question_1)\nimport os\n'
    with pytest.raises(PlanParseError, match="plan line 3: imports"):
        parse_plan(text, original_question="q")
    plan = parse_plan(text.replace("import os\n", ""), original_question="q")
    assert plan.assignments[1].source == "Ans_1 = Get_Answer(query=Sub_Question_1)"


def test_lpkg_answers_with_the_fallback_plan_when_the_plan_is_hostile(small_model):
    from kgqa_core.graph.knowledge_graph import KnowledgeGraph
    from kgqa_core.methods.base import MethodRequest, run_method

    graph = KnowledgeGraph.from_triplets([("Heat", "directed_by", "Michael Mann"),
                                          ("Heat", "release_year", "1995")], name="films")
    for name in ("10000 unary minus", "3000 nested calls"):
        request = MethodRequest(graph=graph, question="who directed Heat", model=small_model,
                                topic_entities=["Heat"], params={"plan": HOSTILE[name], "max_new_tokens": 16})
        trace = run_method("lpkg", request)
        assert not trace.error, trace.error
        assert trace.steps[0].extra["parse_error"] and trace.extra["fallback_plan"] is True
