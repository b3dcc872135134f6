"""Counters of what work cost, snapshotted before it and subtracted after it, field by field.

Why one base: a model's forward-pass counter, a SPARQL client's query
statistics, a graph store's costs and a run's costs are each a few numbers
that are copied before a piece of work and subtracted after it.  `Counts`
does that once for all of them; the shared groups of numbers are declared
once too (`ModelCosts` for a run and an evaluated question, `QueryCounts`
for a query client and a store).  Fields that are not numbers (a lock) are
left out of copies and differences.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TypeVar

C = TypeVar("C", bound="Counts")


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass
class Counts:
    """A dataclass of counters; `snapshot` copies them, `since` subtracts an earlier snapshot."""

    def _numbers(self) -> dict[str, int | float]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if f.init and _is_number(getattr(self, f.name))}

    def snapshot(self: C) -> C:
        """A copy of the counters now (other fields get their defaults)."""
        return type(self)(**self._numbers())

    def since(self: C, before: C) -> C:
        """What was counted after `before` was taken."""
        earlier = before._numbers()
        return type(self)(**{name: value - earlier[name] for name, value in self._numbers().items()})


@dataclass
class ModelCosts(Counts):
    """What the model cost: calls sent, prompt tokens read, tokens written, forward passes, wall seconds."""

    model_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    forward_passes: int = 0
    seconds: float = 0.0


@dataclass
class QueryCounts(Counts):
    """Queries sent to a store, their wall time and the rows they returned."""

    queries: int = 0
    seconds: float = 0.0
    rows: int = 0
