"""Language models: the interface every method uses and the backends behind it.

Import a name from the module that defines it: ``interface`` (the
`LanguageModel` protocol, `Generation`, scores, errors), ``generation``
(`GenerationConfig`), ``local_model`` / ``llama_model`` / ``server_model``
(the backends), ``registry`` (the packaged GGUF models), ``manager``
(loading and installing).

The package itself answers only for the loader's entry points, and imports
the loader on first use: a method module that builds a `GenerationConfig`
does not load torch and transformers with it.  (``kgqa_core.models.load_model``
is also the seam tests replace with a fake model.)
"""

from __future__ import annotations

import importlib
from typing import Any

_ENTRY_POINTS = {
    "manager": ("load_model", "install_model", "model_statuses", "ModelLoadError", "ModelIntegrityError"),
    "registry": ("PACKAGED_MODELS", "DEFAULT_APP_MODEL"),
}
_HOME = {name: module for module, names in _ENTRY_POINTS.items() for name in names}

__all__ = sorted(_HOME)


def __getattr__(name: str) -> Any:
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOME))
