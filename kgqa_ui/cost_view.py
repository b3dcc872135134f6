"""Where a run's time went: the trace's per-phase cost breakdown (`Trace.costs`) as a small table.

Shown under a run's summary on the Ask page's result card, Replay and Runs
(`panels.trace_summary`), folded in an expander so the answer stays on top.
The rows come from `trace_tables.cost_rows`; cells are shown by
``st.dataframe`` (text, never markup) and the counts line through `md_text`.
A trace written before the breakdown existed shows nothing.
"""

from __future__ import annotations

import contextlib

import streamlit as st

from kgqa_core.trace.schema import Trace

from .html_utils import md_text
from .trace_tables import cost_counts_line, cost_rows


def cost_breakdown(trace: Trace, fold: bool = True) -> None:
    """Seconds per phase, their share, how often each ran, and the token counts; in an expander when ``fold``.

    ``fold=False`` where the summary may already sit in an expander (Streamlit does not nest them).
    """
    rows = cost_rows(trace)
    if not rows:
        return
    title = f"Where the time went ({trace.seconds:.1f} s)"
    with st.expander(title) if fold else contextlib.nullcontext():
        if not fold:
            st.markdown("**" + md_text(title) + "**")
        st.dataframe(rows, hide_index=True, width="stretch",
                     column_config={"times": st.column_config.NumberColumn("times", help="how often the phase ran")})
        st.caption(md_text(cost_counts_line(trace)))
