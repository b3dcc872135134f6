"""Make sure pages run inside app.py's `st.navigation`, even on a deep link.

Streamlit (1.67) decides once per process whether an app uses the legacy
``pages/`` auto-discovery: if a ``pages/`` folder exists it starts in legacy
mode and only switches to `st.navigation` after app.py has run once.  So
when the first request after a restart is a deep link such as
``/replay?run=...`` the page would run alone, without app.py's page config,
sidebar settings and navigation titles.  Each page calls
`ensure_app_navigation()` first: in legacy mode it flips the flag and reruns,
and the rerun goes through app.py to the same page (same URL path).
"""

from __future__ import annotations

import streamlit as st


def ensure_app_navigation() -> None:
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # a future Streamlit without the legacy mode
        return
    if getattr(PagesManager, "uses_pages_directory", None):
        PagesManager.uses_pages_directory = False
        # Rerun only on a session's first run: a rerun drops button clicks, and later runs
        # (Streamlit's AppTest resets the flag on every run) render fine without app.py.
        if not st.session_state.get("_kgqa_nav_seen"):
            st.session_state["_kgqa_nav_seen"] = True
            st.rerun()
    st.session_state["_kgqa_nav_seen"] = True
    from . import persist

    persist.restore()  # a no-op after the connection's first run (app.py usually did it already)
