"""ICLPKG: in-context planning with code-formatted, KG-sourced demonstrations.

The paper fine-tunes a planner on plans built from grounded KG patterns; its
in-context variant (ICLPKG) puts such plans in the prompt instead.  We do the
same with demonstrations grounded *in the user's own graph*: one instance of
each pattern, verbalised, filled into the plan template of its pattern
(App. C.2's code format), so the demonstrations use the graph's real
relations and entity names.  The model completes the code for the new
question; `extract_plan` trims the completion to one plan, and the plan is
parsed (never executed) by `plan_parser.parse_plan`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from ..graph.knowledge_graph import KnowledgeGraph
from ..models.generation import GenerationConfig
from ..models.interface import PromptText
from .patterns import PATTERN_NAMES, PATTERNS, Grounder, GroundingLimits, PatternInstance
from .plan_parser import extract_plan, quote
from .verbalise import TemplateVerbaliser, Verbalised, Verbaliser

if TYPE_CHECKING:  # pragma: no cover
    from ..models.local_model import Generation, LocalModel

TOOL_HEADER = '''###Complete the Code Below###
from package1 import KGSearch
from package2 import QA_LLM
search = KGSearch()

def Search(query:str, thought:str):
    """Search relevant triplets about query in the knowledge graph.
    Attributes:
        query: The question you want to search.
        thought: The reason why this query is need.
    """
    if thought is not None:
        return search.run(query)
    else:
        return ("Please give your thought!")

def Get_Answer(query:str, info:str):
    """Get the answer of the query based on the information.
    Attributes:
        query: The question you want to search.
        info: The information relevant to the query.
    """
    ### Use the QA_LLM model to get the answer.
    return QA_LLM(query, info)

def Compare(Original_Query:str, Subquestions:list, Answers:list):
    """Compare the answer of the sub-questions and return the final answer of original query.
    Attributes:
        Original_Query: The original question.
        Subquestions: The list of sub-questions.
        Answers: The list of answers of the sub-questions.
    """
    query = Original_Query
    info = str()
    for i in range(len(Subquestions)):
        info += Subquestions[i] + ' : ' + Answers[i] + '\\n'
    return QA_LLM(query, info)

def Intersection(Answer1:str, Answer2:str):
    """Find the intersection of two answer sets."""
    List1 = Answer1.split(',')
    List2 = Answer2.split(',')
    return str(set(List1) & set(List2))

def Union(Answer1:str, Answer2:str):
    """Find the union of two answer sets."""
    List1 = Answer1.split(',')
    List2 = Answer2.split(',')
    return str(set(List1) | set(List2))

def Finish_The_Plan(Answer:str):
    """Call this function to finish the plan and return the final answer."""
    return Answer
'''

_SEPARATOR = "###################"


@dataclass
class Demonstration:
    instance: PatternInstance
    verbalised: Verbalised
    plan: str


def _thought(k: int, text: str, dependent: bool, atomic: bool) -> str:
    if atomic:
        return "An atomic question, no need to decompose. Search directly."
    if dependent:
        return f"After knowing the previous answer, I need to ask sub-question {k} about it."
    return f"I need to answer sub-question {k} first."


def plan_for(question: str, inst: PatternInstance, verb: Verbalised) -> str:
    """The plan template of the instance's pattern, filled with its sub-questions (T_pat.fill)."""
    lines = [
        f"Original_Question: str = {quote(question)}",
        f"### Question Type: {PATTERN_NAMES[inst.pattern]}",
        "### Decompose the original question into sub-questions.",
    ]
    subs = inst.sub_queries()

    def block(k: int) -> None:
        text = verb.sub_questions[k - 1]
        dependent = subs[k - 1].placeholder
        lines.append(f"Thought{k}: str = {quote(_thought(k, text, dependent, inst.pattern == '1p'))}")
        lines.append(f"Sub_Question_{k}: str = {quote(text, fstring=dependent)}")
        lines.append(f"Info_{k}: str = Search(query = Sub_Question_{k}, thought = Thought{k})")
        lines.append(f"Ans_{k}: str = Get_Answer(query = Sub_Question_{k}, info = Info_{k})")

    p = inst.pattern
    final = f"Ans_{len(subs)}"
    if p in ("1p", "2p", "3p"):
        for k in range(1, len(subs) + 1):
            block(k)
    elif p in ("2i", "pi"):
        for k in range(1, len(subs) + 1):
            block(k)
        a, b = ("Ans_1", "Ans_2") if p == "2i" else ("Ans_2", "Ans_3")
        lines.append(f"Inter_1: str = Intersection(Answer1 = {a}, Answer2 = {b})")
        final = "Inter_1"
    elif p == "3i":
        for k in (1, 2, 3):
            block(k)
        lines.append("Inter_1: str = Intersection(Answer1 = Ans_1, Answer2 = Ans_2)")
        lines.append("Inter_2: str = Intersection(Answer1 = Inter_1, Answer2 = Ans_3)")
        final = "Inter_2"
    elif p == "2u":
        block(1)
        block(2)
        lines.append("Union_1: str = Union(Answer1 = Ans_1, Answer2 = Ans_2)")
        final = "Union_1"
    elif p == "ip":
        block(1)
        block(2)
        lines.append("Inter_1: str = Intersection(Answer1 = Ans_1, Answer2 = Ans_2)")
        block(3)
        final = "Ans_3"
    elif p == "compare":
        block(1)
        block(2)
        lines.append(
            "Comp_Ans: str = Compare(Original_Query = Original_Question, "
            "Subquestions = [Sub_Question_1, Sub_Question_2], Answers = [Ans_1, Ans_2])"
        )
        final = "Comp_Ans"
    lines.append(f"Final_Answer: str = Finish_The_Plan(Answer = {final})")
    return "\n".join(lines)


# ---------------------------------------------------------------- demonstrations
_DEMO_CACHE: dict[tuple, list[Demonstration]] = {}
_DEMO_LOCK = threading.Lock()


def demonstrations(
    graph: KnowledgeGraph,
    patterns: Sequence[str] = PATTERNS,
    seed: int = 0,
    verbaliser: Verbaliser | None = None,
) -> list[Demonstration]:
    """One grounded, verbalised, planned instance per pattern the graph supports.

    Cached per (graph content, patterns, seed) for template demonstrations:
    grounding a large graph for every question would be wasted work.
    """
    verbaliser = verbaliser or TemplateVerbaliser()
    key = (graph.fingerprint, tuple(patterns), seed, verbaliser.name)
    cacheable = verbaliser.name == "template"
    if cacheable:
        with _DEMO_LOCK:
            if key in _DEMO_CACHE:
                return _DEMO_CACHE[key]
    grounder = Grounder(graph, seed=seed, limits=GroundingLimits(max_answers=5, max_intermediate=10,
                                                                 attempts_per_instance=300))
    demos = []
    for p in patterns:
        inst = grounder.ground(p)
        if inst is None:
            continue
        verb = verbaliser.verbalise(inst)
        demos.append(Demonstration(inst, verb, plan_for(verb.question, inst, verb)))
    if cacheable:
        with _DEMO_LOCK:
            if len(_DEMO_CACHE) > 32:
                _DEMO_CACHE.clear()
            _DEMO_CACHE[key] = demos
    return demos


def prompt_prefix(demos: Sequence[Demonstration]) -> str:
    """Everything before the question: the same for every question on one graph."""
    parts = [TOOL_HEADER]
    for i, d in enumerate(demos):
        parts.append(f"{_SEPARATOR}\n# Example {i}:\n{_SEPARATOR}\n{d.plan}\n")
    parts.append(f"{_SEPARATOR}\n# Your turn! Just complete the code below and do not return other things.\n{_SEPARATOR}\n")
    return "\n".join(parts)


def prompt_question(question: str) -> str:
    return f"Original_Question: str = {quote(question)}\n### Question Type:"


def build_prompt(question: str, demos: Sequence[Demonstration]) -> str:
    """Instruction (tool code) + demonstrations + the new question, App. C.2 layout."""
    return prompt_prefix(demos) + prompt_question(question)



@dataclass
class PlannerOutput:
    prompt: str
    raw: str  # the model's completion as written
    plan_text: str  # the completion trimmed to one plan, with the question restated
    generation: "Generation"


class Planner:
    """Writes a plan for a question with a local model (greedy)."""

    def __init__(
        self,
        model: "LocalModel",
        graph: KnowledgeGraph,
        patterns: Sequence[str] = PATTERNS,
        seed: int = 0,
        max_new_tokens: int = 360,
    ) -> None:
        self.model = model
        self.graph = graph
        self.patterns = list(patterns)
        self.seed = seed
        self.max_new_tokens = max_new_tokens

    def plan(self, question: str) -> PlannerOutput:
        demos = demonstrations(self.graph, self.patterns, self.seed)
        prefix = prompt_prefix(demos)
        # The prefix (tool code + demonstrations) is the same for every question on a graph: named as the prompt's
        # fixed part, a backend that reuses prompts keeps it whole (llama.cpp: read once, the numbers a fresh read's).
        prompt = PromptText(prefix + prompt_question(question), prefix)
        stops = (_SEPARATOR, "# Example", "\nOriginal_Question", "```\n", "<|")
        gen = self.model.generate(prompt, GenerationConfig(self.max_new_tokens, stop_strings=stops))
        raw = "### Question Type:" + gen.text
        plan_text = extract_plan(raw, question)
        return PlannerOutput(prompt=str(prompt), raw=raw, plan_text=plan_text, generation=gen)
