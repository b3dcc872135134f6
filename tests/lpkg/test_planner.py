"""ICLPKG prompt: KG-sourced demonstrations whose plans parse and, executed, give the instance's answers."""

from kgqa_core.lpkg.executor import PlanExecutor
from kgqa_core.lpkg.patterns import PATTERN_NAMES, PATTERNS
from kgqa_core.lpkg.plan_parser import Call, parse_plan
from kgqa_core.lpkg.planner import build_prompt, demonstrations


def test_every_demonstration_plan_parses(pattern_graph):
    demos = demonstrations(pattern_graph, PATTERNS, seed=0)
    assert {d.instance.pattern for d in demos} == set(PATTERNS)
    for d in demos:
        plan = parse_plan(d.plan)
        assert plan.question_type == PATTERN_NAMES[d.instance.pattern]
        assert plan.original_question == d.verbalised.question
        assert len(plan.sub_questions) == len(d.instance.sub_queries())
        funcs = [a.value.func for a in plan.assignments if isinstance(a.value, Call)]
        if d.instance.pattern in ("2i", "3i", "ip", "pi"):
            assert "Intersection" in funcs
        if d.instance.pattern == "2u":
            assert "Union" in funcs
        if d.instance.pattern == "compare":
            assert "Compare" in funcs


def test_prompt_layout(pattern_graph):
    demos = demonstrations(pattern_graph, ["1p", "2p"], seed=1)
    prompt = build_prompt('Where does "Alice" live?', demos)
    assert prompt.startswith("###Complete the Code Below###")
    assert prompt.count("# Example") == 2
    assert prompt.endswith('Original_Question: str = "Where does \\"Alice\\" live?"\n### Question Type:')


def test_demonstration_plans_execute_to_the_grounded_answers(pattern_graph, small_model):
    """Template sub-questions + Search/Get_Answer reproduce the graph's answers."""
    demos = demonstrations(pattern_graph, ["1p", "2p", "2i", "2u", "pi", "compare"], seed=0)
    for d in demos:
        executor = PlanExecutor(pattern_graph, small_model, d.verbalised.question, d.instance.anchors)
        result = executor.run(parse_plan(d.plan))
        assert sorted(result.texts()) == sorted(d.instance.answers), (d.plan, result.texts())
