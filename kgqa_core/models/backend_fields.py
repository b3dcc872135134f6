"""The bookkeeping fields every backend carries, declared once.

Each backend (transformers, llama.cpp, a model server) is a dataclass of its
own handles (a torch module, a llama.cpp context, an HTTP client) plus the
same record of where the model came from, how long it took to load, its one
cost counter and the lock every public call holds.  Those shared fields live
here, keyword-only, so a backend lists only what is its own.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from .interface import ForwardCounter


@dataclass(eq=False, kw_only=True)
class BackendFields:
    revision: str = ""  # the weights' revision or checksum ("" for a server: the server knows)
    source: str = ""  # where the model came from (a file, a hub id, a server URL)
    context_length: int = 8192
    counter: ForwardCounter = field(default_factory=ForwardCounter)
    lock: threading.RLock = field(default_factory=threading.RLock)
    load_seconds: float = 0.0
    load_note: str = ""  # why this backend and not the one asked for ("" when it is)
