"""DoG's constraint for one chain step as one guide, in outlines' shape (§2.3, Eq. 2).

A chain step is free text until the model opens a triplet, then exactly one
triplet of the chain's G_q.  `DogGuide` is that state machine: its state is
`InFreeText` or `InTriplet` (at a trie node), and `instruction` answers
which tokens may come next -- `Generate` (any token in free text, a set
inside a triplet), `Write` (a forced run inside a triplet) or `Done` -- and
`advance` moves the state by one token.  The free-text decoder and the
triplet search read the two halves (`detector`, `triplet_guide`); the chain
beam (`chain_beam`) makes one guide per chain per step with `DogGuides`.

`DogGuides` also keeps the tries: one per (allowed triplets, opener), built
from the triplets' readings (`graph.readings`) and cached, with each build's
time recorded for the trace.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Sequence

from .. import progress
from ..graph.readings import readings
from .constraint import Done, Generate, Instruction, OpeningDetector, TripletGuide
from .triplet_trie import TripletTokenCache, TripletTrie


@dataclass(frozen=True)
class InFreeText:
    """Outside a triplet; ``may_open`` False once the chain holds its last triplet (or G_q offers none)."""

    may_open: bool


@dataclass(frozen=True)
class InTriplet:
    """Inside a triplet opened by ``opener`` (the committed text up to ``<``), at trie node ``node``."""

    opener: str
    node: int = TripletTrie.ROOT


GuideState = InFreeText | InTriplet


class DogGuide:
    """Which tokens may come next in one step of a DoG chain: free text, then one triplet of its trie."""

    def __init__(self, detector: OpeningDetector, tries: "DogGuides", allowed_ids: Sequence[int], may_open: bool) -> None:
        self.detector = detector
        self.allowed_ids = list(allowed_ids)  # the triplets this step may write
        self.may_open = may_open
        self._tries = tries
        self._triplet_guides: dict[str, TripletGuide] = {}

    @property
    def initial_state(self) -> InFreeText:
        return InFreeText(self.may_open)

    def triplet_guide(self, opener: str) -> TripletGuide:
        """The trie constraint after `opener` (the trie is tokenised in that context, built once)."""
        guide = self._triplet_guides.get(opener)
        if guide is None:
            guide = self._triplet_guides[opener] = TripletGuide(self._tries.trie(self.allowed_ids, opener))
        return guide

    def instruction(self, state: GuideState) -> Instruction:
        """What may follow `state`: in free text any token (no opening one once the chain is full); in a triplet the trie's answer."""
        if isinstance(state, InFreeText):
            return Generate(None, forbidden=None if state.may_open else self.detector.ids)
        return self.triplet_guide(state.opener).instruction(state.node)

    def advance(self, state: GuideState, token_id: int) -> GuideState:
        """The state after `token_id`: an opening token enters the triplet; a triplet token moves down the trie."""
        if isinstance(state, InFreeText):
            if state.may_open and self.detector.is_opening(token_id):
                return self.open(self.detector.opener_text(token_id))
            return state
        return InTriplet(state.opener, self.triplet_guide(state.opener).advance(state.node, token_id))

    def open(self, opener: str) -> InTriplet:
        """The state right after the model committed `opener` (``" <"``, ``"<"`` ...)."""
        if not self.may_open:
            raise ValueError("this chain may not open another triplet")
        return InTriplet(opener)

    def is_final(self, state: GuideState) -> bool:
        """A triplet that is complete and cannot continue ends the constrained part of the step."""
        return isinstance(state, InTriplet) and isinstance(self.triplet_guide(state.opener).instruction(state.node), Done)


@dataclass
class DogGuides:
    """Makes each chain step's `DogGuide` and keeps the tries they share (one per allowed set and opener)."""

    model: Any  # its tokenizer tokenises the readings
    graph: Any  # the prompt's context graph: G_q's triplets come from it
    max_steps: int
    repeat_triplets: bool = False
    reverse_readings: bool = True
    build_seconds: list[float] = field(default_factory=list)  # one entry per trie built
    max_cached: int = 64

    def __post_init__(self) -> None:
        self.detector = OpeningDetector.for_tokenizer(self.model.tokenizer)
        self._tokens = TripletTokenCache(self.model.tokenizer)
        self._tries: dict[tuple[str, tuple[int, ...]], TripletTrie] = {}

    def for_chain(self, subgraph_ids: Sequence[int], chain: Sequence[int]) -> DogGuide:
        """The guide of a chain's next step: its G_q, less its own triplets unless repeats are allowed."""
        ids = list(subgraph_ids)
        if not self.repeat_triplets and chain:
            used = set(chain)
            ids = [t for t in ids if t not in used]
        return DogGuide(self.detector, self, ids, may_open=len(chain) < self.max_steps and bool(ids))

    def restricted(self, guide: DogGuide, allowed_ids: Sequence[int]) -> DogGuide:
        """`guide` narrowed to `allowed_ids` (a subset of its own): a chain made to walk on from where it stands."""
        keep = set(allowed_ids)
        ids = [t for t in guide.allowed_ids if t in keep]
        return DogGuide(self.detector, self, ids, may_open=guide.may_open and bool(ids))

    def trie(self, allowed_ids: Sequence[int], opener: str) -> TripletTrie:
        key = (opener, tuple(allowed_ids))
        trie = self._tries.get(key)
        if trie is None:
            t0 = time.perf_counter()
            with progress.phase(progress.SUBGRAPH):  # a trie over the step's offer (tokenised once per question)
                triplets = self.graph.triplets_by_ids(list(allowed_ids))
                trie = TripletTrie.build(readings(triplets, self.reverse_readings), opener=opener, cache=self._tokens)
            self.build_seconds.append(time.perf_counter() - t0)
            if len(self._tries) > self.max_cached:
                self._tries.pop(next(iter(self._tries)))
            self._tries[key] = trie
        return trie

