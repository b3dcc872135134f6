"""Which backend runs a model: what is installed, the default, and the one-line notes.

Default: llama.cpp on a CPU-only machine when llama-cpp-python imports (it
runs the packaged GGUF files as they are, several times faster than the
dequantised copy), transformers when a GPU is present or llama.cpp is
missing.  ``KGQA_BACKEND`` overrides the default for scripts; the CLI's
``--backend`` and the app's selector override both.
"""

from __future__ import annotations

import functools
import os

import torch

TRANSFORMERS = "transformers"
LLAMA_CPP = "llama.cpp"
BACKENDS = (LLAMA_CPP, TRANSFORMERS)
_ALIASES = {"llama.cpp": LLAMA_CPP, "llamacpp": LLAMA_CPP, "llama_cpp": LLAMA_CPP, "llama-cpp": LLAMA_CPP,
            "transformers": TRANSFORMERS, "hf": TRANSFORMERS, "torch": TRANSFORMERS}


class BackendError(ValueError):
    """An unknown backend name."""


def normalise(name: str | None) -> str | None:
    """The canonical backend name (None/"" / "auto" mean "the default")."""
    if name is None or not str(name).strip() or str(name).strip().lower() == "auto":
        return None
    key = str(name).strip().lower()
    if key not in _ALIASES:
        raise BackendError(f"unknown backend {name!r}: choose {' or '.join(BACKENDS)}")
    return _ALIASES[key]


@functools.lru_cache(maxsize=1)
def llama_cpp_status() -> str:
    """"" when llama-cpp-python imports, else why not (one line)."""
    try:
        import llama_cpp  # noqa: F401
    except Exception as exc:  # ImportError, or a broken shared library (OSError)
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return f"llama-cpp-python is not usable ({first})"
    return ""


def gpu_present() -> bool:
    if torch.cuda.is_available():
        return True
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def available() -> list[str]:
    return [b for b in BACKENDS if b != LLAMA_CPP or not llama_cpp_status()]


def default_backend() -> str:
    env = normalise(os.environ.get("KGQA_BACKEND"))
    if env:
        return env
    if gpu_present() or llama_cpp_status():
        return TRANSFORMERS
    return LLAMA_CPP


def resolve(requested: str | None) -> tuple[str, str]:
    """(backend to use, a one-line note when it is not the one asked for)."""
    name = normalise(requested) or default_backend()
    if name == LLAMA_CPP and llama_cpp_status():
        return TRANSFORMERS, f"{llama_cpp_status()}; using transformers instead"
    return name, ""
