"""Is each answer an entity the cited chain reached?

The faithfulness report checks the triplets a method cites; this checks the
step after them: an answer is *grounded* when it is an entity of an in-graph
triplet of a cited chain.  The report tells apart the best chain (DoG's
top beam) from the other cited chains (RoK's paths, DoG's other beams); an
answer only somewhere in the graph, or not in the graph at all, is flagged.  Methods that cite no chain (Direct, or CoT
when the model wrote no triplet) can only be checked for being a graph
entity.

Being on a chain is not yet being its answer: a chain that goes from a
country to a player to the player's club reached the club, and an answer
naming the player (an entity the chain passed through) is on the chain but
not what it reached.  Each verdict therefore also says whether the answer is
at the *end* of a cited chain (`chain_ends`: the entities farthest from the
topic entities along the chain), and whether the method added it from the
graph along the chain's relations (`Answer.completed_from_graph`) rather than
the chain reaching it.

Pure functions over trace values and an optional graph, so the UI, the CLI
and the evaluation read the same verdict.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from .schema import Answer, ChainTriplet

ON_CHAIN = "on_chain"          # an entity of the best chain's in-graph triplets
OTHER_CHAIN = "other_chain"    # reached only by another cited chain
IN_GRAPH = "in_graph"          # a graph entity no cited chain reached
NOT_IN_GRAPH = "not_in_graph"  # not an entity of the graph

STATUS_TEXT = {
    ON_CHAIN: "reached by the chain",
    OTHER_CHAIN: "reached only by another cited chain",
    IN_GRAPH: "in the graph, but no cited chain reaches it",
    NOT_IN_GRAPH: "not an entity of the graph",
}


def _key(name: str) -> str:
    text = unicodedata.normalize("NFKC", str(name)).casefold().strip()
    return re.sub(r"\s+", " ", text)


@dataclass(frozen=True)
class AnswerGrounding:
    """The verdict on one answer."""

    answer: str
    entity: str | None
    status: str
    in_graph: bool
    at_end: bool = False     # where a cited chain ends (what it reached), not an entity it passed through
    completed: bool = False  # added from the graph along the chain's relations, not reached by the chain itself

    @property
    def grounded(self) -> bool:
        """Reached by a cited chain (the best one, or another the method cites as evidence)."""
        return self.status in (ON_CHAIN, OTHER_CHAIN)

    @property
    def explanation(self) -> str:
        text = STATUS_TEXT[self.status]
        if self.grounded and not self.at_end:
            text += ", but it is an entity the chain passed through, not where it ends"
        elif self.grounded:
            text += " (where it ends)"
        if self.completed and not self.grounded:
            text += "; added from the graph along the chain's relations (answer completion)"
        return text


@dataclass(frozen=True)
class GroundingReport:
    """The verdicts on all answers of a run."""

    answers: list[AnswerGrounding] = field(default_factory=list)
    has_chain: bool = False

    @property
    def total(self) -> int:
        return len(self.answers)

    @property
    def on_chain(self) -> int:
        """Answers reached by any cited chain."""
        return sum(a.grounded for a in self.answers)

    @property
    def in_graph(self) -> int:
        return sum(a.in_graph for a in self.answers)

    @property
    def on_best_chain(self) -> int:
        return sum(a.status == ON_CHAIN for a in self.answers)

    @property
    def all_grounded(self) -> bool:
        """Every answer reached by a cited chain (False without answers or without a chain)."""
        return self.has_chain and self.total > 0 and self.on_chain == self.total

    @property
    def off_chain(self) -> list[AnswerGrounding]:
        return [a for a in self.answers if not a.grounded]

    @property
    def at_end(self) -> int:
        """Answers that are where a cited chain ends (what the chain reached)."""
        return sum(a.grounded and a.at_end for a in self.answers)

    @property
    def passed_through(self) -> list[AnswerGrounding]:
        """Answers on a chain but not at its end (the chain went on past them, or started there)."""
        return [a for a in self.answers if a.grounded and not a.at_end]

    @property
    def not_in_graph(self) -> list[AnswerGrounding]:
        return [a for a in self.answers if not a.in_graph]

    @property
    def completed(self) -> list[AnswerGrounding]:
        """Off-chain answers the method added from the graph along the chain's relations."""
        return [a for a in self.answers if a.completed and not a.grounded]

    @property
    def all_at_end(self) -> bool:
        """Every answer is what a cited chain reached (False without answers or without a chain)."""
        return self.has_chain and self.total > 0 and self.at_end == self.total


def chain_ends(chain: Iterable[ChainTriplet], topic_entities: Iterable[str] = ()) -> set[str]:
    """The entities a chain reached: those farthest from the topic entities along its in-graph triplets.

    Depth counts triplets from a topic entity (a chain that touches none starts at its
    first head); siblings a chain lists at one depth ("film A, film B") are all ends.
    A chain whose every triplet is ill reaches nothing.
    """
    depth: dict[str, int] = {}
    for t in topic_entities:
        depth[t] = 0
        depth[t.strip()] = 0
    for ct in chain:
        if not ct.in_graph:
            continue
        h, t = ct.head.strip(), ct.tail.strip()
        if h not in depth and t not in depth:
            depth[h] = 0 if not depth else max(depth.values())
        if h in depth and t not in depth:
            depth[t] = depth[h] + 1
        elif t in depth and h not in depth:
            depth[h] = depth[t] + 1
    reached = {e: d for e, d in depth.items() if d > 0}
    if not reached:
        return set()
    far = max(reached.values())
    return {e for e, d in reached.items() if d == far}


def chain_entities(chain: Iterable[ChainTriplet]) -> set[str]:
    """Heads and tails of the chain's triplets that are in the graph (an ill triplet reaches nothing)."""
    out: set[str] = set()
    for ct in chain:
        if ct.in_graph:
            out.update((ct.head, ct.tail, ct.head.strip(), ct.tail.strip()))
    return out


def ground_answers(
    answers: Sequence[Answer],
    chains: Sequence[Sequence[ChainTriplet]],
    graph: Any | None = None,
    topic_entities: Iterable[str] = (),
) -> GroundingReport:
    """Check each answer against the best chain (``chains[0]``), the other chains and the graph.

    ``graph`` (anything with ``has_entity``) decides graph membership; without
    it the answer's own ``in_graph`` flag, recorded when the run linked it,
    is used.  Names are compared exactly first, then ignoring case and
    repeated white space (a model writes "the wrecking crew").
    """
    best = chain_entities(chains[0]) if chains else set()
    others: set[str] = set()
    for chain in chains[1:]:
        others |= chain_entities(chain)
    best_keys = {_key(e) for e in best}
    other_keys = {_key(e) for e in others}
    has_chain = bool(best)
    topics = list(topic_entities)
    ends: set[str] = set()
    for chain in chains:
        ends |= chain_ends(chain, topics)
    end_keys = {_key(e) for e in ends}
    out: list[AnswerGrounding] = []
    for ans in answers:
        names = [n for n in (ans.entity, ans.text) if n]
        if not names:
            continue
        if graph is not None:
            in_graph = any(graph.has_entity(n) for n in names)
        else:
            in_graph = bool(ans.in_graph)
        if any(n in best or _key(n) in best_keys for n in names):
            status = ON_CHAIN
        elif any(n in others or _key(n) in other_keys for n in names):
            status = OTHER_CHAIN
        elif in_graph:
            status = IN_GRAPH
        else:
            status = NOT_IN_GRAPH
        at_end = any(n.strip() in ends or _key(n) in end_keys for n in names)
        out.append(AnswerGrounding(answer=ans.text, entity=ans.entity, status=status, in_graph=in_graph,
                                   at_end=at_end, completed=bool(ans.completed_from_graph)))
    return GroundingReport(answers=out, has_chain=has_chain)
