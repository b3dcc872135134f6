"""Choosing a backend: names, the default, $KGQA_BACKEND, the fallback note, GGUF-only llama.cpp."""

import pytest

from kgqa_core.models import backends, manager
from kgqa_core.models.manager import ModelLoadError, load_model


def test_names_are_normalised_and_unknown_ones_refused():
    assert backends.normalise("LLAMA.CPP") == "llama.cpp" and backends.normalise("hf") == "transformers"
    assert backends.normalise("auto") is None and backends.normalise("") is None
    with pytest.raises(backends.BackendError, match="choose llama.cpp or transformers"):
        backends.normalise("vllm-ish")


def test_env_var_sets_the_default(monkeypatch):
    monkeypatch.setenv("KGQA_BACKEND", "transformers")
    assert backends.default_backend() == "transformers"
    assert backends.resolve(None) == ("transformers", "")
    assert backends.resolve("llama.cpp")[0] in ("llama.cpp", "transformers")  # explicit beats the env var


def test_default_on_this_cpu_is_llama_cpp_when_installed(monkeypatch):
    monkeypatch.delenv("KGQA_BACKEND", raising=False)
    if backends.gpu_present():
        assert backends.default_backend() == "transformers"
    elif backends.llama_cpp_status():
        assert backends.default_backend() == "transformers"
    else:
        assert backends.default_backend() == "llama.cpp"


def test_missing_llama_cpp_falls_back_with_one_line(monkeypatch):
    monkeypatch.setattr(backends, "llama_cpp_status", lambda: "llama-cpp-python is not usable (No module named 'llama_cpp')")
    name, note = backends.resolve("llama.cpp")
    assert name == "transformers" and "using transformers instead" in note and "\n" not in note


def test_llama_cpp_refuses_a_hugging_face_folder_in_one_line(tmp_path):
    folder = tmp_path / "hf-model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    if backends.llama_cpp_status():
        pytest.skip(f"llama.cpp backend unavailable: {backends.llama_cpp_status()}")
    with pytest.raises(ModelLoadError) as err:
        load_model(str(folder), backend="llama.cpp")
    msg = str(err.value)
    assert "GGUF" in msg and "--backend transformers" in msg and "\n" not in msg


def test_loaded_models_are_keyed_by_backend(small_model, llama_model):
    assert load_model("smollm2-135m", backend="transformers", dtype="fp32") is small_model  # the fixture's dtype
    assert load_model("smollm2-135m", backend="llama.cpp") is llama_model
    assert small_model is not llama_model
    assert manager._is_gguf_source("smollm2-135m") and not manager._is_gguf_source("some/hub-id")
