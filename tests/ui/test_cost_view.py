"""The run's cost breakdown under its summary: a small table on the Ask card (folded) and on Replay (AppTest)."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

import ui_fixtures as F
from apptest import assert_clean, open_app
from kgqa_core.trace.schema import CostBreakdown
from kgqa_ui.run_store import RunStore

COSTS = CostBreakdown(
    seconds={"prompt_reading": 6.0, "writing": 3.0, "forced_runs": 0.5, "[x](http://evil.example) <b>": 0.25,
             "other": 0.25},
    entries={"prompt_reading": 2, "writing": 5, "forced_runs": 4}, prompt_tokens_read=512, prompt_tokens_cached=1056,
    tokens_written=80, tokens_forced=30, model_calls=3)


def _with_costs(costs=COSTS):
    trace = F.dog_trace()
    trace.seconds, trace.costs = 10.0, costs
    return trace


def _card(trace, compact: bool) -> AppTest:
    def script(trace_json: str, compact: bool) -> None:
        import streamlit as st

        from kgqa_core.trace.schema import Trace
        from kgqa_ui import panels

        trace = Trace.from_json(trace_json)
        if compact:  # the Ask page's result card
            panels.trace_summary(trace, compact=True, show_question=True)
        else:  # Replay's details, inside an expander
            with st.expander("Chains, cost and parameters", expanded=True):
                panels.trace_summary(trace)

    return AppTest.from_function(script, args=(trace.to_json(), compact), default_timeout=60).run()


def _table(at: AppTest) -> list[dict]:
    frames = [df.value for df in at.dataframe if "phase" in df.value.columns]
    assert len(frames) == 1, [df.value.columns for df in at.dataframe]
    return frames[0].to_dict("records")


def test_the_card_and_replay_show_the_phases_as_text():
    for compact in (True, False):
        at = _card(_with_costs(), compact)
        assert_clean(at)
        rows = _table(at)
        assert [r["phase"] for r in rows][:3] == ["model reading prompts (beyond the cached prefix)",
                                                  "model writing text",
                                                  "model writing triplets under the trie (forced runs)"]
        assert rows[0]["seconds"] == 6.0 and rows[0]["share"] == "60%" and rows[0]["times"] == 2
        assert "[x](http://evil.example) <b>" in [r["phase"] for r in rows]  # a cell: text, never markup
        captions = " ".join(c.value for c in at.caption)
        assert "512 prompt tokens read beyond the cached prefix" in captions
        plain = captions.replace("\\", "")  # the caption is escaped Markdown: text, never markup
        assert "80 tokens written (30 of them forced by the graph's trie)" in plain
        if compact:  # folded on the card
            assert [e.label for e in at.expander] == ["Where the time went (10.0 s)"]


def test_an_old_trace_without_a_breakdown_shows_no_table():
    at = _card(_with_costs(None), compact=True)
    assert_clean(at)
    assert not [df for df in at.dataframe if "phase" in df.value.columns]


def test_replay_page_draws_a_saved_run_with_its_breakdown(runs_dir, graph):
    run_id = RunStore(runs_dir).save(_with_costs(), graph).run_id
    at = open_app("pages/replay.py", run=run_id)
    assert_clean(at)
    assert _table(at)[1]["phase"] == "model writing text"
