"""A run whose question reading was read back from its likeliest walks (reading_read_back): Replay says so."""

from __future__ import annotations

from pathlib import Path

from apptest import assert_clean, chain_graph, open_replay, shown_texts
from kgqa_core.trace.schema import Trace

# a real DoG run (qwen2.5-coder-1.5b, llama.cpp) on the DBpedia dev graph, saved by `kgqa_core ask --trace-out`
SAVED = Path(__file__).resolve().parents[1] / "reading" / "data" / "rasmus_read_back.json"
SAID = "so the question was read back from its 3 likeliest walks"


def test_replay_shows_the_read_back_and_its_figures(runs_dir):
    trace = Trace.from_json(SAVED.read_text(encoding="utf-8"))
    reading = trace.steps[0]
    assert reading.kind == "reading.plan" and SAID in reading.note
    assert "reads.reading (the question read back from its walks)" in [c.purpose for c in reading.model_calls]
    assert trace.answers[0].text == "Amter du Danemark"  # the walk read back likeliest reaches the subdivision
    at = open_replay(runs_dir, trace, chain_graph(trace, "rasmus"))
    assert_clean(at)
    shown = [t for t in shown_texts(at) if "read back from its 3 likeliest walks" in t.replace("\\", "")]
    assert shown, "the reading's note is not on the page"
    assert any("nomDeDivision -32.5" in t.replace("\\", "") for t in shown)
