"""A script of benchmarks/ loaded as a module, as tests of those scripts need (the folder is not a package)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_benchmark(name: str, module_name: str | None = None) -> ModuleType:
    """benchmarks/`name`.py, run once more as a fresh module (its own path setup included)."""
    spec = importlib.util.spec_from_file_location(module_name or name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
