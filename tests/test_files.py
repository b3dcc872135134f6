"""The shared file helpers every reader and writer goes through."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest

from kgqa_core.files import (
    JsonProblem,
    atomic_write_text,
    jsonl_line,
    loads_json,
    scrub_machine_paths,
    split_lines,
)


def test_split_lines_counts_newlines_only():
    text = "a\u2028b\r\nc\x0cd\x85e\n\nf"
    assert split_lines(text) == [(1, "a\u2028b"), (2, "c\x0cd\x85e"), (3, ""), (4, "f")]
    assert split_lines("x\n") == [(1, "x")] and split_lines("") == []


def test_jsonl_line_escapes_every_line_break_and_round_trips():
    obj = {"q": "a\u2028b\u2029c\x85d\x0ce\nf\rg\x1ch"}
    line = jsonl_line(obj)
    assert len(line.splitlines()) == 1 and json.loads(line) == obj
    with pytest.raises(ValueError):
        jsonl_line({"x": float("nan")})


def test_loads_json_refuses_nan_and_deep_nesting_in_one_line():
    with pytest.raises(JsonProblem) as err:
        loads_json('{"a": 1,\n "b": NaN}')
    assert err.value.line == 2 and "NaN" in str(err.value)
    with pytest.raises(JsonProblem, match="nested too deeply") as err:
        loads_json("[" * 100_000)
    assert "\n" not in str(err.value)
    assert loads_json('{"a": "NaN"}') == {"a": "NaN"}


def test_atomic_write_leaves_no_temp_files(tmp_path):
    target = tmp_path / "d" / "x.json"
    atomic_write_text(target, "one")
    atomic_write_text(target, "two")
    assert target.read_text() == "two" and [p.name for p in target.parent.iterdir()] == ["x.json"]


def test_scrub_replaces_machine_folders_only_where_a_path_starts():
    app = str(Path(__file__).resolve().parents[1])
    home = os.path.expanduser("~")
    tmp = tempfile.gettempdir()
    value = {"e": f"{app}/kgqa_core/cli.py; {home}/models/m.gguf; {tmp}/x", "keep": [f"a{home}", "plain"]}
    out = scrub_machine_paths(value)
    assert out["e"] == "<app>/kgqa_core/cli.py; ~/models/m.gguf; <tmp>/x"
    assert out["keep"] == value["keep"]
