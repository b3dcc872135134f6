"""The model interface every method, benchmark and UI page depends on.

A method never touches a backend's tensors or caches: it asks a
`LanguageModel` for token ids, for a `Sequence` (a prompt that has been read,
with its next-token logits), and extends, forks and releases sequences.  The
in-process backends (`TransformersModel`: CPU/CUDA/MPS; `LlamaCppModel`:
the packaged GGUF files on CPU) implement it; a server backend is one more
implementation (capabilities it lacks raise `BackendCapabilityError` with one
line saying what the method needs).

Why these operations and no others:
  * ``prefill`` reuses the longest cached prefix, because every question of a
    method shares the instruction and examples (most of a DoG prompt).
  * ``extend`` returns the log-prob rows after *each* fed token: DoG's
    jump-forward feeds a forced run of trie tokens in one pass and still
    scores every one of them exactly.
  * ``extend_many`` advances several sequences (beams) in one pass.
  * ``fork`` lets beams share the prompt's keys/values; ``release`` frees a
    sequence's cache where the backend keeps it outside Python objects.
  * ``generate`` and ``score_continuations`` are the two requests RoK, LPKG,
    READS and the baselines make; a generation's settings are one
    `generation.GenerationConfig` (``max_new_tokens``, ``stop_strings``, a
    logits processor).

Costs are counted the same way in every backend (`ForwardCounter`), and
``backend`` names the implementation in traces and summaries.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Protocol, Sequence as Seq, runtime_checkable

import torch

from .generation import GenerationConfig


class PromptText(str):
    """A prompt that knows its fixed start: the method's instructions and examples, the same for every question.

    Why: a backend that reuses what it read (llama.cpp) keeps that start whole
    and reads it in batches of its own, so the next question of the method
    reads only what is new, and the numbers are those of a fresh read
    (`exact_reuse`).  It is a ``str``, so every API that takes a prompt takes
    it; a backend that does not reuse prompts ignores ``fixed``.
    """

    fixed: str

    def __new__(cls, text: str, fixed: str = "") -> "PromptText":
        self = super().__new__(cls, text)
        self.fixed = fixed if text.startswith(fixed) else ""
        return self


class PromptTooLongError(ValueError):
    """A prompt longer than the model's context (or a KV cache that is full)."""


class BackendCapabilityError(RuntimeError):
    """The backend cannot do what a method needs (stated in one line)."""


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
    """What a model has computed since it was loaded (every backend counts the same way).

    ``forward_passes``: calls into the network (one batch = one pass, however
    many sequences it holds); ``tokens_in``: tokens read (prompt and fed);
    ``tokens_out``: tokens a decoder wrote; ``tokens_forced``: those of them
    it did not choose (a trie's forced run: the only continuation the graph
    allows, fed in one pass with the next choice, no decoding step of its
    own); ``prefix_tokens_reused``: prompt tokens whose keys/values came
    from the prefix cache.
    """

    forward_passes: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_forced: int = 0
    prefix_tokens_reused: int = 0
    prefix_tokens_loaded: int = 0  # reused tokens that came from the on-disk prompt cache
    # prompts read while another sequence was alive (llama.cpp, `exact_reuse`): not bit for bit a fresh read
    inexact_reads: int = 0

    def snapshot(self) -> tuple[int, int, int]:
        return (self.forward_passes, self.tokens_in, self.tokens_out)


@runtime_checkable
class Sequence(Protocol):
    """A token sequence the model has read: its ids and the next-token logits (1-D float32, CPU)."""

    ids: list[int]
    logits: torch.Tensor

    def fork(self) -> "Sequence": ...


@runtime_checkable
class LanguageModel(Protocol):
    """What methods need from a causal language model (see the module docstring)."""

    name: str
    backend: str  # "transformers", "llama.cpp", ...
    device_label: str  # "cpu", "cuda", "cpu (2 threads)" ...
    context_length: int
    counter: ForwardCounter
    lock: threading.RLock
    tokenizer: Any  # a Hugging Face tokenizer of the model's vocabulary (trie, opening detector)

    # text
    def encode(self, text: str) -> list[int]: ...
    def decode(self, ids: Seq[int]) -> str: ...
    def token_text(self, token_id: int) -> str: ...
    @property
    def eos_ids(self) -> set[int]: ...
    @property
    def vocab_size(self) -> int: ...
    def chat_prompt(self, user: str, system: str | None = None) -> str: ...
    def continuation_ids(self, prompt_ids: Seq[int], prompt: str, continuation: str) -> list[int]: ...

    # sequences
    def prefill(self, ids: Seq[int], fixed: int = 0) -> Sequence: ...  # fixed: the method's fixed first tokens
    def fixed_tokens(self, fixed_text: str, ids: Seq[int]) -> int: ...
    def step(self, state: Sequence, new_ids: Seq[int]) -> Sequence: ...
    def extend(self, state: Sequence, new_ids: Seq[int]) -> torch.Tensor: ...
    def extend_many(self, states: Seq[Sequence], new_ids: Seq[Seq[int]]) -> list[torch.Tensor]: ...
    def fork(self, state: Sequence) -> Sequence: ...
    def rewind(self, state: Sequence, n: int, logits: torch.Tensor) -> None: ...
    def release(self, state: Sequence) -> None: ...
    def clear_prefix_cache(self) -> None: ...

    # requests
    def generate(
        self, prompt: str, config: GenerationConfig = GenerationConfig(), state: Sequence | None = None
    ) -> Generation: ...
    def score_continuations(
        self, prompt: str, continuations: Seq[str], state: Sequence | None = None, batch_size: int = 16
    ) -> ScoreList: ...
    def call_record(self, purpose: str, result: Any, prompt: str = "", keep_prompt: bool = True) -> Any: ...


def loaded_model_key(model: Any) -> tuple[str, str, int]:
    """What keys a cache of one loaded model's readings: its name, its backend and the object itself (two loads of
    one model are kept apart; their numbers may differ with their threads)."""
    return (getattr(model, "name", ""), getattr(model, "backend", ""), id(model))
