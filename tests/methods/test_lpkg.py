"""LPKG end to end: fixed plans executed on a small film graph with the real 135M model.

The plans are fixed (``params["plan"]``) so the checks are about execution:
Search finds the right triplets, Get_Answer keeps answers in the graph, set
operations are real, the trace records every step.  The planner itself is
checked for well-formed output only.
"""

from pathlib import Path

import pytest

from kgqa_core.graph.knowledge_graph import KnowledgeGraph
from kgqa_core.methods.base import MethodRequest, run_method
from kgqa_core.trace.schema import Trace

MOVIE_TRIPLETS = [
    ("Heat", "directed_by", "Michael Mann"), ("Heat", "written_by", "Michael Mann"),
    ("Heat", "starred_actors", "Al Pacino"), ("Heat", "starred_actors", "Robert De Niro"),
    ("Heat", "release_year", "1995"), ("Heat", "has_genre", "Crime"), ("Heat", "in_language", "English"),
    ("Collateral", "directed_by", "Michael Mann"), ("Collateral", "written_by", "Stuart Beattie"),
    ("Collateral", "starred_actors", "Tom Cruise"), ("Collateral", "starred_actors", "Jamie Foxx"),
    ("Collateral", "release_year", "2004"), ("Collateral", "has_genre", "Thriller"),
    ("The Insider", "directed_by", "Michael Mann"), ("The Insider", "written_by", "Eric Roth"),
    ("The Insider", "starred_actors", "Al Pacino"), ("The Insider", "starred_actors", "Russell Crowe"),
    ("The Insider", "release_year", "1999"), ("The Insider", "has_genre", "Drama"),
    ("Ronin", "directed_by", "John Frankenheimer"), ("Ronin", "starred_actors", "Robert De Niro"),
    ("Ronin", "starred_actors", "Jean Reno"), ("Ronin", "release_year", "1998"), ("Ronin", "has_genre", "Action"),
    ("Ronin", "in_language", "French"),
    ("The Godfather Part II", "directed_by", "Francis Ford Coppola"),
    ("The Godfather Part II", "written_by", "Mario Puzo"),
    ("The Godfather Part II", "starred_actors", "Al Pacino"),
    ("The Godfather Part II", "starred_actors", "Robert De Niro"),
    ("The Godfather Part II", "release_year", "1974"), ("The Godfather Part II", "has_genre", "Crime"),
    ("The Godfather Part II", "in_language", "Italian"),
    ("Chinese Coffee", "directed_by", "Al Pacino"), ("Chinese Coffee", "starred_actors", "Al Pacino"),
    ("Chinese Coffee", "release_year", "2000"), ("Chinese Coffee", "has_genre", "Drama"),
    ("A Bronx Tale", "directed_by", "Robert De Niro"), ("A Bronx Tale", "starred_actors", "Robert De Niro"),
    ("A Bronx Tale", "written_by", "Chazz Palminteri"), ("A Bronx Tale", "release_year", "1993"),
    ("A Bronx Tale", "has_genre", "Crime"),
    ("Mission: Impossible", "directed_by", "Brian De Palma"), ("Mission: Impossible", "starred_actors", "Tom Cruise"),
    ("Mission: Impossible", "starred_actors", "Jean Reno"), ("Mission: Impossible", "release_year", "1996"),
    ("Mission: Impossible", "has_genre", "Action"),
]

PLAN_2P = '''Original_Question: str = "What genres are the films directed by Michael Mann?"
### Question Type: Two Projection
### Decompose the original question into sub-questions.
Thought1: str = "I need the films directed by Michael Mann first."
Sub_Question_1: str = "Which films were directed by Michael Mann?"
Info_1: str = Search(query = Sub_Question_1, thought = Thought1)
Ans_1: str = Get_Answer(query = Sub_Question_1, info = Info_1)
Thought2: str = "Then the genre of each film."
Sub_Question_2: str = f"What is the genre of {Ans_1}?"
Info_2: str = Search(query = Sub_Question_2, thought = Thought2)
Ans_2: str = Get_Answer(query = Sub_Question_2, info = Info_2)
Final_Answer: str = Finish_The_Plan(Answer = Ans_2)'''

PLAN_2I = '''Original_Question: str = "Which films star both Al Pacino and Robert De Niro?"
### Question Type: Two Intersection
Thought1: str = "Films with Al Pacino."
Sub_Question_1: str = "Which films did Al Pacino star in?"
Info_1: str = Search(query = Sub_Question_1, thought = Thought1)
Ans_1: str = Get_Answer(query = Sub_Question_1, info = Info_1)
Thought2: str = "Films with Robert De Niro."
Sub_Question_2: str = "Which films did Robert De Niro star in?"
Info_2: str = Search(query = Sub_Question_2, thought = Thought2)
Ans_2: str = Get_Answer(query = Sub_Question_2, info = Info_2)
Inter_1: str = Intersection(Answer1 = Ans_1, Answer2 = Ans_2)
Final_Answer: str = Finish_The_Plan(Answer = Inter_1)'''

PLAN_COMPARE = '''Original_Question: str = "Which was released later, Heat or Ronin?"
### Question Type: Comparison
Sub_Question_1: str = "What is the release year of Heat?"
Info_1: str = Search(query = Sub_Question_1, thought = "year of Heat")
Ans_1: str = Get_Answer(query = Sub_Question_1, info = Info_1)
Sub_Question_2: str = "What is the release year of Ronin?"
Info_2: str = Search(query = Sub_Question_2, thought = "year of Ronin")
Ans_2: str = Get_Answer(query = Sub_Question_2, info = Info_2)
Comp_Ans: str = Compare(Original_Query = Original_Question, Subquestions = [Sub_Question_1, Sub_Question_2], Answers = [Ans_1, Ans_2])
Final_Answer: str = Finish_The_Plan(Answer = Comp_Ans)'''


@pytest.fixture(scope="module")
def movie_graph() -> KnowledgeGraph:
    return KnowledgeGraph.from_triplets(MOVIE_TRIPLETS, name="movies")


def run_plan(graph, model, question, plan, **params):
    seen = []
    request = MethodRequest(graph=graph, question=question, model=model, params={"plan": plan, **params},
                            on_step=seen.append)
    trace = run_method("lpkg", request)
    return trace, seen


def ids_of(graph, *triplets):
    return {graph.find(*t).id for t in triplets}


def test_2p_plan_fans_out_and_answers_from_the_graph(movie_graph, backend_model):
    trace, seen = run_plan(movie_graph, backend_model, "What genres are the films directed by Michael Mann?", PLAN_2P)
    assert trace.error == ""
    assert set(trace.answer_texts) == {"Crime", "Thriller", "Drama"}
    assert all(a.in_graph and a.entity == a.text for a in trace.answers)
    assert [s.kind for s in trace.steps] == ["lpkg.plan", "lpkg.search", "lpkg.answer", "lpkg.search", "lpkg.answer"]
    assert seen == trace.steps, "every step is streamed as it completes"
    plan_step = trace.steps[0]
    assert plan_step.extra["question_type"] == "Two Projection"
    assert plan_step.extra["pattern"] == "2p"
    assert plan_step.model_text == PLAN_2P

    search1, answer1, search2, answer2 = trace.steps[1:]
    assert search1.extra["subquestion"] == 1 and search2.extra["subquestion"] == 2
    assert ids_of(movie_graph, ("Heat", "directed_by", "Michael Mann"), ("Collateral", "directed_by", "Michael Mann"),
                  ("The Insider", "directed_by", "Michael Mann")) <= set(search1.subgraph_after)
    assert set(answer1.extra["answers"]) == {"Heat", "Collateral", "The Insider"}
    # {Ans_1} holds three films: the second sub-question is asked once per film
    queries = [i["query"] for i in search2.extra["instances"]]
    assert sorted(queries) == sorted(f"What is the genre of {f}?" for f in ("Heat", "Collateral", "The Insider"))
    assert search2.extra["sub_question"] == "What is the genre of {Ans_1}?"
    assert set(answer2.subgraph_after) == ids_of(
        movie_graph, ("Heat", "has_genre", "Crime"), ("Collateral", "has_genre", "Thriller"),
        ("The Insider", "has_genre", "Drama"))

    # each answer comes with the two triplets that lead to it, all grounded
    assert len(trace.chains) == 3
    for chain in trace.chains:
        assert [c.relation for c in chain] == ["directed_by", "has_genre"]
        assert all(c.in_graph and c.triplet_id is not None for c in chain)
    assert trace.faithfulness.checked == 6 and trace.faithfulness.ill_triplets == 0
    assert trace.faithfulness.answers_in_graph == 3
    assert trace.topic_entities == ["Michael Mann"]
    assert Trace.from_json(trace.to_json()) == trace


def test_2i_plan_intersects_real_answer_sets(movie_graph, small_model):
    trace, _ = run_plan(movie_graph, small_model, "Which films star both Al Pacino and Robert De Niro?", PLAN_2I,
                        )
    assert trace.error == ""
    assert set(trace.answer_texts) == {"Heat", "The Godfather Part II"}
    kinds = [s.kind for s in trace.steps]
    assert kinds == ["lpkg.plan", "lpkg.search", "lpkg.answer", "lpkg.search", "lpkg.answer", "lpkg.set_op"]
    answers = [s for s in trace.steps if s.kind == "lpkg.answer"]
    # Al Pacino also directed a film: the model had two groups to choose from
    assert all(s.model_calls for s in answers)
    assert all(len(s.candidates) >= 2 and sum(c.kept for c in s.candidates) == 1 for s in answers)
    assert set(answers[0].extra["answers"]) == {"Heat", "The Insider", "The Godfather Part II", "Chinese Coffee"}
    assert set(answers[1].extra["answers"]) == {"Heat", "Ronin", "The Godfather Part II", "A Bronx Tale"}
    op = trace.steps[-1]
    assert op.extra["op"] == "intersection"
    assert set(op.extra["operands"]) == {"Ans_1", "Ans_2"}
    assert set(op.extra["result"]) == {"Heat", "The Godfather Part II"}
    for chain in trace.chains:  # both branches support each answer
        assert {c.tail for c in chain} == {"Al Pacino", "Robert De Niro"}
    assert trace.faithfulness.ill_triplets == 0
    assert trace.model_calls == 2 and trace.forward_passes > 0


def test_compare_plan_uses_the_values(movie_graph, small_model):
    trace, _ = run_plan(movie_graph, small_model, "Which was released later, Heat or Ronin?", PLAN_COMPARE)
    assert trace.error == ""
    assert trace.answer_texts == ["Ronin"]
    compare = trace.steps[-1]
    assert compare.kind == "lpkg.set_op" and compare.extra["op"] == "compare"
    assert compare.extra["values"] == {"Heat": "1995", "Ronin": "1998"}
    assert [c.tail for c in trace.chains[0]] == ["1998"]


def test_union_plan(movie_graph, small_model):
    plan = PLAN_2I.replace("Intersection(", "Union(").replace("Two Intersection", "Two Union")
    trace, _ = run_plan(movie_graph, small_model, "Films with Al Pacino or Robert De Niro?", plan)
    assert set(trace.answer_texts) == {"Heat", "The Insider", "The Godfather Part II", "Ronin", "Chinese Coffee",
                                       "A Bronx Tale"}
    assert trace.steps[-1].extra["op"] == "union"


def test_malicious_plan_is_rejected_not_executed(movie_graph, small_model, tmp_path):
    marker = tmp_path / "pwned"
    plan = PLAN_2P.replace(
        "Thought2:", f"import os\nX = os.system('touch {marker}')\nThought2:"
    )
    trace, _ = run_plan(movie_graph, small_model, "What genres are the films directed by Michael Mann?", plan)
    assert not marker.exists()
    plan_step = trace.steps[0]
    assert plan_step.kind == "lpkg.plan"
    assert plan_step.extra["parse_error"].startswith("plan line 8: imports are not allowed")
    assert plan_step.extra["parse_error_line"] == 8
    assert any("rejected" in n for n in trace.notes)
    # the fallback asks the whole question once, still from the graph
    assert trace.extra["fallback_plan"] is True
    assert trace.steps[1].kind == "lpkg.plan" and trace.steps[1].extra["fallback"] is True


def test_without_fallback_the_parse_error_is_the_trace_error(movie_graph, small_model):
    trace, _ = run_plan(movie_graph, small_model, "q?", "Ans_1 = eval('1')", fallback_plan=False)
    assert trace.error.startswith("plan line 1: call to 'eval' is not allowed")
    assert trace.answers == []


def test_runtime_error_names_the_line(movie_graph, small_model):
    plan = PLAN_2P.replace("Final_Answer: str = Finish_The_Plan(Answer = Ans_2)",
                           "Bad = Intersection(Answer1 = Ans_2, Answer2 = Sub_Question_1)")
    trace, _ = run_plan(movie_graph, small_model, "q?", plan)
    assert trace.error.startswith("plan line 12: Intersection needs answer sets; Answer2 = Sub_Question_1 is a text")


def test_sub_question_without_graph_entities_is_answered_freely(movie_graph, small_model):
    plan = ('Sub_Question_1: str = "What is the capital of Atlantis?"\n'
            "Info_1 = Search(query = Sub_Question_1)\nAns_1 = Get_Answer(query = Sub_Question_1, info = Info_1)")
    trace, _ = run_plan(movie_graph, small_model, "What is the capital of Atlantis?", plan)
    answer_step = [s for s in trace.steps if s.kind == "lpkg.answer"][0]
    assert "no triplets were retrieved" in answer_step.note
    assert answer_step.model_calls and answer_step.model_calls[0].purpose == "lpkg.get_answer (free)"
    for a in trace.answers:
        assert a.in_graph == movie_graph.has_entity(a.text)


def test_planner_writes_a_well_formed_plan_or_a_clear_error(movie_graph, backend_model):
    request = MethodRequest(graph=movie_graph, question="What genres are the films directed by Michael Mann?",
                            model=backend_model, params={"max_new_tokens": 60, "patterns": "1p,2p"})
    trace = run_method("lpkg", request)
    plan_step = trace.steps[0]
    assert plan_step.kind == "lpkg.plan"
    assert plan_step.model_text.strip()
    prompt = plan_step.model_calls[0].prompt
    # KG-sourced demonstrations: one per requested pattern, from this graph's relations
    assert prompt.count("# Example") == 2
    demos = prompt.split("# Example 0:")[1].split("# Your turn!")[0]
    assert "Finish_The_Plan(Answer =" in demos
    assert sum(e in demos for e in movie_graph.entities) >= 2, "demonstrations come from this graph"
    assert prompt.rstrip().endswith('"What genres are the films directed by Michael Mann?"\n### Question Type:')
    if "parse_error" in plan_step.extra:
        assert plan_step.extra["parse_error"].startswith(("plan line", "plan:"))
        assert trace.extra.get("fallback_plan") is True
    else:
        assert plan_step.extra["sub_questions"]
    assert trace.error == "" or trace.error.startswith("plan line")
    assert Trace.from_json(trace.to_json()) == trace
