"""What one generation request asks for: `GenerationConfig`, declared once.

The protocol (`interface.LanguageModel.generate`) and every backend take
``generate(prompt, config, state=None)``; a request's settings travel as one
frozen value instead of a keyword list that the protocol and each backend
repeat (and could let drift apart).  The shape is transformers'
``GenerationConfig``: ``max_new_tokens`` and ``stop_strings`` under the same
names.  Decoding here is always greedy, so the logits processor (the only
thing that changes which token is chosen) belongs to the request's settings
too.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

if TYPE_CHECKING:  # a method's module may build a config without loading torch
    import torch

# Called as ``fn(generated_ids, logits) -> logits`` before the argmax (the transformers convention).
LogitsProcessor = Callable[[list[int], "torch.Tensor"], "torch.Tensor"]


@dataclass(frozen=True)
class GenerationConfig:
    """How far to generate and where to stop.

    ``stop_strings``: generation ends before the first of them that appears
    (a single string is one stop string; empty ones are dropped, they would
    stop at once).  ``logits_processor``: see `LogitsProcessor`; a model
    server runs only those that declare a server equivalent.
    """

    max_new_tokens: int = 256
    stop_strings: Sequence[str] = ()
    logits_processor: LogitsProcessor | None = None

    def __post_init__(self) -> None:
        try:
            n = operator.index(self.max_new_tokens)
        except TypeError:
            n = -1
        if n < 0 or isinstance(self.max_new_tokens, bool):
            raise ValueError(f"max_new_tokens must be a whole number >= 0, got {self.max_new_tokens!r}")
        stops = (self.stop_strings,) if isinstance(self.stop_strings, str) else tuple(self.stop_strings)
        object.__setattr__(self, "max_new_tokens", n)
        object.__setattr__(self, "stop_strings", tuple(str(s) for s in stops if s))
