"""The packaged sentence-embedding model loads offline; a missing one gives None."""

from __future__ import annotations

import numpy as np

from kgqa_core.graph import load_embedder
from kgqa_core.graph.embeddings import packaged_model_dir


def test_packaged_weights_are_found():
    path = packaged_model_dir()
    assert path is not None and (path / "model.safetensors").is_file()


def test_real_load_and_normalised_encoding(embedder):
    assert embedder.name == "all-MiniLM-L6-v2"
    assert load_embedder() is embedder  # cached per process
    v = embedder.encode(["(Tom Hanks, starred_in, Forrest Gump)", "which films did Tom Hanks act in", "(Paris, capital_of, France)"])
    assert v.shape == (3, 384)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    sims = v @ v.T
    assert sims[0, 1] > sims[1, 2] + 0.2  # the related pair is much closer
    assert embedder.encode([]).shape == (0, 384)


def test_missing_model_returns_none(tmp_path):
    assert load_embedder(tmp_path / "no-such-model") is None


def test_a_full_cache_keeps_serving_question_after_question(embedder, monkeypatch):
    """The 26th question of a whole-KB eval failed with a KeyError: the full cache was emptied mid-call,
    taking this call's own cached texts with it. Now the least recently used texts go, after the rows are read."""
    from kgqa_core.graph import embeddings

    monkeypatch.setattr(embeddings, "_CACHE_LIMIT", 4)
    fresh = embeddings.Embedder(embedder.name, embedder.model, embedder.device)  # its own cache
    texts = [f"(Film {i}, directed_by, Director {i})" for i in range(8)]
    first = fresh.encode(texts[:4])
    again = fresh.encode(texts[2:6])  # two cached, two new: over the limit
    assert np.allclose(again[:2], first[2:4], atol=1e-6)
    assert np.allclose(again, embedder.encode(texts[2:6]), atol=1e-5)
    assert list(fresh._cache) == texts[2:6]  # the least recently used (0, 1) went first
    fresh.encode([texts[3], texts[6]])  # 3 used again: 2 is now the oldest
    assert list(fresh._cache) == [texts[4], texts[5], texts[3], texts[6]]
    # a call with more texts than the limit still gets every row
    assert fresh.encode(texts).shape == (8, 384) and len(fresh._cache) == 4
