"""The three RoK prompts (§4.1 CoT expansion, §4.2.2 branch relevance, §4.3 answer).

Kept short and literal: the workbench runs small local models, which follow
one plain instruction better than the paper's long GPT-3.5 templates.  The
answer prompt ends with ``Answer:`` already written after the chat template,
so even a 135M model starts with the answer instead of a preamble.
"""

from __future__ import annotations

import re
from typing import Sequence

SYSTEM = "You are a careful assistant that answers questions about a knowledge graph."

_BRACKET = re.compile(r"\[([^\[\]]+)\]")


def plain_question(question: str) -> str:
    """The question without dataset markup (MetaQA brackets its topic entity)."""
    return _BRACKET.sub(r"\1", question).strip()


def cot_user(question: str) -> str:
    return (
        "Answer the question step by step. In every step, name the specific people, "
        "films, places, years, genres or other things involved, with their full names.\n\n"
        f"Question: {plain_question(question)}\n"
    )


def branch_user(question: str, numbered: str) -> str:
    return (
        "Here are numbered facts from a knowledge graph.\n"
        f"{numbered}\n\n"
        f"Question: {plain_question(question)}\n"
        "Which facts are relevant for answering the question? "
        "Reply only with the numbers of the relevant facts, separated by commas, for example: 1, 3\n"
    )


def answer_user(question: str, paths: Sequence[str], branches: Sequence[str]) -> str:
    lines = ["Knowledge graph evidence."]
    if paths:
        lines.append("Reasoning paths:")
        lines.extend(f"{i}. {p}" for i, p in enumerate(paths, start=1))
    if branches:
        lines.append("Related facts:")
        lines.extend(f"- {b}" for b in branches)
    if not paths and not branches:
        lines.append("(no evidence was found in the graph)")
    lines.append("")
    lines.append(f"Question: {plain_question(question)}")
    lines.append(
        "Answer with the answer entities only, written exactly as in the evidence, "
        "separated by ' | '."
    )
    return "\n".join(lines) + "\n"


ANSWER_PREFIX = "Answer:"
