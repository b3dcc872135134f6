"""DoG's triplet-level beam (§2.4): every chain advances by one triplet, the k best chains survive.

One round, `ChainBeam.advance`: each live chain writes greedy free text
under its step's `DogGuide`.  A chain whose text ends (answer line, EOS, a
loop, its token budget, or a constraint that allows nothing) is finished;
when it ended without an answer line and ``force_conclusion`` is on, "
Therefore, the answer is" is appended and the model completes that line.
A chain that opens a triplet is searched under its trie (`decoders.search_triplets`
returns the k best triplets), and each returned graph triplet (its best
reading) extends the chain.  The k best extensions by chain score are kept
and only they get a KV state: a greedy child takes its parent's (already
extended), the others a fork of the parent fed the triplet, or, with local
visibility (§5.2), a fresh prefill of the re-read prompt (`reprompt`).

That is the paper's loop.  What the workbench layers on it comes in as
pieces (`kgqa_core.decoding.step_filters`): ``filters``, applied in order to
each step's offer (the paper preset passes none), and ``walk_out``: a chain
that writes its answer line while it stands fewer hops from the topic
entity than the question's reading says is taken back to the end of its
last sentence before the answer, its next step number is written (" 3.")
and it decodes on, offered the triplets leading on from its farthest
entities (`frontier_triplets`); at most that many times per chain, the text
taken back kept for the trace (`SearchedChain.taken_back`,
`FinishedChain.taken_back`).

``conclude`` (`ConcludeAtDepth`): a chain whose path from the topic entity
has walked a sure reading's whole plan is finished there with the
forced answer line (stop ``"depth"``) instead of decoding more free text.

A round comes back as a `BeamRound` of typed records (finished chains,
searched chains with their extensions, what was kept and dropped), so the
method builds its trace steps from it without knowing how the beam ran,
and the beam knows nothing of traces or costs.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from .. import progress
from ..graph.readings import triplet_of
from ..models.interface import Sequence as SequenceState
from .beam import TripletHypothesis, TripletSearchResult
from .constraint import ConstraintError
from .decoders import conclusion_written, force_conclusion, free_text, search_triplets
from .dog_guide import DogGuides
from .free_text import FreeText, default_stop, needs_conclusion, tokens_before
from .server_steps import OPENER
from .prompt import parse_answers
from .query_subgraph import QueryCentricSubgraph
from .step_filters import ConcludeAtDepth, Narrowed, StepFilter, StepFilters, StepView, WalkOut
from .step_offers import chain_depth
from .triplet_trie import TripletTrie


@dataclass
class BeamCandidate:
    """One chain of the triplet-level beam: its own KV state, G_q, triplets and text."""

    state: SequenceState | None  # None until the chain survives a round (`ChainBeam` attaches it)
    subgraph: QueryCentricSubgraph
    chain: list[int] = field(default_factory=list)  # triplet ids
    triplet_scores: list[float] = field(default_factory=list)
    text: str = ""  # everything generated after the prompt
    generated_ids: list[int] = field(default_factory=list)
    finished: bool = False
    stop: str = ""
    beam_id: int = 0
    parent_id: int | None = None
    answer_text: str = ""
    walked_on: int = 0  # answer lines taken back so far (min_depth)

    @property
    def score(self) -> float:
        """Chain score: the sum of its triplet scores (§2.4)."""
        return float(sum(self.triplet_scores))


def select_chains(candidates: Sequence[BeamCandidate], k: int) -> tuple[list[BeamCandidate], list[BeamCandidate]]:
    """The k best chains by chain score (kept) and the rest (dropped); ties keep the earlier one."""
    order = sorted(range(len(candidates)), key=lambda i: (-candidates[i].score, i))
    kept = [candidates[i] for i in order[:k]]
    dropped = [candidates[i] for i in order[k:]]
    return kept, dropped


def chain_entities(graph: Any, beam: BeamCandidate, triplets: Sequence[Any] | None = None) -> list[str]:
    """The entities a chain's triplets name, in the order written, but the question's own: what an answer line
    may name beyond the path's end (`ChainBeam._reached`, `ChainBeam._written`)."""
    topics = set(beam.subgraph.topics)
    if triplets is None:
        triplets = graph.triplets_by_ids(list(beam.chain))
    return list(dict.fromkeys(e for t in triplets for e in (t.head, t.tail) if e not in topics))


@dataclass
class Extension:
    """A chain the round proposed: ``parent`` plus one triplet the search returned."""

    parent: BeamCandidate
    hypothesis: TripletHypothesis
    chain: BeamCandidate
    kept: bool = False


@dataclass
class SearchedChain:
    """A chain that opened a triplet this round, the search under its trie, and the extensions it gave."""

    chain: BeamCandidate  # as it was before the triplet
    free_text: str  # the text it wrote before opening
    opener: str
    trie: TripletTrie
    search: TripletSearchResult
    started: float  # time.perf_counter() when the chain's step began
    extensions: list[Extension]  # best first, one per graph triplet
    taken_back: "TakenBack | None" = None  # an early answer line this step replaced (min_depth)
    narrowed: "Narrowed | None" = None  # the step was offered only triplets leading on (min_depth)
    filter_notes: list[str] = field(default_factory=list)  # what the step filters left out, in plain words


@dataclass
class ConstraintFailure:
    """The trie allowed no token: the chain was stopped (there is no unconstrained fallback)."""

    message: str
    free_text: str  # the text the chain wrote before opening


@dataclass
class FinishedChain:
    """A chain that ended this round."""

    chain: BeamCandidate
    free_text: str  # its last stretch of text, a forced conclusion included
    # "eos", "stop", "repeat", "length", "cap" (free_text_cap), "limit" (would open past max_steps) or "constraint"
    stop: str
    forced_conclusion: bool = False
    failure: ConstraintFailure | None = None
    taken_back: "TakenBack | None" = None  # asked to go on, the chain answered again
    positions: list = field(default_factory=list)  # the answer item's trie positions (`decoders.answer_among`)
    dropped: str = ""  # a run the model wrote over and over before it ended, cut from its text (`free_text.drop_run`)
    appended: str = ""  # what a forced conclusion wrote before the model's tokens ("Therefore, the answer is *")
    chosen_among: bool = False  # the model left the forced line empty: its item was chosen among the chain's entities
    unread: int = 0  # the answer item's last tokens, written by the names' trie without a model pass


@dataclass
class TakenBack:
    """An answer line written too few hops from the topic entity, taken back so the chain goes on."""

    text: str  # the model's text that was dropped (the answer line and what followed)
    depth: int  # hops from the topic entity the chain stood at
    min_depth: int  # hops the question names
    written: str  # what was written instead before the model went on (" 3.")
    offered: int = 0  # triplets the next step was restricted to (those leading on from the farthest entities)
    of: int = 0  # triplets the step would have offered


@dataclass
class BeamRound:
    """One round of the chain beam: what finished, what was searched, what was kept and dropped.

    ``error`` is set only with ``strict``: the constraint failure the caller
    raises once it has recorded the chains that finished before it.
    """

    number: int
    finished: list[FinishedChain] = field(default_factory=list)
    searched: list[SearchedChain] = field(default_factory=list)
    kept: list[BeamCandidate] = field(default_factory=list)  # best first: the next round's chains
    error: ConstraintError | None = None

    @property
    def extensions(self) -> list[Extension]:
        return [e for s in self.searched for e in s.extensions]

    @property
    def dropped(self) -> list[BeamCandidate]:
        return [e.chain for e in self.extensions if not e.kept]


Reprompt = Callable[[BeamCandidate], SequenceState]


class ChainBeam:
    """The triplet-level beam over one prompt: `start` the first chain, then `advance` until no chain is left."""

    def __init__(self, model: Any, graph: Any, guides: DogGuides, width: int, max_new_tokens: int,
                 force_conclusion: bool = True, strict: bool = False, reprompt: Reprompt | None = None,
                 filters: Sequence[StepFilter] = (), walk_out: WalkOut | None = None,
                 free_text_cap: int = 0, conclude: ConcludeAtDepth | None = None,
                 step_numbers: bool = True, meet_topics: bool = False) -> None:
        self.model = model
        self.graph = graph  # the prompt's context graph
        self.guides = guides
        self.width = width
        self.max_new_tokens = max_new_tokens
        self.force_conclusion = force_conclusion
        self.strict = strict
        self.reprompt = reprompt  # local visibility: a kept chain's state from its re-read prompt
        self.filters = StepFilters(filters)  # what a step may offer beyond the paper (empty: the paper's loop)
        self.walk_out = walk_out  # take back answer lines written short of the reading's depth (None: never)
        self.free_text_cap = free_text_cap  # tokens of free text a step may write before its answer line (0: no cap)
        self.conclude = conclude  # a chain whose path completes a sure reading's plan answers there (None: never)
        self.step_numbers = step_numbers  # the prompt's chains number their steps (False: bare examples)
        self.meet_topics = meet_topics  # an empty answer line's item: among the entities meeting most topics
        self.rounds = 0
        self._next_beam = 0

    def _beam_id(self) -> int:
        self._next_beam += 1
        return self._next_beam - 1

    def start(self, state: SequenceState, subgraph: QueryCentricSubgraph) -> list[BeamCandidate]:
        """The first chain: the prompt's state and the topic entities' G_q."""
        return [BeamCandidate(state=state, subgraph=subgraph, beam_id=self._beam_id())]

    def advance(self, beams: Sequence[BeamCandidate]) -> BeamRound:
        """Advance every chain by one triplet (or to its end) and keep the `width` best."""
        self.rounds += 1
        out = BeamRound(self.rounds)
        for beam in beams:
            started = time.perf_counter()
            budget = self.max_new_tokens - len(beam.generated_ids)
            if budget <= 0:
                out.finished.append(self._finish(beam, "", "length"))
                continue
            if self.conclude is not None and self.conclude.reached(self.graph, beam.chain, beam.subgraph.topics):
                out.finished.append(self._finish(beam, "", "depth"))
                continue
            with progress.phase(progress.SUBGRAPH):  # the step's offer: G_q less the chain, narrowed
                view = self._view(beam)
                full, filter_notes = self.filters.apply(view, self.guides.for_chain(beam.subgraph.triplet_ids,
                                                                                     beam.chain))
                guide, narrowed = self._narrow(beam, full)
            start = len(beam.state.ids)
            free = self._free_text(beam.state, budget, guide)
            taken_back = None
            if guide.may_open and self._answers_too_early(beam, free):
                free, taken_back, guide = self._walk_on(beam, full, free, start, budget)
            beam.generated_ids.extend(free.ids)
            if free.stop != "open":
                beam.text += free.text
                finished = self._finish(beam, free.text, free.stop)
                finished.taken_back, finished.dropped = taken_back, free.dropped
                out.finished.append(finished)
                continue
            beam.text += free.text + "<"
            inside = guide.open(free.opener)  # the guide's state after the opener: the trie's root
            triplet_guide = guide.triplet_guide(inside.opener)
            try:
                result = search_triplets(self.model, beam.state, triplet_guide, self.width)
            except ConstraintError as exc:
                if self.strict:
                    out.error = exc
                    return out
                beam.text += free.text
                finished = self._finish(beam, "", "constraint")
                finished.failure = ConstraintFailure(str(exc), free.text)
                out.finished.append(finished)
                continue
            with progress.phase(progress.SUBGRAPH):  # each returned triplet's chain and its grown G_q
                extended = self._extensions(beam, result)
            out.searched.append(SearchedChain(beam, free.text, free.opener, triplet_guide.trie, result, started,
                                              extended, taken_back, narrowed if taken_back is None else None,
                                              filter_notes))
        extensions = out.extensions
        if extensions:
            kept, _ = select_chains([e.chain for e in extensions], self.width)
            kept_ids = {id(c) for c in kept}
            for e in extensions:
                e.kept = id(e.chain) in kept_ids
            with progress.phase(progress.FORCED_RUNS):  # a kept fork is fed its triplet's tokens
                self._attach_states(extensions)
            out.kept = kept
        return out

    def _free_text(self, state: SequenceState, budget: int, guide: Any) -> FreeText:
        """The step's free text, cut at `free_text_cap` tokens unless it is writing its answer line.

        A stretch that reaches the cap without opening a triplet or finishing
        ends with stop ``"cap"`` (the chain then concludes, as after a loop or
        the budget; the trace notes the cut).  A stretch that has started its
        answer line ("... the answer is") at the cap goes on to the line's end
        under the chain's budget: a list answer is never cut.  The cap is a
        token count passed to the decoder, so a model server's steps
        (`server_steps`) cut at the same token.
        """
        cap = self.free_text_cap
        if cap <= 0 or cap >= budget:
            return free_text(self.model, state, budget, guide.detector, allow_open=guide.may_open)
        free = free_text(self.model, state, cap, guide.detector, allow_open=guide.may_open)
        if free.stop != "length":
            return free
        if not _ANSWER_PHRASE.search(free.text):
            free.stop = "cap"
            return free
        head = free.text

        def stop(text: str) -> int | None:  # the stop rules over the whole stretch, cut in the new part
            cut = default_stop(head + text)
            return None if cut is None else max(cut - len(head), 0)

        rest = free_text(self.model, state, budget - len(free.ids), guide.detector, allow_open=guide.may_open,
                         stop=stop)
        return FreeText(head + rest.text, list(free.ids) + list(rest.ids), rest.stop, rest.opener,
                        list(rest.opener_ids), free.forward_passes + rest.forward_passes, dropped=rest.dropped)

    def _view(self, beam: BeamCandidate) -> StepView:
        return StepView(self.graph, beam.chain, beam.subgraph.topics, self.guides)

    # ------------------------------------------------------------ depth
    def _answers_too_early(self, beam: BeamCandidate, free: Any) -> bool:
        """An answer line written fewer hops from the topic entity than the reading says (`WalkOut.too_early`)."""
        # "length"/"repeat": an answer line that ran on ("* Forever Amber, Forever Amber, ...") is taken back too
        if self.walk_out is None:
            return False
        return self.walk_out.too_early(self._view(beam), beam.walked_on, free.stop, bool(parse_answers(free.text)))

    def _narrow(self, beam: BeamCandidate, guide: Any, taken_back: bool = False) -> tuple[Any, Narrowed | None]:
        """The step's guide, narrowed to the triplets leading on when the chain must still go out (`WalkOut`)."""
        if self.walk_out is None:
            return guide, None
        return self.walk_out.narrow(self._view(beam), guide, beam.walked_on, taken_back)

    def _walk_on(self, beam: BeamCandidate, guide: Any, free: Any, start: int,
                 budget: int) -> tuple[Any, TakenBack, Any]:
        """Take the answer line back to the last sentence before it, write the next step number, decode on.

        The step's guide is narrowed to the triplets leading on from the
        chain's farthest entities (`frontier_triplets`; unchanged when there
        are none).  Returns the step's free text as one (kept text, the
        number, the model's new text), what was taken back, and the guide.
        The state is cut by `rewind` (every backend keeps the first n ids),
        so nothing is read twice but the few number tokens.  Without step
        numbers (bare examples) a number would be text the examples never
        show (the 135M went on "3.2.2.2..."), so the next triplet's ``<`` is
        written instead and the step's free text ends there (stop ``"open"``).
        """
        model, state = self.model, beam.state
        kept = tokens_before(model, free.ids, answer_sentence_start(free.text))  # free tokens before the cut
        kept = min(kept, len(state.ids) - start)
        kept_text = model.decode(free.ids[:kept])
        # no logits kept: the step below replaces them (and a model server's sequence holds none to read: reading
        # them there failed the question, "no full next-token distribution")
        model.rewind(state, start + kept, None)
        space = "" if kept_text.endswith((" ", "\n")) or not kept_text else " "
        written = space + (f"{len(beam.chain) + 1}." if self.step_numbers else OPENER)
        written_ids = model.encode(written)
        model.step(state, written_ids)
        beam.walked_on += 1
        assert self.walk_out is not None  # only a WalkOut takes an answer back
        taken = TakenBack(free.text[len(kept_text):], chain_depth(self.graph, beam.chain, beam.subgraph.topics),
                          self.walk_out.min_depth, written, of=len(guide.allowed_ids))
        guide, narrowed = self._narrow(beam, guide, taken_back=True)
        if narrowed is not None:
            taken.offered, taken.of = narrowed.offered, narrowed.of
        if not self.step_numbers:  # the opener written: the triplet search goes on from it
            return FreeText(kept_text + written[:-1], list(free.ids[:kept]) + list(written_ids), "open", written,
                            list(written_ids)), taken, guide
        rest = self._free_text(state, max(budget - kept - len(written_ids), 1), guide)
        rest.text = kept_text + written + rest.text
        rest.ids = list(free.ids[:kept]) + list(written_ids) + list(rest.ids)
        return rest, taken, guide

    # ------------------------------------------------------------ chains
    def _extensions(self, parent: BeamCandidate, result: TripletSearchResult) -> list[Extension]:
        """One extension per graph triplet the search returned, best reading first."""
        seen: set[int] = set()
        out = []
        for hyp in result.hypotheses:  # best first
            tid = triplet_of(hyp.triplet_id)
            if tid not in seen:
                seen.add(tid)
                out.append(Extension(parent, hyp, self._child(parent, hyp)))
        return out

    def _child(self, parent: BeamCandidate, hyp: TripletHypothesis) -> BeamCandidate:
        """The chain `parent` + `hyp` (its KV state is attached only if it survives)."""
        sub = parent.subgraph.copy()
        triplet = self.graph.triplet(triplet_of(hyp.triplet_id))
        sub.expand(triplet)
        return BeamCandidate(
            state=None,
            subgraph=sub,
            chain=parent.chain + [triplet.id],
            triplet_scores=parent.triplet_scores + [hyp.score],
            text=parent.text + self.model.decode(hyp.token_ids),
            generated_ids=parent.generated_ids + list(hyp.token_ids),
            parent_id=parent.beam_id,
            walked_on=parent.walked_on,
        )

    def _attach_states(self, extensions: list[Extension]) -> None:
        """Give each kept chain its beam id and KV state: the parent's (greedy), a fork fed the triplet, or a re-read prompt."""
        by_parent: dict[int, list[Extension]] = {}
        for e in extensions:
            if e.kept:
                by_parent.setdefault(id(e.parent), []).append(e)
        for group in by_parent.values():
            for i, e in enumerate(group):
                e.chain.beam_id = self._beam_id()
                if self.reprompt is not None:
                    e.chain.state = self.reprompt(e.chain)
                elif e.hypothesis.state is not None:
                    e.chain.state = e.hypothesis.state  # greedy: the parent's state, already extended
                else:
                    state = e.parent.state if i == len(group) - 1 else self.model.fork(e.parent.state)
                    self.model.step(state, list(e.hypothesis.token_ids))
                    e.chain.state = state

    def _reached(self, beam: BeamCandidate) -> list[str]:
        """The names the answer line's item is chosen among at a sure reading's depth (`decoders.answer_among`):
        the entities the chain's path reaches at its last hop, and every entity the chain's triplets name but the
        question's own; empty when there is no path to follow.

        Why the chain's other entities: a sure reading can still be a hop too long ("the films written by X
        starred which actors" read as written_by, starred_actors and back to the actors' other films), and the
        model, writing freely, answered with the actor its chain had written one hop before; held to the path's
        last hop it could only name a film.  An answer the chain wrote keeps its place (`chain_answers_first`).
        """
        from ..answers.completion import chain_path, reach

        triplets = self.graph.triplets_by_ids(list(beam.chain))
        path = chain_path(triplets, beam.subgraph.topics) if triplets else None
        if path is None or not path[1]:
            return []
        levels, _ = reach(self.graph, path[0], path[1])
        last = levels[-1] if levels else []
        # the chain's own entities first: never beyond `answer_among`'s cap
        return list(dict.fromkeys([*chain_entities(self.graph, beam, triplets), *last]))

    def _written(self, beam: BeamCandidate) -> list[str]:
        """The entities the chain's triplets name but the question's own: what an answer line that names nothing
        chooses its item among (`decoders.force_conclusion`'s ``fallback``).

        With `meet_topics` and two or more question entities, only those with a triplet to the most of them, as
        `answers.meeting` ranks the answers ("who plays the oboe in the Oslo Philharmonic": the members who play
        it, not the city the chain passed through).
        """
        from ..answers.meeting import linked_topics

        topics = list(dict.fromkeys(beam.subgraph.topics))
        names = chain_entities(self.graph, beam)
        if self.meet_topics and len(topics) >= 2 and names:
            linked = linked_topics(self.graph, names, topics)
            best = max(len(v) for v in linked.values())
            if best:
                names = [e for e in names if len(linked.get(e, ())) == best]
        return names

    def _finish(self, beam: BeamCandidate, last_text: str, stop: str) -> FinishedChain:
        """End `beam`; a text that ended without an answer line gets the forced conclusion (when on)."""
        beam.finished = True
        beam.stop = stop
        forced, positions, appended, chosen_among, unread = False, [], "", False, 0
        if self.force_conclusion and needs_conclusion(stop, last_text) and not parse_answers(beam.text):
            # at a sure reading's depth the graph adds the other entities the path reaches: one item is enough
            first_only = stop == "depth"
            reached = self._reached(beam) if first_only and self.conclude.among_reached else ()
            conclusion = force_conclusion(self.model, beam.state, first_only=first_only, reached=reached,
                                          item_marker=not self.step_numbers,
                                          fallback=() if reached else self._written(beam))
            appended = conclusion_written(first_only, reached, not self.step_numbers).strip()
            beam.generated_ids.extend(conclusion.ids)
            beam.text += conclusion.text
            last_text += conclusion.text
            forced, positions = True, conclusion.positions
            chosen_among, unread = conclusion.chosen_among, conclusion.unread
        beam.answer_text = last_text
        return FinishedChain(beam, last_text, stop, forced, positions=positions, appended=appended,
                             chosen_among=chosen_among, unread=unread)


_ANSWER_PHRASE = re.compile(r"(therefore|so|thus|hence)?[ ,]*(the )?answer (is|are)", re.IGNORECASE)


def answer_sentence_start(text: str) -> int:
    """Where the sentence holding the first answer phrase starts in `text` (after the previous '.', '!', '?' or newline)."""
    m = _ANSWER_PHRASE.search(text)
    end = m.start() if m else len(text)
    cut = max(text.rfind(ch, 0, end) for ch in (".", "!", "?", "\n"))
    return cut + 1 if cut >= 0 else 0
