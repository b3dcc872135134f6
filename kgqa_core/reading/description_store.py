"""The model's descriptions of relation names, kept on disk so a new process does not ask for them again.

Why: a description depends only on the model (its weights, backend and number format) and on its prompt (the
instruction, the made-up examples, the relation and its facts), and greedy decoding gives the same words for the
same prompt.  Within a process `drafting.describe_relations` keeps them in memory; without this store every new
process (each `eval` run, each shard, the app after a restart) asked the model again for every relation it met,
about 70 prompt tokens read and 4-5 written a relation, the first time each is met.  An entry is named by a hash
of the model's identity and the whole prompt, so a changed prompt or another model file never finds an old entry.

Only models whose weights have a fixed identity are kept (a packaged model's checksum, a GGUF file's size and
time); a model server (whose weights the workbench cannot see) or an unversioned local folder is asked each time.
``KGQA_DESCRIPTION_CACHE=0`` turns the store off; a folder's path there keeps it in that folder instead of the
workbench's cache folder (`files.cache_root`).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..files import atomic_write_bytes, cache_root

# a description is a handful of short aliases; anything larger is not one of ours
MAX_ENTRY_BYTES = 4096


def _folder() -> Path | None:
    """Where the store is (None: turned off)."""
    value = os.environ.get("KGQA_DESCRIPTION_CACHE", "1").strip()
    if value.lower() in ("0", "false", "no", "off"):
        return None
    if value.lower() in ("", "1", "true", "yes", "on"):
        return cache_root() / "descriptions"
    return Path(value).expanduser()


def model_identity(model: Any) -> str:
    """The model's weights, backend and number format as one string ("" when they have no fixed identity)."""
    revision = str(getattr(model, "revision", "") or "")
    if not revision or revision == "local":
        return ""
    parts = (getattr(model, "backend", ""), getattr(model, "name", ""), revision, str(getattr(model, "dtype", "")))
    return "\x1f".join(str(p) for p in parts)


@dataclass
class DescriptionStore:
    """A folder of descriptions for one model, one small JSON file per prompt."""

    folder: Path
    identity: str

    @classmethod
    def for_model(cls, model: Any) -> "DescriptionStore | None":
        """The store for `model`, or None (the store is off, or the model has no fixed identity)."""
        identity, folder = model_identity(model), _folder()
        if not identity or folder is None:
            return None
        return cls(folder, identity)

    def _path(self, prompt: str) -> Path:
        digest = hashlib.sha256(f"{self.identity}\x1e{prompt}".encode("utf-8")).hexdigest()
        return self.folder / digest[:2] / f"{digest[2:34]}.json"

    def get(self, prompt: str) -> list[str] | None:
        """The aliases saved for this prompt, or None (never asked, or the entry cannot be read: ask again)."""
        path = self._path(prompt)
        try:
            if path.stat().st_size > MAX_ENTRY_BYTES:
                return None
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        aliases = data.get("aliases") if isinstance(data, dict) else None
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            return None
        return list(aliases)

    def put(self, prompt: str, aliases: list[str]) -> None:
        """Save the aliases (an empty list too: the model said nothing the name does not); a failed write is
        only a lost saving."""
        try:
            atomic_write_bytes(self._path(prompt), json.dumps({"aliases": list(aliases)}).encode("utf-8"))
        except OSError:
            pass
