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
