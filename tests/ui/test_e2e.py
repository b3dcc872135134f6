"""Headless Chromium check: a hostile graph's names never run as script in the drawn graph.

The whole app in a browser (ask, replay, compare, explore, stop) is tests/browser/test_journey.py (Playwright).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile

import pytest

from kgqa_ui.trace_scene import step_scene
from kgqa_ui.vis_html import render_html

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser") if shutil.which(n)), None)
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="Debian chromium not installed (apt-get install chromium)")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run"]


@needs_chromium
def test_hostile_names_do_not_execute_in_a_browser(tmp_path):
    """Render a graph whose names are script/HTML injections and read back the live DOM."""
    from kgqa_core.graph.knowledge_graph import KnowledgeGraph

    g = KnowledgeGraph.from_triplets([
        ("<img src=x onerror=\"document.body.dataset.pwned='1'\">", "<script>document.body.dataset.pwned='2'</script>", "ok"),
        ("ok", "</script><script>document.body.dataset.pwned='3'</script>", "fine"),
    ], name="hostile")
    from kgqa_core.trace.schema import Trace

    tr = Trace(method="dog", question="q", topic_entities=["ok"])
    page = tmp_path / "g.html"
    page.write_text(render_html(step_scene(tr, 0, g), title="<script>document.body.dataset.pwned='4'</script>"), encoding="utf-8")
    with tempfile.TemporaryDirectory() as profile:
        out = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=5000",
                              "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    dom = out.stdout
    assert 'data-ready="1"' in dom, "the graph was drawn and stabilised"
    assert "data-pwned" not in dom, "an injected script or handler ran"
    assert "<img src=\"x\"" not in dom and "<img src=x" not in dom
