"""A run whose reading embedded a relation named in another language by the model's description alone
(`vocabulary.MEANING_ONLY`, names of another language the embedder holds whole): Replay says which, in words."""

from __future__ import annotations

from pathlib import Path

from apptest import assert_clean, chain_graph, open_replay, shown_texts
from kgqa_core.trace.schema import Trace

# a real DoG run (qwen2.5-coder-1.5b, llama.cpp) on the DBpedia graph, saved by `kgqa_core ask --trace-out` at 65ae3f1:
# "who is before the leader of Monarchy of the North?", `avant` (French) described "before, earlier than"
SAVED = Path(__file__).resolve().parents[1] / "reading" / "data" / "monarchy_meaning_alone.json"
SAID = "matched the question's words to avant by the description alone, not the name"


def test_replay_says_which_relation_was_read_by_its_description_alone(runs_dir):
    trace = Trace.from_json(SAVED.read_text(encoding="utf-8"))
    reading = trace.steps[0]
    assert reading.kind == "reading.plan" and SAID in reading.note
    assert "Monarchy of the North -> leader -> avant (2 hop(s), 100% sure)" in reading.note
    assert [a.text for a in trace.answers] == ["Charles Ier de Portugal"]
    at = open_replay(runs_dir, trace, chain_graph(trace, "monarchy"))
    assert_clean(at)
    shown = [t.replace("\\", "") for t in shown_texts(at)]
    assert any(SAID in t for t in shown), "the reading's note is not on the page"
