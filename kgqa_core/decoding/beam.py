"""Decoding one triplet under the trie: greedy, or a token-level beam search (DoG §2.3-2.4).

Token level (inside a triplet).  With width 1 this is greedy constrained
decoding: at each position the allowed token with the highest logit wins.
Positions where the trie allows a single token need no decision, so those
tokens are fed to the model together with the next decision point in one
forward pass ("jump-forward"); their probabilities still come out of that
pass, so scores and the token view are exact, and a triplet never costs more
forward passes than the same tokens would in unconstrained decoding.  With
width w > 1, `TripletBeamSearch` runs a token-level beam search over the
trie (the paper's choice: it returns several triplets) on forks of the
prompt's sequence advanced together, and returns the w best complete triplets.
The chains of the triplet-level beam are `chain_beam`'s.

Scores.  A triplet's score is the sum of its tokens' log-probabilities under
the model (Eq. 3), as in transformers' beam search, where the constraint
masks the log-softmax of the unconstrained logits.  Candidates the search
did not complete get an upper bound instead: the log-probability of the
prefix they share with a decoded path plus that of their first diverging
token (log-probabilities only decrease as tokens are added).

A triplet that ends where a longer one continues (names containing " >")
ends when the model's unconstrained choice would leave the trie there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import torch

from ..models.interface import Sequence
from ..trace.schema import TokenOption, TokenPosition
from .constraint import Done, TripletGuide, Write


@dataclass
class Position:
    """One decoded position inside a triplet: the node, the token, allowed log-probs."""

    node: int
    token: int
    logprob: float
    allowed_logprobs: dict[int, float]  # every allowed token -> its model log-prob


@dataclass
class TripletHypothesis:
    """A complete triplet decoded under the trie, with its Eq. 3 score."""

    triplet_ids: tuple[int, ...]
    token_ids: list[int]
    positions: list[Position]
    score: float
    state: Sequence | None = None  # the state after the triplet (greedy path only)
    note: str = ""
    unread: int = 0  # trailing tokens not fed to the model (``closes_text``): the trie's, after the last choice

    @property
    def triplet_id(self) -> int:
        return self.triplet_ids[0]


@dataclass
class CandidateScore:
    triplet_id: int
    score: float
    exact: bool


@dataclass
class TripletSearchResult:
    """What one triplet step's search found: the triplets it decoded and a score for every triplet of the trie."""

    hypotheses: list[TripletHypothesis]  # best first
    candidates: dict[int, CandidateScore]  # every triplet of the trie
    forward_passes: int = 0
    strategy: str = ""  # over a model server: "score" or "walk" (decoding.server_steps); in process ""


def token_view(model: Any, positions: Sequence[Position], cap: int = 20) -> list[TokenPosition]:
    """The token-level view of a decoded triplet: allowed tokens and their probabilities."""
    out = []
    for p in positions:
        ranked = sorted(p.allowed_logprobs.items(), key=lambda kv: -kv[1])[:cap]
        out.append(
            TokenPosition(
                chosen=model.token_text(p.token),
                chosen_id=int(p.token),
                chosen_prob=float(torch.tensor(p.logprob).exp()),
                allowed=[
                    TokenOption(token=model.token_text(t), token_id=int(t), prob=float(torch.tensor(lp).exp()))
                    for t, lp in ranked
                ],
                n_allowed=len(p.allowed_logprobs),
            )
        )
    return out


def candidate_scores(
    guide: TripletGuide, decoded: Sequence[TripletHypothesis]
) -> dict[int, CandidateScore]:
    """Exact scores of decoded triplets, upper bounds for every other triplet of the trie."""
    trie = guide.trie
    out: dict[int, CandidateScore] = {}
    for hyp in decoded:
        for tid in hyp.triplet_ids:
            out[tid] = CandidateScore(tid, hyp.score, True)
    for hyp in decoded:
        prefix = 0.0
        for p in hyp.positions:
            for tid in trie.triplets_at(p.node):  # complete here, before this token: exact
                if tid not in out or not out[tid].exact:
                    out[tid] = CandidateScore(tid, prefix, True)
            for tok, lp in p.allowed_logprobs.items():
                if tok == p.token:
                    continue
                child = trie.advance(p.node, tok)
                bound = prefix + lp
                for tid in trie.triplets_under(child):
                    old = out.get(tid)
                    if old is None or (not old.exact and bound < old.score):
                        out[tid] = CandidateScore(tid, bound, False)
            prefix += p.logprob
    for tid in trie.sequences:  # not reached by any decoded path (cannot happen after one token)
        out.setdefault(tid, CandidateScore(tid, float("-inf"), False))
    return out


def _allowed_logprobs(row: torch.Tensor, allowed: torch.Tensor) -> dict[int, float]:
    return dict(zip(allowed.tolist(), row[allowed].tolist()))


def greedy_triplet(model: Any, state: Sequence, guide: TripletGuide, closes_text: bool = False) -> TripletHypothesis:
    """Greedy constrained decoding of one triplet; `state` is extended in place.

    The guide says what comes next: `Write` (a forced run: fed to the model
    together with the next decision, one pass, "jump-forward"), `Generate`
    (a choice among the allowed tokens) or `Done`.

    ``closes_text``: nothing is decoded after this sequence (the answer line's
    item, `decoders.answer_among`), so its last choice and the trie's run
    after it are not fed to the model: once a name is the only one left, the
    rest of it is the graph's text, and no pass of the model can change it.
    All of them are in ``token_ids`` and none in `state`; the last choice
    keeps its position (its row was read before it) and its count, while
    the run after it has no position (no log-probability was computed for
    it) and is not counted as written (`tokens_out`, `tokens_forced`):
    ``unread`` says how many.
    """
    trie = guide.trie
    node = trie.ROOT
    rows: list[torch.Tensor] = [torch.log_softmax(state.logits, dim=-1)]
    tokens: list[int] = []
    nodes: list[int] = []
    pending: list[int] = []
    forced = 0  # tokens the trie wrote (Write), fed with the next choice: no decoding step of their own
    while True:
        instruction = guide.instruction(node)
        if isinstance(instruction, Done):
            break  # a leaf: the triplet is complete
        if isinstance(instruction, Write):
            forced += len(instruction.tokens)
            for tok in instruction.tokens:
                tokens.append(tok)
                nodes.append(node)
                pending.append(tok)
                node = guide.advance(node, tok)
            continue
        if len(rows) <= len(tokens):
            rows.extend(model.extend(state, pending))
            pending = []
        row = rows[len(tokens)]
        allowed = instruction.allowed
        if instruction.may_end and trie.advance(node, int(torch.argmax(row))) is None:
            break  # the model would leave the trie: the shorter triplet ends here
        tok = int(allowed[int(torch.argmax(row[allowed]))])
        tokens.append(tok)
        nodes.append(node)
        pending.append(tok)
        node = guide.advance(node, tok)
    unread = 0
    if pending and closes_text:
        unread = len(pending) - 1  # the first of them was chosen on a row already read
        forced -= unread
    elif pending:
        rows.extend(model.extend(state, pending))
    positions = []
    for i, (nd, tok) in enumerate(zip(nodes, tokens)):
        if i >= len(rows):
            break
        allowed = trie.allowed_tensor(nd)
        positions.append(Position(nd, tok, float(rows[i][tok]), _allowed_logprobs(rows[i], allowed)))
    model.counter.tokens_out += len(tokens) - unread
    model.counter.tokens_forced += forced
    return TripletHypothesis(
        unread=unread,
        triplet_ids=trie.triplets_at(node),
        token_ids=tokens,
        positions=positions,
        score=float(sum(p.logprob for p in positions)),
        state=state,
        note="" if len(trie.triplets_at(node)) == 1 else
        f"triplets {list(trie.triplets_at(node))} render to the same text; the first is cited",
    )


@dataclass
class _Hyp:
    node: int
    tokens: list[int]
    positions: list[Position]
    score: float


class TripletBeamSearch:
    """Token-level search for the best triplets of a trie after a prompt state.

    ``width`` 1 is greedy (and extends the state in place); larger widths run
    a beam search on forks of the state (advanced in one batch per token),
    leaving `state` as it was.
    """

    def __init__(self, model: Any, width: int = 1) -> None:
        if width < 1:
            raise ValueError("beam width must be at least 1")
        self.model = model
        self.width = width

    def search(self, state: Sequence, guide: TripletGuide, closes_text: bool = False) -> TripletSearchResult:
        """The best triplets after `state`, in process (`decoders.search_triplets` sends a model server's to `server_steps`).

        ``closes_text`` (width 1): nothing is decoded after it (`greedy_triplet`)."""
        before = self.model.counter.forward_passes
        with self.model.lock:
            if self.width == 1:
                hyps = [greedy_triplet(self.model, state, guide, closes_text)]
            else:
                hyps = self.beam_search(state, guide)
        return TripletSearchResult(hyps, candidate_scores(guide, hyps), self.model.counter.forward_passes - before)

    def beam_search(self, state: Sequence, guide: TripletGuide) -> list[TripletHypothesis]:
        """Token-level beam search: each live hypothesis is a fork of `state`, advanced together (`state` is left as it was)."""
        model, width, trie = self.model, self.width, guide.trie
        guide.allowed(trie.ROOT)  # an empty trie fails here, loudly
        live = [_Hyp(trie.ROOT, [], [], 0.0)]
        finished: list[_Hyp] = []
        seqs = [model.fork(state)]
        rows = [torch.log_softmax(state.logits, dim=-1)]
        generated = 0
        try:
            while live:
                expansions: list[tuple[float, int, int, dict[int, float]]] = []
                for i, h in enumerate(live):
                    allowed = guide.allowed(h.node)
                    row = rows[i]
                    lps = _allowed_logprobs(row, allowed)
                    top = torch.topk(row[allowed], min(width, allowed.numel()))
                    for v, j in zip(top.values.tolist(), top.indices.tolist()):
                        expansions.append((h.score + v, i, int(allowed[j]), lps))
                expansions.sort(key=lambda e: -e[0])
                new_live: list[_Hyp] = []
                parents: list[int] = []
                for score, i, tok, lps in expansions[:width]:
                    h = live[i]
                    node = trie.advance(h.node, tok)
                    nh = _Hyp(node, h.tokens + [tok], h.positions + [Position(h.node, tok, lps[tok], lps)], score)
                    if trie.is_end(node):
                        finished.append(nh)
                    if not trie.is_leaf(node):
                        new_live.append(nh)
                        parents.append(i)
                generated += len(new_live)
                finished.sort(key=lambda h: -h.score)
                if len(finished) >= width and (
                    not new_live or max(h.score for h in new_live) <= finished[width - 1].score
                ):
                    break
                live = new_live
                if not live:
                    break
                seqs = self._reassign(seqs, parents)
                rows = [r[-1] for r in model.extend_many(seqs, [[h.tokens[-1]] for h in live])]
        finally:
            for s in seqs:
                model.release(s)
        model.counter.tokens_out += generated
        finished.sort(key=lambda h: -h.score)
        return [
            TripletHypothesis(trie.triplets_at(h.node), h.tokens, h.positions, h.score)
            for h in finished[:width]
        ]

    def _reassign(self, seqs: list[Sequence], parents: list[int]) -> list[Sequence]:
        """One sequence per child: a parent's last child takes it over, the others fork it; childless parents are released."""
        last = {p: idx for idx, p in enumerate(parents)}
        out = [seqs[p] if last[p] == idx else self.model.fork(seqs[p]) for idx, p in enumerate(parents)]
        for p, s in enumerate(seqs):
            if p not in last:
                self.model.release(s)
        return out
