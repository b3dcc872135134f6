"""Prompt prefixes kept on disk, so a new process does not read the instruction and examples again.

Which prefix to keep is found, not declared: when a prompt reuses at least
``min_tokens`` tokens of a *different* cached prompt, those shared tokens
are the part every question of a method repeats (the instruction and the
in-context examples; the graph and the question come after them).  The
backend writes their keys/values once per model and prompt version; the
file is named by the length and a hash of the token ids, so a changed
prompt (another version) simply does not match and an old file is never
used for the wrong tokens.  Writes are atomic (a temporary file renamed).

``KGQA_PROMPT_CACHE=0`` turns it off.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ..files import cache_root

_NAME = re.compile(r"^(\d+)-([0-9a-f]{24})\.(\w+)$")


def ids_digest(ids: Sequence[int]) -> str:
    return hashlib.sha256(np.asarray(list(ids), dtype=np.int64).tobytes()).hexdigest()[:24]


class PromptStateStore:
    """A folder of saved prefixes for one model file on one backend (``ext`` names the format)."""

    def __init__(self, folder: Path, ext: str, min_tokens: int = 256, max_files: int = 32) -> None:
        self.folder = folder
        self.ext = ext
        self.min_tokens = min_tokens
        self.max_files = max_files
        self._known: set[str] = set()

    @classmethod
    def for_model(cls, backend: str, name: str, revision: str, ext: str,
                  min_tokens: int = 256) -> "PromptStateStore | None":
        if os.environ.get("KGQA_PROMPT_CACHE", "1").strip().lower() in ("0", "false", "no", "off"):
            return None
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", f"{backend}-{name}-{revision}")
        return cls(cache_root() / "prompt_cache" / safe, ext, min_tokens)

    def path_for(self, ids: Sequence[int]) -> Path:
        return self.folder / f"{len(ids)}-{ids_digest(ids)}.{self.ext}"

    def has(self, ids: Sequence[int]) -> bool:
        p = self.path_for(ids)
        if p.name in self._known:
            return True
        if p.is_file():
            self._known.add(p.name)
            return True
        return False

    def lookup(self, ids: Sequence[int], accept: Callable[[int], bool] | None = None) -> tuple[int, Path] | None:
        """The longest saved prefix of ``ids`` that leaves at least one token to read (and whose length `accept`s)."""
        try:
            names = os.listdir(self.folder)
        except OSError:
            return None
        found = []
        for name in names:
            m = _NAME.match(name)
            if m and m.group(3) == self.ext:
                found.append((int(m.group(1)), m.group(2), name))
        for n, digest, name in sorted(found, reverse=True):
            if n >= self.min_tokens and n < len(ids) and (accept is None or accept(n)) and \
                    ids_digest(ids[:n]) == digest:
                return n, self.folder / name
        return None

    def temp_path(self, final: Path) -> Path:
        self.folder.mkdir(parents=True, exist_ok=True)
        return final.with_name(f".{final.name}.{os.getpid()}.tmp")

    def prune(self) -> None:
        """Keep the most recently written ``max_files`` prefixes (old prompt versions go)."""
        try:
            files = sorted((p for p in self.folder.iterdir() if _NAME.match(p.name)), key=lambda p: p.stat().st_mtime)
        except OSError:
            return
        for p in files[: max(0, len(files) - self.max_files)]:
            p.unlink(missing_ok=True)
            self._known.discard(p.name)
