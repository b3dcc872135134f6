"""The transformers backend: a Hugging Face causal LM on CPU, CUDA or MPS.

Sequences are `PromptState`s holding a transformers cache object; forking
deep-copies it, and `extend_many` runs beams of equal length as one batch
(their caches concatenated along the batch dimension).  Generation,
scoring and trace records are shared with every backend (`base.ModelBase`).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Sequence as Seq

import torch

from .. import progress
from .backend_fields import BackendFields
from .base import ModelBase, common_prefix
from .interface import (  # noqa: F401  (re-exported: older imports name them here)
    ContinuationScore,
    ForwardCounter,
    Generation,
    PromptTooLongError,
    ScoreList,
)


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
class TransformersModel(BackendFields, ModelBase):
    name: str
    model: Any
    tokenizer: Any
    device: torch.device
    dtype: torch.dtype
    # Recently prefilled prompts: a new prompt that shares a long prefix with
    # one of them (the same instructions and in-context examples, or the
    # identical prompt of CoT after DoG) only runs the tokens after it.  A
    # prompt that reused at least half of an entry replaces it, so one method's many calls
    # (READS scores a dozen options per question) take one slot and do not
    # push out another method's prompt (Direct's examples, one question later).
    prefix_cache_size: int = 4
    min_reused_prefix: int = 32
    _prefixes: list = field(default_factory=list, repr=False)

    backend = "transformers"
    lookup_draft = 6  # guessed tokens a pass (models/lookup.py): a 7-token pass costs 1.75 one-token ones

    @property
    def device_label(self) -> str:
        return f"{self.device.type} ({str(self.dtype).replace('torch.', '')})"

    @property
    def vocab_size(self) -> int:
        return int(self.model.get_output_embeddings().weight.shape[0])

    def _backend_eos(self) -> set[int]:
        source = getattr(self.model.generation_config, "eos_token_id", None)
        if isinstance(source, int):
            return {source}
        if isinstance(source, (list, tuple)):
            return {int(i) for i in source}
        return set()

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

    def prefill(self, ids: Seq[int], fixed: int = 0) -> PromptState:
        """Run a prompt, reusing the keys/values of the longest cached prefix (any prefix: `fixed` is not needed)."""
        ids = self._prompt_ids(ids)
        with self.lock:
            reused, cache, slot = self._cached_prefix(ids)
            todo = len(ids) - reused
            with progress.activity(progress.PROMPT, f"reading a prompt of {todo:,} tokens", todo) as act:
                logits, cache = self.forward(torch.tensor([ids[reused:]], dtype=torch.long), cache)
                act.advance(todo)  # one pass: progress comes from the measured rate (the ETA)
            state = PromptState(ids, cache, logits[0, -1])
            self.counter.prefix_tokens_reused += reused
            if self.prefix_cache_size > 0:
                if slot is not None and reused * 2 >= len(self._prefixes[slot][0]):
                    del self._prefixes[slot]  # mostly the same prompt: the newer one takes its place
                self._prefixes.insert(0, (list(ids), copy.deepcopy(cache)))  # a copy: the state's ids grow
                del self._prefixes[self.prefix_cache_size :]
            return state

    def _cached_prefix(self, ids: list[int]) -> tuple[int, Any, int | None]:
        """(tokens reused, a copy of their cache, index of the entry they came from)."""
        best_len, best_cache, best_slot = 0, None, None
        for slot, (cached_ids, cached) in enumerate(self._prefixes):
            n = common_prefix(cached_ids, ids)
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

    def step(self, state: PromptState, new_ids: Seq[int]) -> PromptState:
        """Extend ``state`` by ``new_ids`` (its cache is updated in place)."""
        if new_ids:
            self.extend(state, new_ids)
        return state

    def extend(self, state: PromptState, new_ids: Seq[int]) -> torch.Tensor:
        """Feed ``new_ids`` in one pass; the log-prob rows after each of them ([len, V])."""
        logits, cache = self.forward(torch.tensor([list(new_ids)], dtype=torch.long), state.cache)
        state.ids.extend(new_ids)
        state.cache = cache
        state.logits = logits[0, -1]
        return torch.log_softmax(logits[0], dim=-1)

    def rewind(self, state: PromptState, n: int, logits: torch.Tensor) -> None:
        """Keep the first `n` ids of `state` (its cache cropped); `logits`: the next-token logits after id n-1."""
        if n >= len(state.ids):
            return
        with self.lock:
            state.cache.crop(n - len(state.ids))  # transformers 5: a negative count removes that many tokens
            del state.ids[n:]
            state.logits = logits

    def extend_many(self, states: Seq[PromptState], new_ids: Seq[Seq[int]]) -> list[torch.Tensor]:
        """Extend several sequences; one batched pass when their caches can be stacked."""
        if len(states) == 1:
            return [self.extend(states[0], new_ids[0])]
        if not _stackable(states, new_ids):
            return [self.extend(s, ids) for s, ids in zip(states, new_ids)]
        with self.lock:
            batch = copy.copy(states[0].cache)
            batch.layers = [copy.copy(layer) for layer in states[0].cache.layers]
            for li, layer in enumerate(batch.layers):
                layer.keys = torch.cat([s.cache.layers[li].keys for s in states], dim=0)
                layer.values = torch.cat([s.cache.layers[li].values for s in states], dim=0)
            logits, batch = self.forward(torch.tensor([list(ids) for ids in new_ids], dtype=torch.long), batch)
            rows = []
            for i, (s, ids) in enumerate(zip(states, new_ids)):
                own = copy.copy(batch)
                own.layers = [copy.copy(layer) for layer in batch.layers]
                for layer in own.layers:
                    layer.keys = layer.keys[i : i + 1]
                    layer.values = layer.values[i : i + 1]
                s.cache = own
                s.ids.extend(ids)
                s.logits = logits[i, -1]
                rows.append(torch.log_softmax(logits[i], dim=-1))
            return rows

    def fork(self, state: PromptState) -> PromptState:
        return state.fork()

    # ---------------------------------------------------------- scoring
    @torch.inference_mode()
    def _score_batch(self, state: PromptState, options: list[list[int]]) -> list[list[float]]:
        """Tokens 2.. of each option in one padded pass over the prompt's cache repeated per option."""
        out: list[list[float]] = [[] for _ in options]
        longest = max((len(ids) for ids in options), default=0)
        if longest <= 1:
            return out
        pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = 0
        b = len(options)
        inputs = torch.full((b, longest - 1), pad, dtype=torch.long)
        for i, ids in enumerate(options):
            body = ids[:-1]
            if body:
                inputs[i, : len(body)] = torch.tensor(body)
        past_len = len(state.ids)
        mask = torch.ones((b, past_len + longest - 1), dtype=torch.long)
        for i, ids in enumerate(options):
            mask[i, past_len + max(len(ids) - 1, 0) :] = 0
        cache = copy.deepcopy(state.cache)
        if b > 1:
            cache.batch_repeat_interleave(b)
        logits, _ = self.forward(inputs, cache, attention_mask=mask)
        logprobs = torch.log_softmax(logits, dim=-1)
        for i, ids in enumerate(options):
            out[i] = [float(logprobs[i, j - 1, ids[j]]) for j in range(1, len(ids))]
        return out


# Older code and tests name the transformers backend `LocalModel`.
LocalModel = TransformersModel


def _stackable(states: Seq[PromptState], new_ids: Seq[Seq[int]]) -> bool:
    """Caches of one plain layout and one length, fed runs of one length: they batch exactly."""
    try:
        from transformers.cache_utils import DynamicCache, DynamicLayer
    except ImportError:  # pragma: no cover
        return False
    lengths = {len(ids) for ids in new_ids}
    if len(lengths) != 1 or 0 in lengths:
        return False
    n = len(states[0].ids)
    for s in states:
        c = s.cache
        if type(c) is not DynamicCache or len(s.ids) != n:
            return False
        if any(type(layer) is not DynamicLayer or not layer.is_initialized for layer in c.layers):
            return False
    return True
