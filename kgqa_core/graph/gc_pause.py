"""Pause Python's cyclic garbage collector while building large indexes.

Loading a graph or indexing its entity names creates millions of small
objects and no reference cycles; the collector's repeated passes over them
cost about 30% of the build time.  Shared by the loaders and the linker, so it
lives in its own module (it used to make `loaders` and `linking` import each
other through `knowledge_graph`).
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def no_gc() -> Iterator[None]:
    """Disable the cyclic GC inside the block; restore the previous setting after."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
