"""The plan parser accepts App. C.2 plans and rejects everything else with the line and the problem."""

import pytest

from kgqa_core.lpkg.plan_parser import (
    Call,
    ListValue,
    PlanParseError,
    Ref,
    Text,
    extract_plan,
    parse_plan,
)

PAPER_2P = '''Original_Question: str = "Who succeeded the first President of Namibia?"
### Question Type: Two Projection
### Decompose the original question into sub-questions.
Thought1: str = "If I want to know who succeeded the first President of Namibia, I need to first know who is the first President of Namibia."
Sub_Question_1: str = "Who is the first President of Namibia?"
Info_1: str = Search(query = Sub_Question_1, thought = Thought1)
Ans_1: str = Get_Answer(query = Sub_Question_1, info = Info_1)
Thought2: str = "After knowing who is the first President of Namibia, I need to know who succeeded him."
Sub_Question_2: str = f"Who succeeded {Ans_1}?"
Info_2: str = Search(query = Sub_Question_2, thought = Thought2)
Ans_2: str = Get_Answer(query = Sub_Question_2, info = Info_2)
Final_Answer: str = Finish_The_Plan(Answer = Ans_2)'''

PREFIX = '''Original_Question: str = "q"
Sub_Question_1: str = "Who directed Heat?"
Info_1: str = Search(query = Sub_Question_1, thought = "t")
Ans_1: str = Get_Answer(query = Sub_Question_1, info = Info_1)
'''


def test_paper_plan_parses():
    plan = parse_plan(PAPER_2P)
    assert plan.question_type == "Two Projection"
    assert plan.original_question == "Who succeeded the first President of Namibia?"
    assert plan.final == "Final_Answer"
    sq2 = plan.variable("Sub_Question_2").value
    assert isinstance(sq2, Text) and sq2.refs == ("Ans_1",)
    assert sq2.render({"Ans_1": "Sam Nujoma"}) == "Who succeeded Sam Nujoma?"
    info2 = plan.variable("Info_2").value
    assert isinstance(info2, Call) and info2.func == "Search"
    assert info2.args["query"] == Ref("Sub_Question_2")
    assert [a.target for a in plan.sub_questions] == ["Sub_Question_1", "Sub_Question_2"]


def test_set_operations_compare_and_positional_arguments():
    plan = parse_plan(PREFIX + '''Sub_Question_2: str = "Who directed Ronin?"
Info_2 = Search(Sub_Question_2, "t2")
Ans_2 = Get_Answer(Sub_Question_2, Info_2)
Inter_1: str = Intersection(Answer1 = Ans_1, Answer2 = Ans_2)
Union_1: str = Union(Ans_1, Ans_2)
Comp: str = Compare(Original_Query = Original_Question, Subquestions = [Sub_Question_1, Sub_Question_2], Answers = [Ans_1, Ans_2])
Final_Answer = Finish_The_Plan(Answer = Inter_1)''')
    assert plan.variable("Info_2").value.args == {"query": Ref("Sub_Question_2"), "thought": Text(("t2",))}
    comp = plan.variable("Comp").value
    assert isinstance(comp.args["Answers"], ListValue)
    assert plan.final == "Final_Answer"


def test_placeholder_without_f_prefix_is_understood():
    plan = parse_plan(PREFIX + 'Sub_Question_2: str = "What genre is {Ans_1}?"\n'
                      'Info_2 = Search(query = Sub_Question_2)\nAns_2 = Get_Answer(query = Sub_Question_2, info = Info_2)')
    assert plan.variable("Sub_Question_2").value.refs == ("Ans_1",)
    # braces around ordinary words stay text
    plan = parse_plan(PREFIX.replace('"q"', '"what is {this}?"'))
    assert plan.original_question == "what is {this}?"


def test_original_question_may_be_supplied_by_the_caller():
    text = 'Sub_Question_1: str = Original_Question\nInfo_1 = Search(query = Sub_Question_1)\nAns_1 = Get_Answer(Sub_Question_1, Info_1)'
    with pytest.raises(PlanParseError, match="plan line 1: 'Original_Question' is used before it is assigned"):
        parse_plan(text)
    plan = parse_plan(text, original_question="Who directed Heat?")
    assert plan.original_question == "Who directed Heat?"
    assert plan.assignments[0].line == 1


def test_plan_without_final_call_uses_last_answer():
    plan = parse_plan(PREFIX)
    assert plan.final == "Ans_1"


@pytest.mark.parametrize(
    "bad_line, line_no, fragment",
    [
        ("import os", 5, "imports"),
        ("from subprocess import run", 5, "import"),
        ("X = os.system('rm -rf /')", 5, "attribute access"),
        ("X = open('/etc/passwd')", 5, "call to 'open' is not allowed"),
        ("X = eval('1+1')", 5, "call to 'eval' is not allowed"),
        ("exec('print(1)')", 5, "only assignments are allowed"),
        ("X = [a for a in Ans_1]", 5, "list comprehension"),
        ("X = Search(query = lambda: 1)", 5, "lambda"),
        ("X = __import__('os')", 5, "dunder"),
        ("__builtins__ = 'x'", 5, "dunder"),
        ("X: str = f'Who is {Ans_7}?'", 5, "placeholder {Ans_7} is used before Ans_7 is assigned"),
        ("X: str = 'Who is {Ans_7}?'", 5, "placeholder {Ans_7} is used before"),
        ("X = Get_Answer(query = Sub_Question_9, info = Info_1)", 5, "'Sub_Question_9' is used before it is assigned"),
        ("X = Search(query = Get_Answer(query = Sub_Question_1))", 5, "nested calls"),
        ("X = Ans_1[0]", 5, "subscripting"),
        ("X = Search(query = Sub_Question_1, shell = 'x')", 5, "no parameter 'shell'"),
        ("X = Intersection(Answer1 = Ans_1)", 5, "missing its 'Answer2'"),
        ("X = f'{Ans_1.__class__}'", 5, "f-string placeholders must be plain variable names"),
        ("X = f'{Ans_1!r}'", 5, "conversions"),
        ("for a in Ans_1: pass", 5, "for loop"),
        ("def Search(query): return 1", 5, "function definition"),
        ("Search = 'x'", 5, "tool name"),
        ("X = 1 + 2", 5, "operator expression"),
        ("X = 42", 5, "int constant"),
        ("X: int = Ans_1", 5, "type annotation"),
        ("X = (Y := Ans_1)", 5, "assignment expression"),
        ("X = Search(**{'query': 'x'})", 5, "keyword unpacking"),
        ("X = Search(query = Sub_Question_1", 5, "not valid plan syntax"),
    ],
)
def test_rejects_with_line_and_reason(bad_line, line_no, fragment):
    with pytest.raises(PlanParseError) as info:
        parse_plan(PREFIX + bad_line + "\n")
    err = info.value
    assert err.line == line_no, str(err)
    assert fragment in str(err), str(err)
    assert str(err).startswith(f"plan line {line_no}:")


def test_rejects_plans_that_cannot_answer():
    with pytest.raises(PlanParseError, match="never calls Get_Answer or Compare"):
        parse_plan('Q: str = "x"\nInfo_1 = Search(query = Q)')
    with pytest.raises(PlanParseError, match="empty"):
        parse_plan("   \n")
    with pytest.raises(PlanParseError, match="assigns nothing"):
        parse_plan("# only a comment\n'a note'")


def test_extract_plan_trims_a_completion():
    raw = ("```python\n" + PAPER_2P.split("\n", 1)[1] + "\n###################\n# Example 9:\n"
           "Original_Question: str = \"another\"\n```")
    text = extract_plan(raw, question="Who succeeded the first President of Namibia?")
    assert text.startswith('Original_Question: str = "Who succeeded the first President of Namibia?"')
    assert text.rstrip().endswith("Final_Answer: str = Finish_The_Plan(Answer = Ans_2)")
    assert "another" not in text
    assert parse_plan(text).final == "Final_Answer"


def test_extract_plan_cuts_special_tokens():
    raw = PAPER_2P + "<|fim_middle|>\nmore text"
    assert extract_plan(raw).endswith("Finish_The_Plan(Answer = Ans_2)")
    assert parse_plan(extract_plan(raw)).final == "Final_Answer"
