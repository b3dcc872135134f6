"""Shared fixtures: the 135M packaged model, loaded once per test session."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# the model's relation descriptions are not read back from an earlier test session's answers (each test asks the
# model as a first process would; tests/reading/test_description_store.py turns the store on in a folder of its own)
os.environ.setdefault("KGQA_DESCRIPTION_CACHE", "0")
if "KGQA_RATES_FILE" not in os.environ:  # tests measure into their own rates, never this machine's (kgqa_core.rates)
    import tempfile

    os.environ["KGQA_RATES_FILE"] = os.path.join(tempfile.mkdtemp(prefix="kgqa-rates-"), "rates.json")

import pytest


def _llama_cpp_missing() -> str:
    from kgqa_core.models.backends import llama_cpp_status

    return llama_cpp_status()


@pytest.fixture(scope="session")
def small_model():
    """SmolLM2-135M-Instruct on transformers: the model most of the suite runs with (CPU).

    fp32, not the bf16 the app picks on AVX512-BF16 CPUs: the exactness tests (an option's score must
    not move with the batch it is scored in, to 1e-3) hold in fp32 on every CPU, and bf16 rounding
    differs between CPUs, so the suite gives the same results on any machine.
    """
    from kgqa_core.models import load_model

    return load_model("smollm2-135m", backend="transformers", dtype="fp32")


@pytest.fixture(scope="session")
def llama_model():
    """SmolLM2-135M-Instruct on llama.cpp (the same GGUF file, not dequantised)."""
    reason = _llama_cpp_missing()
    if reason:
        pytest.skip(f"llama.cpp backend unavailable: {reason}")
    from kgqa_core.models import load_model

    return load_model("smollm2-135m", backend="llama.cpp")


@pytest.fixture(scope="session", params=["transformers", "llama.cpp"])
def backend_model(request):
    """The 135M model on each backend: method tests that take it run on both."""
    if request.param == "llama.cpp":
        return request.getfixturevalue("llama_model")
    return request.getfixturevalue("small_model")
