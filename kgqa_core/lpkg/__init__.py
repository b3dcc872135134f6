"""LPKG (Learning to Plan from Knowledge Graphs): patterns, questions, plans, execution.

* `patterns`: ground the nine KG patterns in a graph, with all answers;
* `verbalise` / `generate`: turn instances into benchmark questions;
* `planner`: the in-context planning prompt with KG-sourced demonstrations;
* `plan_parser`: read plans with `ast`, never executing model-written code;
* `retrieval` / `executor`: run a plan's steps on the graph.
"""

from .generate import GenerationError, generate_questions
from .patterns import PATTERNS, GroundingLimits, PatternInstance, ground_patterns
from .plan_parser import Plan, PlanParseError, parse_plan

__all__ = [
    "GenerationError", "generate_questions", "PATTERNS", "GroundingLimits", "PatternInstance",
    "ground_patterns", "Plan", "PlanParseError", "parse_plan",
]
