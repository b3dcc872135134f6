"""A run whose answers the question reading's likeliest plan reordered (plan_leads_answers): Replay says why."""

from __future__ import annotations

from pathlib import Path

from apptest import assert_clean, chain_graph, open_replay
from kgqa_core.answers.plan_lead import NOTE_HEAD
from kgqa_core.trace.schema import Trace
from kgqa_ui.html_utils import md_text

# a real DoG run (qwen2.5-coder-1.5b, llama.cpp) on the DBpedia dev graph, saved by `kgqa_core ask --trace-out`
SAVED = Path(__file__).resolve().parents[1] / "answers" / "data" / "isis_plan_lead.json"


def test_replay_says_the_readings_plan_put_its_end_first(runs_dir):
    trace = Trace.from_json(SAVED.read_text(encoding="utf-8"))
    note = next(n for n in trace.notes if n.startswith(NOTE_HEAD))
    assert [a.text for a in trace.answers][:2] == ["Seth", "Geb"] and trace.extra["plan_lead"]["moved"] == ["Seth"]
    at = open_replay(runs_dir, trace, chain_graph(trace, "isis"))
    assert_clean(at)
    assert any(c.value == "note: " + md_text(note) for c in at.caption), [c.value for c in at.caption]
