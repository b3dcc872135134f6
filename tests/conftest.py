"""Shared fixtures: the 135M packaged model, loaded once per test session."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import pytest


@pytest.fixture(scope="session")
def small_model():
    """SmolLM2-135M-Instruct: the model the whole suite runs with (CPU)."""
    from kgqa_core.models import load_model

    return load_model("smollm2-135m")
