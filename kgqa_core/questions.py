"""What counts as a question the workbench will try to answer.

The UI refuses an empty question; the CLI and evaluation datasets must refuse
the same inputs with the same words.  A very long question used to reach the
model and fail with "lower the prompt budget (max prompt triplets)", which
points at the wrong knob: it is refused here, before any model loads.
"""

from __future__ import annotations

MAX_QUESTION_CHARS = 2_000  # KGQA questions are a sentence or two; MetaQA's longest is ~150 characters


class QuestionError(ValueError):
    """A question that is empty or too long; the message is meant for the user."""


def check_question(text: object) -> str:
    """The question with surrounding whitespace removed, or `QuestionError` saying what is wrong."""
    if not isinstance(text, str) or not text.strip():
        raise QuestionError("the question is empty; write a question")
    question = text.strip()
    if len(question) > MAX_QUESTION_CHARS:
        raise QuestionError(
            f"the question is too long: {len(question):,} characters, at most {MAX_QUESTION_CHARS:,}"
        )
    return question


def parse_gold(text: object) -> list[str]:
    """Gold answers typed as ``a | b | c`` (the Ask page's field and ``ask --gold``).

    Names may hold commas ("Washington, D.C."), so ``|`` separates them; empty
    pieces are dropped and repeats kept once, in order.
    """
    pieces = (p.strip() for p in str(text or "").split("|"))
    return list(dict.fromkeys(p for p in pieces if p))
