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


def test_the_planners_demonstrations_are_read_once_for_the_questions_of_a_graph(pattern_graph, llama_model):
    """The tool code and demonstrations are the prompt's fixed part: the second question reuses all of it."""
    from kgqa_core.lpkg.planner import Planner, prompt_prefix

    m = llama_model
    m.clear_prefix_cache()
    planner = Planner(m, pattern_graph, max_new_tokens=8)
    planner.plan("Where does Alice live?")
    fixed = m.fixed_tokens(prompt_prefix(demonstrations(pattern_graph, planner.patterns, planner.seed)),
                           m.encode(planner.plan("Who is Bob's friend?").prompt))
    before = m.counter.prefix_tokens_reused
    out = planner.plan("Who does Carol know?")
    assert m.counter.prefix_tokens_reused - before == fixed > 500  # the whole fixed part, not only its whole batches
    assert isinstance(out.prompt, str) and type(out.prompt) is str  # the trace keeps plain text
