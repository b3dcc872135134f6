"""READS parts: abstract structure S_k, option pools, debiased option scoring, constraints.

The method itself (`kgqa_core.methods.reads.run`) wires these together:
search (Eq. 6), prune (Eq. 7) and answer (Eq. 8), every decision a choice
among options scored by the local model's log-probabilities.
"""

from .abstract_structure import AbstractStructure, Link, SemanticNode, detect_type
from .constraints import ConstraintOption, ConstraintValue, apply_constraint, constraint_options, parse_question_values
from .options import AnswerOption, SearchOption, answer_options, search_options
from .scoring import Decision, ModelChooser, OptionScore, combine_permutations, trie_logprobs

__all__ = [
    "AbstractStructure", "Link", "SemanticNode", "detect_type",
    "ConstraintOption", "ConstraintValue", "apply_constraint", "constraint_options", "parse_question_values",
    "AnswerOption", "SearchOption", "answer_options", "search_options",
    "Decision", "ModelChooser", "OptionScore", "combine_permutations", "trie_logprobs",
]
