"""A graph scene embedded in the page: the vis-network HTML in an iframe sized to its legend.

Its own module so that step views (below `panels` in the layers) can draw a
graph without importing the panels that import them.
"""

from __future__ import annotations

import streamlit as st

from .scene import GraphScene
from .vis_html import render_html


def show_graph(scene: GraphScene, height: int = 520, alt: str = "knowledge graph") -> None:
    extra = 96 + 22 * (len(scene.legend) // 4) + (22 if scene.note else 0)
    st.iframe(render_html(scene, height=height), height=height + extra, alt=alt)
