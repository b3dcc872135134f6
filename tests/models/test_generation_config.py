"""`GenerationConfig`: one request's settings, normalised and checked where they are made."""

from __future__ import annotations

import sys

import pytest

from kgqa_core.models.generation import GenerationConfig


def test_stop_strings_become_a_tuple_without_empty_ones():
    assert GenerationConfig(stop_strings=["]", "", "\n\n"]).stop_strings == ("]", "\n\n")
    assert GenerationConfig(stop_strings="\n").stop_strings == ("\n",)  # one string is one stop, not its characters
    assert GenerationConfig().stop_strings == ()


@pytest.mark.parametrize("bad", [-1, 2.5, "12", True, None])
def test_max_new_tokens_must_be_a_whole_number_at_least_zero(bad):
    with pytest.raises(ValueError, match="max_new_tokens must be a whole number >= 0"):
        GenerationConfig(max_new_tokens=bad)


def test_frozen_and_comparable():
    config = GenerationConfig(12, stop_strings=["\n"])
    assert config == GenerationConfig(12, stop_strings=("\n",))
    with pytest.raises(AttributeError):
        config.max_new_tokens = 3  # type: ignore[misc]


def test_building_a_config_does_not_load_the_backends():
    import subprocess

    code = ("import sys; from kgqa_core.models.generation import GenerationConfig; GenerationConfig(8); "
            "print(sorted(m for m in ('torch', 'transformers', 'kgqa_core.models.manager') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
