"""The answer item's last tokens, written by the names' trie without a model pass (`beam.greedy_triplet`'s
``closes_text``): Replay says so under the answer step's token view, and the step's note says it as text."""

from __future__ import annotations

from pathlib import Path

from apptest import assert_clean, chain_graph, replay_at_step, shown_texts
from kgqa_core.trace.schema import Trace

# a real DoG run (qwen2.5-coder-1.5b, llama.cpp) on the Wikidata dev graph, from `benchmarks/multidomain.py`'s eval
SAVED = Path(__file__).resolve().parent / "data" / "sandman_unread_tail.json"


def test_replay_says_the_names_tail_was_written_without_the_model(runs_dir):
    trace = Trace.from_json(SAVED.read_text(encoding="utf-8"))
    index = next(i for i, s in enumerate(trace.steps) if s.kind == "dog.answer")
    step = trace.steps[index]
    assert step.extra["unread"] == 4 and [p.chosen for p in step.token_view] == [" *"]  # one name: all the trie's
    assert trace.answers[0].text == "Neil Gaiman" and trace.costs.tokens_written > 0
    at = replay_at_step(runs_dir, trace, chain_graph(trace, "sandman"), index)
    assert_clean(at)
    captions = [c.value for c in at.caption]
    assert any("The last 4 tokens of the name are not shown" in c for c in captions), captions
    said = "the last 4 tokens of the answer's name written from the graph once it was the only name left"
    shown = [t.replace("\\", "") for t in shown_texts(at)]
    assert any(said in v for v in shown), shown
