"""A scripted stand-in for LocalModel so RoK's mechanics can be tested exactly.

It answers each of RoK's three prompts with a fixed text (recognised by the
prompt's wording) and reports the same records a real model would.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import pytest

from kgqa_core.models.generation import GenerationConfig
from kgqa_core.models.local_model import Generation
from kgqa_core.trace.schema import ModelCall


@dataclass
class ScriptedModel:
    cot: str = ""
    branches: str = ""
    answer: str = ""
    name: str = "scripted"
    revision: str = "test"
    prompts: list[str] = field(default_factory=list)

    def chat_prompt(self, user: str, system: str | None = None) -> str:
        return f"<system>{system}</system><user>{user}</user><assistant>"

    def _reply(self, prompt: str) -> str:
        if "step by step" in prompt:
            return self.cot
        if "numbered facts" in prompt:
            return self.branches
        if "Knowledge graph evidence" in prompt:
            return self.answer
        raise AssertionError(f"unexpected prompt: {prompt[:200]}")

    def generate(self, prompt: str, config: GenerationConfig = GenerationConfig(), state=None) -> Generation:
        self.prompts.append(prompt)
        text = self._reply(prompt)
        for s in config.stop_strings:
            if s in text:
                text = text[: text.index(s)]
        n = len(text.split())
        return Generation(text, list(range(n)), len(prompt.split()), n, n + 1, 0.001, "eos")

    def call_record(self, purpose: str, gen: Generation, prompt: str = "", keep_prompt: bool = True) -> ModelCall:
        return ModelCall(purpose, gen.prompt_tokens, gen.output_tokens, gen.forward_passes, gen.seconds,
                         prompt if keep_prompt else "", gen.text)


@pytest.fixture
def scripted() -> Callable[..., ScriptedModel]:
    return ScriptedModel
