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

The store is kept to `MAX_ENTRIES` descriptions: the first time a process opens a folder, the entries least
recently read or written beyond that are removed (a read touches its entry), so a machine that met many graphs
does not keep every description it ever asked for; a removed one is only asked again.
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
# ~100 bytes each: 20,000 relation descriptions are a few megabytes on disk, and one scan a process
MAX_ENTRIES = 20_000
_PRUNED: set[str] = set()  # folders this process has pruned already


def prune(folder: Path, keep: int = MAX_ENTRIES) -> int:
    """Remove the entries of `folder` beyond the `keep` most recently used (by modification time, which a read
    touches); returns how many were removed.  Failures are ignored: the store is only a saving."""
    try:
        entries = []
        for path in folder.glob("??/*.json"):
            try:
                entries.append((path.stat().st_mtime, str(path)))
            except OSError:
                continue
    except OSError:
        return 0
    if len(entries) <= keep:
        return 0
    entries.sort(reverse=True)
    removed = 0
    for _, path in entries[keep:]:
        try:
            os.remove(path)
            removed += 1
        except OSError:
            pass
    return removed


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
        if str(folder) not in _PRUNED:
            _PRUNED.add(str(folder))
            prune(folder, MAX_ENTRIES)
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
        try:
            os.utime(path)  # read now: the last to be pruned
        except OSError:
            pass
        return list(aliases)

    def put(self, prompt: str, aliases: list[str]) -> None:
        """Save the aliases (an empty list too: the model said nothing the name does not); a failed write is
        only a lost saving."""
        try:
            atomic_write_bytes(self._path(prompt), json.dumps({"aliases": list(aliases)}).encode("utf-8"))
        except OSError:
            pass
