"""A loaded causal language model and the primitives every method shares.

Methods need three things from a model: greedy generation with stop strings,
log-probabilities of given continuations of a prompt (the discriminative
scoring READS and LPKG use), and a KV-cached step function so a decoder with
its own constraint (DoG) pays one forward pass per generated token.  All
three count forward passes and tokens, so traces can report costs exactly.

One `LocalModel` may serve several app sessions at once: every public call
holds ``lock`` (re-entrant, so a method may hold it across a whole decode).
"""

from __future__ import annotations

import copy
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import torch

from ..trace.schema import ModelCall


@dataclass
class Generation:
    text: str
    token_ids: list[int]
    prompt_tokens: int
    output_tokens: int
    forward_passes: int
    seconds: float
    stopped_by: str = ""


@dataclass
class ContinuationScore:
    """Log-probability of one continuation given the prompt.

    ``mean`` (per-token average) is the length-normalised score methods use
    when options differ in length; ``total`` is the joint log-probability.
    """

    text: str
    token_ids: list[int]
    token_logprobs: list[float]
    total: float
    mean: float


class ScoreList(list):
    """The scores of a batch of continuations, with what computing them cost."""

    prompt_tokens: int = 0
    forward_passes: int = 0
    seconds: float = 0.0


@dataclass
class ForwardCounter:
    forward_passes: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    prefix_tokens_reused: int = 0

    def snapshot(self) -> tuple[int, int, int]:
        return (self.forward_passes, self.tokens_in, self.tokens_out)


@dataclass
class PromptState:
    """A prefix that has been run through the model.

    ``cache`` holds the keys/values of ``ids``; ``logits`` are the next-token
    logits after the last id (1-D, float32, on CPU).
    """

    ids: list[int]
    cache: Any
    logits: torch.Tensor

    def fork(self) -> "PromptState":
        return PromptState(list(self.ids), copy.deepcopy(self.cache), self.logits.clone())


@dataclass
class LocalModel:
    name: str
    model: Any
    tokenizer: Any
    device: torch.device
    dtype: torch.dtype
    revision: str = ""
    source: str = ""
    context_length: int = 8192
    counter: ForwardCounter = field(default_factory=ForwardCounter)
    lock: threading.RLock = field(default_factory=threading.RLock)
    # Recently prefilled prompts: a new prompt that shares a long prefix with
    # one of them (the same instructions and in-context examples, or the
    # identical prompt of CoT after DoG) only runs the tokens after it.  A
    # prompt that reused at least half of an entry replaces it, so one method's many calls
    # (READS scores a dozen options per question) take one slot and do not
    # push out another method's prompt (Direct's examples, one question later).
    prefix_cache_size: int = 4
    min_reused_prefix: int = 32
    _prefixes: list = field(default_factory=list, repr=False)

    # ------------------------------------------------------------- text
    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def decode(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=False)

    def token_text(self, token_id: int) -> str:
        return self.tokenizer.decode([token_id], skip_special_tokens=False)

    @property
    def eos_ids(self) -> set[int]:
        ids: set[int] = set()
        for source in (self.tokenizer.eos_token_id, getattr(self.model.generation_config, "eos_token_id", None)):
            if isinstance(source, int):
                ids.add(source)
            elif isinstance(source, (list, tuple)):
                ids.update(int(i) for i in source)
        for tok in ("<|im_end|>", "<|endoftext|>", "<|eot_id|>"):
            tid = self.tokenizer.convert_tokens_to_ids(tok) if tok in self.tokenizer.get_vocab() else None
            if isinstance(tid, int) and tid >= 0:
                ids.add(tid)
        return ids

    def chat_prompt(self, user: str, system: str | None = None) -> str:
        """The chat-templated prompt, ending where the assistant's answer starts."""
        messages = []
        if system:
            messages.append({"role": "system", "content": system})
        messages.append({"role": "user", "content": user})
        if getattr(self.tokenizer, "chat_template", None):
            try:
                return self.tokenizer.apply_chat_template(
                    messages, tokenize=False, add_generation_prompt=True
                )
            except Exception:  # a broken template must not stop the method
                pass
        prefix = f"{system}\n\n" if system else ""
        return f"{prefix}{user}\n"

    # ---------------------------------------------------------- forward
    @torch.inference_mode()
    def forward(self, input_ids: torch.Tensor, cache: Any = None, attention_mask: torch.Tensor | None = None):
        """One forward pass; returns (logits [B, T, V] float32 on CPU, cache)."""
        with self.lock:
            out = self.model(
                input_ids=input_ids.to(self.device),
                past_key_values=cache,
                attention_mask=None if attention_mask is None else attention_mask.to(self.device),
                use_cache=True,
            )
            self.counter.forward_passes += 1
            self.counter.tokens_in += int(input_ids.numel())
            return out.logits.float().cpu(), out.past_key_values

    def prefill(self, ids: Sequence[int]) -> PromptState:
        """Run a prompt, reusing the keys/values of the longest cached prefix."""
        if not ids:
            raise ValueError("cannot prefill an empty prompt")
        ids = list(ids)
        self._check_length(len(ids))
        with self.lock:
            reused, cache, slot = self._cached_prefix(ids)
            logits, cache = self.forward(torch.tensor([ids[reused:]], dtype=torch.long), cache)
            state = PromptState(ids, cache, logits[0, -1])
            self.counter.prefix_tokens_reused += reused
            if self.prefix_cache_size > 0:
                if slot is not None and reused * 2 >= len(self._prefixes[slot][0]):
                    del self._prefixes[slot]  # mostly the same prompt: the newer one takes its place
                self._prefixes.insert(0, (ids, copy.deepcopy(cache)))
                del self._prefixes[self.prefix_cache_size :]
            return state

    def _cached_prefix(self, ids: list[int]) -> tuple[int, Any, int | None]:
        """(tokens reused, a copy of their cache, index of the entry they came from)."""
        best_len, best_cache, best_slot = 0, None, None
        for slot, (cached_ids, cached) in enumerate(self._prefixes):
            n = _common_prefix(cached_ids, ids)
            n = min(n, len(ids) - 1)  # at least one token must run to give logits
            if n > best_len:
                best_len, best_cache, best_slot = n, cached, slot
        if best_len < self.min_reused_prefix or best_cache is None:
            return 0, None, None
        cache = copy.deepcopy(best_cache)
        extra = cache.get_seq_length() - best_len
        if extra > 0:
            cache.crop(-extra)  # transformers 5: a negative count removes that many tokens
        return best_len, cache, best_slot

    def clear_prefix_cache(self) -> None:
        with self.lock:
            self._prefixes.clear()

    def step(self, state: PromptState, new_ids: Sequence[int]) -> PromptState:
        """Extend ``state`` by ``new_ids`` (its cache is updated in place)."""
        if not new_ids:
            return state
        logits, cache = self.forward(torch.tensor([list(new_ids)], dtype=torch.long), state.cache)
        state.ids.extend(new_ids)
        state.cache = cache
        state.logits = logits[0, -1]
        return state

    def _check_length(self, n: int) -> None:
        if n > self.context_length:
            raise PromptTooLongError(
                f"prompt has {n} tokens but {self.name} takes at most {self.context_length}; "
                "lower the prompt budget (max prompt triplets)"
            )

    # ------------------------------------------------------- generation
    def generate(
        self,
        prompt: str,
        max_new_tokens: int = 256,
        stop: Sequence[str] = (),
        logits_processor: Any = None,
        state: PromptState | None = None,
    ) -> Generation:
        """Greedy decoding with a KV cache, stopping at EOS or any stop string.

        ``logits_processor`` (optional) is called as ``fn(generated_ids,
        logits) -> logits`` before the argmax, the transformers convention.
        """
        started = time.perf_counter()
        with self.lock:
            before = self.counter.forward_passes
            if state is None:
                state = self.prefill(self.encode(prompt))
            prompt_tokens = len(state.ids)
            eos = self.eos_ids
            out_ids: list[int] = []
            stopped_by = "length"
            text = ""
            for _ in range(max_new_tokens):
                logits = state.logits
                if logits_processor is not None:
                    logits = logits_processor(out_ids, logits)
                next_id = int(torch.argmax(logits).item())
                if next_id in eos:
                    stopped_by = "eos"
                    break
                out_ids.append(next_id)
                text = self.decode(out_ids)
                hit = _first_stop(text, stop)
                if hit is not None:
                    text = text[: text.index(hit)]
                    stopped_by = f"stop:{hit}"
                    break
                self.step(state, [next_id])
            self.counter.tokens_out += len(out_ids)
            return Generation(
                text=text if out_ids else "",
                token_ids=out_ids,
                prompt_tokens=prompt_tokens,
                output_tokens=len(out_ids),
                forward_passes=self.counter.forward_passes - before,
                seconds=time.perf_counter() - started,
                stopped_by=stopped_by,
            )

    # ---------------------------------------------------------- scoring
    def continuation_ids(self, prompt_ids: Sequence[int], prompt: str, continuation: str) -> list[int]:
        """Token ids of ``continuation`` as tokenised right after ``prompt``.

        BPE merges across the boundary would change the prompt's own ids, so
        when joint tokenisation does not keep the prompt as a prefix we fall
        back to tokenising the continuation alone.
        """
        joint = self.encode(prompt + continuation)
        n = len(prompt_ids)
        if joint[:n] == list(prompt_ids) and len(joint) > n:
            return joint[n:]
        return self.encode(continuation)

    @torch.inference_mode()
    def score_continuations(
        self,
        prompt: str,
        continuations: Sequence[str],
        state: PromptState | None = None,
        batch_size: int = 16,
    ) -> ScoreList:
        """Log-probabilities of each continuation, sharing the prompt's KV cache.

        The prompt is run once; the options are scored in batches of
        ``batch_size`` with the cache repeated along the batch dimension and
        the options right-padded (padding positions are masked out and
        ignored).
        """
        started = time.perf_counter()
        with self.lock:
            before = self.counter.forward_passes
            if state is None:
                state = self.prefill(self.encode(prompt))
            prompt_ids = state.ids
            prompt_logprobs = torch.log_softmax(state.logits, dim=-1)
            option_ids = [self.continuation_ids(prompt_ids, prompt, c) for c in continuations]
            results: list[ContinuationScore | None] = [None] * len(continuations)
            pad = self.tokenizer.pad_token_id
            if pad is None:
                pad = 0
            for start in range(0, len(option_ids), batch_size):
                chunk = option_ids[start : start + batch_size]
                # Options of one token need no forward pass: the prompt's logits suffice.
                longest = max((len(ids) for ids in chunk), default=0)
                chunk_logprobs: list[list[float]] = [[] for _ in chunk]
                for i, ids in enumerate(chunk):
                    if ids:
                        chunk_logprobs[i].append(float(prompt_logprobs[ids[0]]))
                if longest > 1:
                    b = len(chunk)
                    inputs = torch.full((b, longest - 1), pad, dtype=torch.long)
                    for i, ids in enumerate(chunk):
                        body = ids[:-1]
                        if body:
                            inputs[i, : len(body)] = torch.tensor(body)
                    past_len = len(prompt_ids)
                    mask = torch.ones((b, past_len + longest - 1), dtype=torch.long)
                    for i, ids in enumerate(chunk):
                        mask[i, past_len + max(len(ids) - 1, 0) :] = 0
                    cache = copy.deepcopy(state.cache)
                    if b > 1:
                        cache.batch_repeat_interleave(b)
                    logits, _ = self.forward(inputs, cache, attention_mask=mask)
                    logprobs = torch.log_softmax(logits, dim=-1)
                    for i, ids in enumerate(chunk):
                        for j in range(1, len(ids)):
                            chunk_logprobs[i].append(float(logprobs[i, j - 1, ids[j]]))
                for i, ids in enumerate(chunk):
                    lps = chunk_logprobs[i]
                    total = float(sum(lps)) if lps else float("-inf")
                    results[start + i] = ContinuationScore(
                        text=continuations[start + i],
                        token_ids=list(ids),
                        token_logprobs=lps,
                        total=total,
                        mean=total / len(lps) if lps else float("-inf"),
                    )
            scores = ScoreList(r for r in results if r is not None)
            scores.prompt_tokens = len(prompt_ids)
            scores.forward_passes = self.counter.forward_passes - before
            scores.seconds = time.perf_counter() - started
            return scores

    # ------------------------------------------------------------ trace
    def call_record(self, purpose: str, result: Any, prompt: str = "", keep_prompt: bool = True) -> ModelCall:
        """A trace record of one model request (a Generation or a list of scores)."""
        if isinstance(result, Generation):
            return ModelCall(
                purpose=purpose,
                prompt_tokens=result.prompt_tokens,
                output_tokens=result.output_tokens,
                forward_passes=result.forward_passes,
                seconds=round(result.seconds, 4),
                prompt=prompt if keep_prompt else "",
                output=result.text,
            )
        scores = list(result or [])
        return ModelCall(
            purpose=purpose,
            prompt_tokens=getattr(result, "prompt_tokens", 0) or (len(self.encode(prompt)) if prompt else 0),
            output_tokens=0,
            forward_passes=getattr(result, "forward_passes", 0),
            seconds=round(getattr(result, "seconds", 0.0), 4),
            prompt=prompt if keep_prompt else "",
            output="\n".join(f"{s.text!r}: {s.mean:.3f}" for s in scores),
        )


class PromptTooLongError(ValueError):
    pass


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _first_stop(text: str, stops: Sequence[str]) -> str | None:
    best: tuple[int, str] | None = None
    for s in stops:
        if not s:
            continue
        i = text.find(s)
        if i >= 0 and (best is None or i < best[0]):
            best = (i, s)
    return best[1] if best else None
