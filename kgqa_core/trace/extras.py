"""Typed ``Step.extra`` of the baseline methods (CoT, Direct), serialised as plain JSON objects.

Why: a view of a step should read named fields, not guess which keys a dict
holds.  A method builds one of these dataclasses and stores it with
`to_extra`; a reader gets it back with `from_extra`, which tolerates keys an
older trace lacks (their defaults) or a newer one adds (ignored).

Step kinds and their extras (see docs/trace-format.md):

* ``cot.triplet`` -> `CotTripletExtra`;  ``cot.check`` -> `CotCheckExtra`;
* ``cot.answer`` and ``direct.answer`` -> `AnswerExtra`.

Traces written before the baselines had their own kinds name these steps
``dog.triplet`` / ``dog.answer``; they load unchanged (the extras' keys are
the same), and `current_kind` tells a view which kind such a step is today.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")

# (method, kind written by older versions) -> kind today
LEGACY_KINDS: dict[tuple[str, str], str] = {
    ("cot", "dog.triplet"): "cot.triplet",
    ("cot", "dog.answer"): "cot.answer",
    ("direct", "dog.answer"): "direct.answer",
}


def current_kind(method: str, kind: str) -> str:
    """The kind a step of `method` has today (an older CoT trace's ``dog.answer`` is ``cot.answer``)."""
    return LEGACY_KINDS.get((method, kind), kind)


@dataclass
class AnswerExtra:
    """The answer step: the ``* X`` answers parsed from the text, and why the text ended."""

    answers: list[str] = field(default_factory=list)
    stop: str = ""  # "stop" (answer line written), "eos", "length", "repeat", "limit" (DoG: chain full)
    forced_conclusion: bool = False  # "Therefore, the answer is" was appended


@dataclass
class CotTripletExtra:
    """One triplet CoT wrote, replayed over DoG's query-centric subgraph."""

    chain: list[int] = field(default_factory=list)  # graph ids of the grounded triplets so far
    in_graph: bool = False
    grounded: bool = False  # in the graph and touching a topic entity or an earlier triplet
    in_subgraph: bool = False  # in G_q before the step: DoG's trie would have allowed it
    unconstrained: bool = True


@dataclass
class IllTriplet:
    """A written triplet that is not in the graph or not connected to the chain."""

    index: int
    triplet: list[str]
    reason: str
    text: str


@dataclass
class CotCheckExtra:
    """Every written triplet checked against the graph; the ill-formed ones listed."""

    ill: list[IllTriplet] = field(default_factory=list)


def to_extra(value: Any) -> dict[str, Any]:
    """A typed extra as the JSON object stored in ``Step.extra``."""
    return dataclasses.asdict(value)


def from_extra(cls: type[T], extra: dict[str, Any]) -> T:
    """``Step.extra`` read as `cls`; missing keys take their defaults, unknown keys are ignored."""
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    kwargs = {k: v for k, v in extra.items() if k in names}
    if cls is CotCheckExtra:
        kwargs["ill"] = [IllTriplet(**item) if isinstance(item, dict) else item for item in kwargs.get("ill", [])]
    return cls(**kwargs)
