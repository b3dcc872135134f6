"""DoG's linearised graph form: ``head -> relation -> tail | head -> relation -> tail``.

The DoG prompt (paper, Tab. 6) feeds the whole graph to the model in this
form, and the paper's example contexts are published in it, so the same text
is both a prompt fragment and a graph file format the loader accepts.
"""

from __future__ import annotations

import re

from dataclasses import dataclass
from typing import Iterable, Sequence

ARROW = " -> "
SEPARATOR = " | "


@dataclass(frozen=True, slots=True)
class LinearizedProblem:
    """One segment that is not a well-formed ``h -> r -> t`` triplet."""

    line: int  # 1-based physical line
    record: int  # 1-based index of the segment in the whole text
    problem: str


def _as_tuple(t: object) -> tuple[str, str, str]:
    as_tuple = getattr(t, "as_tuple", None)
    if as_tuple is not None:
        return as_tuple  # a Triplet
    h, r, tl = t  # type: ignore[misc]
    return (str(h), str(r), str(tl))


def linearize(triplets: Iterable[object]) -> str:
    """Join triplets (``Triplet`` objects or 3-tuples) as ``h -> r -> t | ...``."""
    return SEPARATOR.join(ARROW.join(_as_tuple(t)) for t in triplets)


def _strip_context_brackets(line: str) -> str:
    """Drop the DoG prompt's ``[ ... ]`` around a context (and lone bracket lines).

    Only brackets followed/preceded by a space count, so an entity such as
    "[REC]" is left alone.
    """
    s = line.strip()
    if s in ("[", "]"):
        return ""
    if s.startswith("[ "):
        s = s[2:]
    if s.endswith(" ]"):
        s = s[:-2]
    return s


def split_linearized(text: str) -> tuple[list[tuple[int, tuple[str, str, str]]], list[LinearizedProblem]]:
    """Parse linearised text into (line, triplet) pairs and the problems found.

    Segments are separated by `` | `` or by newlines.  Nothing is dropped silently: every
    malformed segment is reported with its line.  Brackets around a line
    (as in the DoG prompt's ``Context: [ ... ]``) are removed.
    """
    out: list[tuple[int, tuple[str, str, str]]] = []
    problems: list[LinearizedProblem] = []
    record = 0
    # Split on newlines only: str.splitlines() would also break names at U+2028 or a form feed.
    for line_no, line in enumerate(re.split(r"\r\n|\r|\n", text), start=1):
        line = _strip_context_brackets(line)
        if not line.strip():
            continue
        segments = line.split("|")
        for index, segment in enumerate(segments):
            seg = segment.strip()
            if not seg:
                # A leading or trailing separator ("a -> b -> c |") is harmless;
                # an empty segment between two separators is not.
                if index == 0 or index == len(segments) - 1:
                    continue
                record += 1
                problems.append(LinearizedProblem(line_no, record, "empty segment between '|' separators"))
                continue
            record += 1
            parts = [p.strip() for p in seg.split("->")]
            if len(parts) != 3:
                problems.append(
                    LinearizedProblem(
                        line_no,
                        record,
                        f"expected 'head -> relation -> tail', found {len(parts)} part"
                        f"{'s' if len(parts) != 1 else ''} in {seg[:60]!r}",
                    )
                )
                continue
            names = ("head", "relation", "tail")
            empty = [names[i] for i, p in enumerate(parts) if not p]
            if empty:
                problems.append(LinearizedProblem(line_no, record, f"empty {empty[0]} in {seg[:60]!r}"))
                continue
            out.append((line_no, (parts[0], parts[1], parts[2])))
    return out, problems


def parse_linearized(text: str) -> list[tuple[str, str, str]]:
    """The triplets of a linearised text; raises ``ValueError`` on the first bad segment.

    The graph loader uses `split_linearized` to report every bad segment with
    file and line; this convenience wrapper is for prompt fragments.
    """
    triplets, problems = split_linearized(text)
    if problems:
        p = problems[0]
        raise ValueError(
            f"line {p.line}: {p.problem} ({len(problems)} bad segment"
            f"{'s' if len(problems) != 1 else ''} in total)"
        )
    return [t for _, t in triplets]


def linearize_lines(triplets: Sequence[object]) -> str:
    """One triplet per line, the file-friendly variant of `linearize`."""
    return "\n".join(ARROW.join(_as_tuple(t)) for t in triplets) + ("\n" if triplets else "")
