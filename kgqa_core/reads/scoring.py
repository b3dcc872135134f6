"""Debiased option scoring: every READS decision is a choice among listed options.

The paper picks options with "a constrained beam search algorithm based on
output logits" (Eq. 6) from a fine-tuned model.  We keep the constrained
reading and make it robust for an untrained model against two known biases.

Length bias - *trie-normalised option probability* (default ``length_norm="trie"``).
  The options' token sequences form a prefix tree.  Decoding constrained to
  that tree gives each option the product, over the positions where options
  branch, of the model's probability of the option's token renormalised over
  the tokens allowed there.  Tokens after an option's unique prefix are forced
  and contribute log 1 = 0, so an option gains or loses nothing by being long:
  the score depends only on the tokens that discriminate between options, and
  the scores form an exact distribution over the pool.  All needed log-probs
  come from the one batched forward over the options (siblings at a branch
  share their prefix, so one option's token log-prob is the sibling's
  alternative).  Plain per-token means (``"mean"``) are available but are
  biased *towards* long options when later tokens are copied from the listed
  options (near-zero log-probs dilute the one costly decision); joint
  log-probs (``"total"``) are biased towards short ones.  Each option ends in
  the model's end-of-turn token so that no option is a prefix of another.

Position bias - *order-symmetric permutations* (default ``permutations=2``).
  Options are listed numbered in the prompt, and small models prefer the
  first (or last) listed.  We score the pool under several listing orders and
  average each option's log-probability over the orders (a geometric mean of
  probabilities), then renormalise with a softmax.  With 2 orders these are
  the given order and its reverse, a set closed under reversal, so reversing
  the pool cannot change the result; with more, cyclic shifts by n/m and
  their reverses (cyclic-permutation debiasing; PriDe would estimate the
  position prior instead, but needs a calibration set we do not have).

Cost.  Everything before the option list (instructions, S_k, question) is
run once and its KV cache is forked for each order; each order then costs a
forward over its own list and one batched forward over the options.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence

from .. import progress
from ..trace.schema import ModelCall

LENGTH_NORMS = ("trie", "mean", "total")


@dataclass
class PromptParts:
    """A decision prompt: ``head`` (ends just before the option list) and ``tail``."""

    head: str
    tail: str = ""
    system: str | None = None
    fixed: str = ""  # the start of `head` every question shares (the instructions): read once, kept whole

    def fixed_text(self, prompt: str) -> str:
        """The start of `prompt` (this part's chat prompt) that is the same for every question, "" when unknown."""
        at = prompt.find(self.head) if self.fixed else -1
        return prompt[: at + len(self.fixed)] if at >= 0 else ""

    def user_text(self, options: Sequence[str], order: Sequence[int]) -> str:
        listing = "\n".join(f"{pos + 1}. {options[i]}" for pos, i in enumerate(order))
        return f"{self.head}{listing}\n{self.tail}".rstrip() + "\n"


@dataclass
class OptionScore:
    text: str
    logprob: float  # debiased log-score (average over listing orders)
    prob: float  # softmax of logprob over the pool
    per_order: list[float] = field(default_factory=list)
    mean_token_logprob: float | None = None  # for reference (length-normalised raw score)


@dataclass
class Decision:
    """The scored pool of one decision and what asking the model cost."""

    options: list[OptionScore]
    choice: int
    calls: list[ModelCall] = field(default_factory=list)
    forward_passes: int = 0
    tokens_in: int = 0
    seconds: float = 0.0
    note: str = ""

    @property
    def chosen(self) -> OptionScore:
        return self.options[self.choice]


class Chooser(Protocol):
    """Anything that picks one option: the model (`ModelChooser`) or a test script."""

    def choose(self, kind: str, parts: PromptParts, options: list[str]) -> Decision: ...


# ------------------------------------------------------------ arithmetic
def _logsumexp(values: Sequence[float]) -> float:
    finite = [v for v in values if v != float("-inf")]
    if not finite:
        return float("-inf")
    top = max(finite)
    return top + math.log(sum(math.exp(v - top) for v in finite))


def softmax(scores: Sequence[float]) -> list[float]:
    z = _logsumexp(scores)
    if z == float("-inf"):
        return [1.0 / len(scores)] * len(scores) if scores else []
    return [math.exp(s - z) if s != float("-inf") else 0.0 for s in scores]


def trie_logprobs(token_ids: Sequence[Sequence[int]], token_logprobs: Sequence[Sequence[float]]) -> list[float]:
    """Log-probability of each option under decoding constrained to the options' prefix tree.

    At every prefix, the allowed next tokens are those some option continues
    with; an option's score sums its token's log-prob minus the log-sum-exp
    over the allowed tokens at that prefix.  Positions with a single allowed
    token cost nothing, which is what removes the length bias.
    """
    children: dict[tuple[int, ...], dict[int, float]] = {}
    for ids, lps in zip(token_ids, token_logprobs):
        for j, (tok, lp) in enumerate(zip(ids, lps)):
            children.setdefault(tuple(ids[:j]), {}).setdefault(tok, lp)
    norm = {prefix: _logsumexp(list(toks.values())) for prefix, toks in children.items()}
    out = []
    for ids, lps in zip(token_ids, token_logprobs):
        total = 0.0
        for j, tok in enumerate(ids):
            prefix = tuple(ids[:j])
            if len(children[prefix]) > 1:
                total += children[prefix][tok] - norm[prefix]
        out.append(total)
    return out


def permutation_orders(n: int, k: int) -> list[list[int]]:
    """``k`` listing orders of ``n`` options: identity and reverse, then cyclic shifts and their reverses."""
    identity = list(range(n))
    if n <= 1 or k <= 1:
        return [identity]
    m = max(1, math.ceil(k / 2))
    orders: list[list[int]] = []
    for j in range(m):
        s = round(j * n / m) % n
        rotated = identity[s:] + identity[:s]
        for order in (rotated, rotated[::-1]):
            if order not in orders:
                orders.append(order)
    return orders[:k]


def combine_permutations(per_order: Sequence[Sequence[float]]) -> list[float]:
    """Average each option's log-score over the listing orders."""
    n = len(per_order[0])
    return [sum(scores[i] for scores in per_order) / len(per_order) for i in range(n)]


def decision_from_scores(texts: Sequence[str], scores: Sequence[float], per_order: Sequence[Sequence[float]] = ()) -> Decision:
    probs = softmax(scores)
    choice = max(range(len(texts)), key=lambda i: (probs[i], -i)) if texts else 0
    options = [
        OptionScore(
            text=t,
            logprob=float(scores[i]),
            prob=float(probs[i]),
            per_order=[float(o[i]) for o in per_order],
        )
        for i, t in enumerate(texts)
    ]
    return Decision(options=options, choice=choice)


def with_penalty(decision: Decision, index: int, penalty: float) -> Decision:
    """The decision with option ``index``'s log-score lowered by ``penalty`` (probabilities renormalised)."""
    if penalty == 0 or not 0 <= index < len(decision.options):
        return decision
    scores = [o.logprob - (penalty if i == index else 0.0) for i, o in enumerate(decision.options)]
    probs = softmax(scores)
    for o, sc, p in zip(decision.options, scores, probs):
        o.logprob, o.prob = sc, p
    decision.choice = max(range(len(scores)), key=lambda i: (probs[i], -i))
    return decision


# ---------------------------------------------------------------- model
class ModelChooser:
    """Scores option pools with a `LocalModel` (see the module docstring for the debiasing)."""

    def __init__(
        self,
        model: Any,
        permutations: int = 2,
        length_norm: str = "trie",
        batch_size: int = 16,
        keep_prompts: bool = True,
    ) -> None:
        if length_norm not in LENGTH_NORMS:
            raise ValueError(f"length_norm must be one of {', '.join(LENGTH_NORMS)}, not {length_norm!r}")
        if int(permutations) < 1:
            raise ValueError(f"permutations must be at least 1, not {permutations!r}")
        self.model = model
        self.permutations = int(permutations)
        self.length_norm = length_norm
        self.batch_size = batch_size
        self.keep_prompts = keep_prompts
        self.terminator = self._terminator()

    def _terminator(self) -> str:
        tok = self.model.tokenizer
        eos = getattr(tok, "eos_token", None)
        if getattr(tok, "chat_template", None) and isinstance(eos, str) and eos:
            return eos
        return "\n"

    def choose(self, kind: str, parts: PromptParts, options: list[str],
               settled: Callable[[Decision], bool] | None = None) -> Decision:
        """The options scored in each listing order, their log-scores averaged over the orders.

        ``settled``: asked after each listing order but the last with the decision of the orders read so far; when
        it says the choice is settled, the later orders are not read (each order is a prompt of its own).
        """
        if not options:
            raise ValueError("cannot choose from an empty option pool")
        if len(set(options)) != len(options):
            raise ValueError("option pool has duplicate option texts")
        if len(options) == 1:
            d = decision_from_scores(options, [0.0])
            d.note = "only one option: no model call"
            return d
        model = self.model
        started = time.perf_counter()
        orders = permutation_orders(len(options), self.permutations)
        prompts = [model.chat_prompt(parts.user_text(options, order), system=parts.system) for order in orders]
        continuations = [o + self.terminator for o in options]
        with model.lock:
            before = model.counter.snapshot()
            shared = _shared_prefix(prompts)
            shared_ids = model.encode(shared) if shared else []
            fixed = model.fixed_tokens(parts.fixed_text(prompts[0]), shared_ids)
            base = model.prefill(shared_ids, fixed=fixed) if shared_ids else None
            prefix_passes = model.counter.forward_passes - before[0]
            per_order: list[list[float]] = []
            means: list[list[float]] = []
            calls: list[ModelCall] = []
            for j, (order, prompt) in enumerate(zip(orders, prompts)):
                mark = model.counter.forward_passes
                ids = model.encode(prompt)
                state = None
                if base is not None and ids[: len(shared_ids)] == shared_ids:
                    state = base if j == len(orders) - 1 else base.fork()
                    rest = ids[len(shared_ids):]
                    # the options' order after the shared prefix: prompt reading (the run's cost breakdown, the ETA)
                    with progress.activity(progress.PROMPT, f"reading a prompt of {len(rest):,} tokens",
                                           len(rest)) as act:
                        model.step(state, rest)
                        act.advance(len(rest))
                listed = [continuations[i] for i in order]
                scores = model.score_continuations(prompt, listed, state=state, batch_size=self.batch_size)
                by_option: list[Any] = [None] * len(options)
                for pos, i in enumerate(order):
                    by_option[i] = scores[pos]
                per_order.append(self._scores(by_option))
                means.append([s.mean for s in by_option])
                call = model.call_record(f"reads.{kind} order {j + 1}/{len(orders)}", scores, prompt, keep_prompt=self.keep_prompts)
                call.prompt_tokens = len(ids)
                call.forward_passes = model.counter.forward_passes - mark + (prefix_passes if j == 0 else 0)
                calls.append(call)
                if settled is not None and j < len(orders) - 1 and settled(
                        decision_from_scores(options, combine_permutations(per_order), per_order)):
                    break
            after = model.counter.snapshot()
        combined = combine_permutations(per_order)
        decision = decision_from_scores(options, combined, per_order)
        for i, opt in enumerate(decision.options):
            opt.mean_token_logprob = sum(m[i] for m in means) / len(means)
        decision.calls = calls
        decision.forward_passes = after[0] - before[0]
        decision.tokens_in = after[1] - before[1]
        decision.seconds = time.perf_counter() - started
        return decision

    def _scores(self, scores: Sequence[Any]) -> list[float]:
        if self.length_norm == "mean":
            return [s.mean for s in scores]
        if self.length_norm == "total":
            return [s.total for s in scores]
        return trie_logprobs([s.token_ids for s in scores], [s.token_logprobs for s in scores])


def _shared_prefix(prompts: Sequence[str]) -> str:
    """The common start of all prompts, cut after its last newline (a safe token boundary)."""
    if len(prompts) == 1:
        return prompts[0]
    common = os.path.commonprefix(list(prompts))
    cut = common.rfind("\n")
    return common[: cut + 1] if cut >= 0 else ""


class ScriptedChooser:
    """A chooser driven by a function ``(kind, parts, options) -> scores``.

    For tests and experiments that need a decision policy independent of a
    model's quality; the scores are treated like the model's log-scores.
    """

    def __init__(self, score: Callable[[str, PromptParts, list[str]], Sequence[float]]) -> None:
        self.score = score
        self.seen: list[tuple[str, list[str]]] = []

    def choose(self, kind: str, parts: PromptParts, options: list[str]) -> Decision:
        self.seen.append((kind, list(options)))
        scores = [float(s) for s in self.score(kind, parts, list(options))]
        if len(scores) != len(options):
            raise ValueError(f"scripted chooser returned {len(scores)} scores for {len(options)} options")
        d = decision_from_scores(options, scores)
        d.note = "scripted chooser"
        return d
