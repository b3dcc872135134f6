"""The three READS prompts (Tab. 13), adapted to option lists.

The paper's fine-tuned model answers the templates free-form; ours is
untrained, so each prompt ends with the numbered option pool and asks for one
option copied exactly, and the option text (not its number) is what gets
scored.  The type legend of Tab. 13 is kept: node names are ``type_id``.
"""

from __future__ import annotations

from .abstract_structure import AbstractStructure
from .scoring import PromptParts

_LEGEND = (
    "The graph is given as triples (entity A, relation, entity B). "
    "Entity names in the graph are 'type_id': the type is entity (ordinary entity), "
    "topic (an id without meaning that joins facts about one topic), num (number) or date; "
    "the id is an incremental identifier. Under 'Nodes' a few entities of each name are shown.\n"
)

_REPLY = "Reply with one option, copied exactly."


def search_prompt(question: str, structure: AbstractStructure, examples: int = 2) -> PromptParts:
    fixed = (
        "Below is a question; you can retrieve a graph to help you answer it.\n"
        + _LEGEND
        + "Decide which entity and corresponding relation to retrieve next, as 'entity + relation'; "
        "'relation (reverse)' follows the relation backwards, to the entities A of triples (A, relation, entity). "
        "Choose 'None' if the retrieved graph is informative enough to answer the question.\n\n"
    )
    head = (
        fixed
        + f"Question: {question}\n"
        f"Retrieved graph:\n{structure.linearize(examples)}\n\n"
        "Options:\n"
    )
    return PromptParts(head=head, tail=_REPLY, fixed=fixed)


def prune_prompt(
    question: str,
    structure: AbstractStructure,
    constraints: list[str],
    applied: list[str],
    examples: int = 2,
) -> PromptParts:
    done = f"Constraints already applied: {'; '.join(applied)}\n" if applied else ""
    fixed = (
        "Below is a question with a support graph.\n"
        + _LEGEND
        + "Match a constraint the question states with one of the entities in the support graph, "
        "as 'entity operator value' (operators =, <, <=, >, >=, or max / min for the largest / smallest). "
        "Choose 'None' if the question states no further constraint.\n\n"
    )
    head = (
        fixed
        + f"Support graph:\n{structure.linearize(examples)}\n\n"
        f"Question: {question}\n"
        f"Constraints in the question: {', '.join(constraints) if constraints else 'none found'}\n"
        f"{done}\n"
        "Options:\n"
    )
    return PromptParts(head=head, tail=_REPLY, fixed=fixed)


def answer_prompt(question: str, structure: AbstractStructure, applied: list[str], examples: int = 2) -> PromptParts:
    done = f"Constraints applied: {'; '.join(applied)}\n" if applied else ""
    fixed = (
        "Below is a question with a support graph.\n"
        + _LEGEND
        + "Select the entity of the support graph that holds the answer to the question.\n\n"
    )
    head = (
        fixed
        + f"Support graph:\n{structure.linearize(examples)}\n\n"
        f"Question: {question}\n"
        f"{done}\n"
        "Options:\n"
    )
    return PromptParts(head=head, tail=_REPLY, fixed=fixed)
