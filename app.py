"""The KGQA workbench: ask, replay step by step, compare methods, explore the graph.

Start with ``streamlit run app.py``.  Pages live in ``pages/`` and are wired
here with ``st.navigation`` (the Evaluate page is included when present).
The sidebar holds settings every page shares: where runs are saved and how
much of a graph is drawn.
"""

from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st

ROOT = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from kgqa_ui import persist, sparql_panel, state  # noqa: E402
from kgqa_ui.html_utils import md_text  # noqa: E402
from kgqa_ui.run_store import default_runs_dir  # noqa: E402

# A local favicon: a ":material/..." page icon makes the browser fetch it from an outside font host.
st.set_page_config(page_title="KGQA workbench", page_icon=str(ROOT / "assets" / "favicon.png"), layout="wide")

PAGES = [
    ("ask.py", "Ask", ":material/question_answer:"),
    ("replay.py", "Replay", ":material/slow_motion_video:"),
    ("compare.py", "Compare", ":material/compare_arrows:"),
    ("explore.py", "Explore", ":material/travel_explore:"),
    ("evaluate.py", "Evaluate", ":material/analytics:"),
    ("runs.py", "Runs", ":material/history:"),
]
pages = [
    st.Page(str(ROOT / "pages" / fname), title=title, icon=icon, default=(fname == "ask.py"))
    for fname, title, icon in PAGES
    if (ROOT / "pages" / fname).is_file()
]
nav = st.navigation(pages)


def graph_caption() -> None:
    """The active graph in the sidebar (drawn again after the page ran: an upload changes it)."""
    graph = state.active_graph()
    if graph is not None and sparql_panel.is_store(graph):  # a SPARQL store: its size is not read
        sparql_panel.sidebar_caption(graph)
    elif graph is not None:
        st.caption(f"Graph: **{md_text(graph.name)}** · {len(graph):,} triplets · {len(graph.entities):,} entities")
    elif st.session_state.get("graph_autoload_failed"):
        st.caption(f"No graph loaded ({md_text(st.session_state['graph_autoload_failed'])}); load one on the Ask page.")
    persist.sidebar_note()


persist.restore()  # after F5 or a deep link: the session's graph, question, gold and topics (before any default)
with st.sidebar:
    state.ensure_graph()
    graph_slot = st.empty()
    with graph_slot.container():
        graph_caption()
    with st.expander("Settings", icon=":material/settings:"):
        st.text_input("Runs directory", value=str(default_runs_dir()), key="set_runs_dir",
                      help="Every run's trace is saved here (default: $KGQA_RUNS_DIR or runs/ beside app.py).")
        st.number_input("Max nodes drawn", min_value=20, max_value=2000, value=state.DEFAULT_MAX_NODES, step=20,
                        key="set_max_nodes", help="Graphs never draw more entities than this; a note says what was left out.")
        st.slider("Context entities around the subgraph", 0, 150, state.DEFAULT_CONTEXT, key="set_context",
                  help="Faded neighbours drawn around the query-centric subgraph.")
        from kgqa_core.models.backends import available as available_backends, default_backend

        st.selectbox("Model backend", ["auto"] + available_backends(), key="set_backend",
                     format_func=lambda b: f"auto ({default_backend()})" if b == "auto" else b,
                     help="llama.cpp runs the packaged GGUF file on the CPU (fast); transformers runs a "
                          "dequantised copy on CPU, CUDA or MPS and reads Hugging Face folders.")

        from kgqa_ui.server_panel import render_server_settings

        render_server_settings()

nav.run()
with graph_slot.container():  # the page may have loaded another graph (an upload): no stale name
    graph_caption()
persist.save()
