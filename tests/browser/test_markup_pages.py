"""In a real browser: a trace full of Markdown/HTML never makes the page fetch anything or create elements.

The trace and its graph hold ``![x](http://evil.example/t.png)``, links,
``<img src=...>``, ``<a href=...>``, backticks and ``$math$`` in every text
field (question, error, notes, step kinds and titles, answers, entity and
relation names, candidate labels, model text).  Replay (stepping through
every step) and Compare are loaded; no request may leave the loopback (the
``app_page`` fixture fails the test otherwise) and no ``img``/``a`` element
may point at the outside host, in the page or in any graph iframe.
"""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ui"))

import ui_fixtures as F  # noqa: E402
from .conftest import save_screenshot, wait_for_app_idle  # noqa: E402
from kgqa_ui.run_store import RunStore  # noqa: E402

GRAPH_READY = """() => [...document.querySelectorAll('iframe')].some(f => { try {
    const g = f.contentDocument && f.contentDocument.getElementById('graph');
    return g && g.dataset.ready === '1'; } catch (e) { return false; } })"""


def _outside_elements(page) -> list[str]:
    """img/a/iframe/script elements (in the page and every frame) whose address names the outside host."""
    found: list[str] = []
    for frame in page.frames:
        try:
            found += frame.evaluate(
                """(host) => [...document.querySelectorAll('img, a, iframe, script, link, source, video, audio')]
                     .map(e => { let p = e, ids = []; while (p) { if (p.dataset && p.dataset.testid) ids.push(p.dataset.testid); p = p.parentElement; }
                                  return ids.slice(0, 4).join('<') + ' :: ' + e.outerHTML.slice(0, 200); })
                     .filter(h => (h.match(/(src|href|srcset)=["'][^"']*/gi) || []).some(a => a.includes(host)))""",
                F.EVIL_HOST)
        except Exception:  # a frame detached while we looked
            continue
    return found


def _to_evil(urls: list[str]) -> list[str]:
    return [u for u in urls if (urlparse(u).hostname or "").endswith(F.EVIL_HOST)]


def _exceptions(page) -> list[str]:
    return page.locator('[data-testid="stException"]').all_inner_texts()


@pytest.fixture(scope="module")
def markup_runs(app_server):
    g = F.markup_graph()
    store = RunStore(app_server.runs_dir)
    return store.save(F.markup_trace(g), g).run_id, store.save(F.markup_trace(g, method="cot"), g).run_id


def test_replay_of_a_markup_trace_fetches_nothing_and_creates_no_element(app_server, markup_runs, app_page,
                                                                          request_log):
    app_page.goto(f"{app_server.url}/replay?run={markup_runs[0]}")
    app_page.wait_for_function(GRAPH_READY, timeout=60_000)
    wait_for_app_idle(app_page)
    for step in range(4):
        assert not _exceptions(app_page), _exceptions(app_page)
        assert not _outside_elements(app_page)
        # the payload is on the page as text
        assert "![x](http://evil.example/t.png)" in app_page.inner_text("body") or step
        app_page.get_by_role("button", name="Next").click()
        wait_for_app_idle(app_page)
        app_page.wait_for_timeout(800)
    save_screenshot(app_page, "markup-replay")
    # labels are readable without zooming: every label shown (HTML over the canvas) at least 12 px on screen,
    # and a label vis-network draws inside a shape too (its size times the zoom)
    sizes = [f.evaluate("""() => { const n = window.kgqaNetwork; if (!n) return 99;
        const s = n.getScale(), sizes = [...document.querySelectorAll('.lbl')]
          .filter(e => getComputedStyle(e).display !== 'none').map(e => parseFloat(getComputedStyle(e).fontSize));
        n.body.data.nodes.get().forEach(x => { if (x.label) sizes.push(x.font.size * s); });
        return sizes.length ? Math.min(...sizes) : 99; }""") for f in app_page.frames if f != app_page.main_frame]
    drawn = [x for x in sizes if x < 99]
    assert drawn and min(drawn) >= 11.9, sizes
    app_page.wait_for_timeout(1000)  # late image loads would show up in the request log
    assert not _to_evil(request_log.urls), _to_evil(request_log.urls)


def test_compare_and_a_hostile_run_parameter_fetch_nothing(app_server, markup_runs, app_page, request_log):
    app_page.goto(f"{app_server.url}/compare")
    app_page.wait_for_function(GRAPH_READY, timeout=60_000)
    wait_for_app_idle(app_page)
    assert not _exceptions(app_page)
    assert not _outside_elements(app_page)
    save_screenshot(app_page, "markup-compare")
    app_page.goto(f"{app_server.url}/replay?run=x%60%21%5Bi%5D(http%3A%2F%2Fevil.example%2Fu.png)")
    wait_for_app_idle(app_page)
    app_page.wait_for_timeout(1000)
    assert not _exceptions(app_page)
    assert not _outside_elements(app_page)
    assert not _to_evil(request_log.urls), _to_evil(request_log.urls)
