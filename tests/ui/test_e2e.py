"""Headless Chromium checks: the real app draws a graph, and a hostile graph's names never run as script."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import ui_fixtures as F
from conftest import ROOT
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


@needs_chromium
def test_e2e_ask_then_replay_screenshot(tmp_path):
    """The whole app in Chromium: type a question, run it with the small model, replay, screenshot the graph."""
    from kgqa_core.methods.base import available_methods
    from kgqa_core.models.registry import PACKAGED_MODELS, is_installed

    if not available_methods():
        pytest.skip("no reasoning method module exists yet")
    if not is_installed(PACKAGED_MODELS["smollm2-135m"]):
        pytest.skip("the smollm2-135m model package is not installed")
    out = tmp_path / "shot.png"
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "e2e_screenshot.py"), "--out", str(out),
                           "--model", "smollm2-135m", "--timeout", "900"],
                          capture_output=True, text=True, timeout=1200, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-2000:] + proc.stdout[-2000:]
    data = out.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 30_000
