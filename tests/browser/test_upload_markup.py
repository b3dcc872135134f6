"""In a real browser: a graph upload whose content and file name are Markdown/HTML fetches nothing.

Issue 31 found that an N-Triples literal ``"![t](http://127.0.0.1:8765/track.png)"@fr``
made Chromium fetch that URL: the graph's notes went into ``st.caption``
unescaped, and a file name holding Markdown was live in the success line.
The addresses here are on the loopback (the ``app_page`` fixture lets the
loopback through), served by a real tracking server started for the test:
it must receive no request, and the page must request no URL they name.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from playwright.sync_api import expect

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from misbehaving_http import MisbehavingServer  # noqa: E402

from .conftest import assert_no_error, save_screenshot, wait_for_app_idle  # noqa: E402

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082")


@pytest.fixture
def tracker():
    """A real HTTP server on 127.0.0.1 that answers every request with an image and records it."""

    def behave(handler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "image/png")
        handler.send_header("Content-Length", str(len(PNG)))
        handler.end_headers()
        handler.wfile.write(PNG)

    server = MisbehavingServer(behave)
    yield server
    server.close()


def _ntriples(base: str) -> bytes:
    payloads = [f"![t]({base}/track.png)", f"<img src={base}/img.png>", f"[link]({base}/link)",
                f"<a href='{base}/a'>a</a>", f"{base}/bare www.example.org"]
    lines = ['<http://ex.org/Heat> <http://ex.org/directed_by> <http://ex.org/Michael_Mann> .',
             '<http://ex.org/Heat> <http://ex.org/tagline> "A Los Angeles crime saga"@en .']
    for i, text in enumerate(payloads):
        lines.append(f'<http://ex.org/Heat> <http://ex.org/tagline> "{text}"@fr{"-x" * i} .')  # dropped: in the notes
        lines.append(f'<http://ex.org/e{i}> <http://ex.org/motto> "{text}" .')  # kept: entity names
    return ("\n".join(lines) + "\n").encode()


def test_an_upload_with_markup_in_content_and_name_fetches_nothing(app_server, app_page, request_log, tracker):
    page = app_page
    base = tracker.url  # http://127.0.0.1:PORT
    # a file name cannot hold "/", so its Markdown points at a relative address (the app's own host)
    name = "movies ![t](name-track.png) [x](name-link) <img src=name-img.png> `c`.nt"
    page.goto(f"{app_server.url}/")
    page.get_by_role("heading", name="Ask a question").wait_for()
    wait_for_app_idle(page)
    page.locator(".st-key-ask_source").get_by_text("Upload a file", exact=True).click()
    wait_for_app_idle(page)
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').first.set_input_files(
        {"name": name, "mimeType": "application/n-triples", "buffer": _ntriples(base)})
    success = page.locator('[data-testid="stAlertContentSuccess"]').first
    expect(success).to_contain_text("triplets", timeout=60_000)
    wait_for_app_idle(page)
    page.wait_for_timeout(1500)  # late image loads would show up in the logs
    save_screenshot(page, "upload-markup")
    # nothing was fetched from the addresses the file's text and name hold
    assert not tracker.requests, [r["path"] for r in tracker.requests]
    named = [u for u in request_log.urls if base in u or "name-" in u]
    assert not named, named
    for frame in page.frames:  # no element points at those addresses either
        hrefs = frame.evaluate("""() => [...document.querySelectorAll('img, a, source, link, iframe')]
                                          .map(e => e.getAttribute('src') || e.getAttribute('href') || '')""")
        assert not [h for h in hrefs if base in h or "name-" in h], hrefs
    # ... and both are on the page as typed
    expect(success).to_contain_text(name)
    # a note quoting a dropped literal, as text (md_text puts an invisible word joiner into "://"); in the page,
    # not the sidebar, which names the uploaded graph at once (as text too)
    main = page.get_by_test_id("stMain")
    expect(main.locator('[data-testid="stCaptionContainer"]').filter(has_text="track.png").first).to_contain_text(
        "![t](http:")
    expect(page.get_by_test_id("stSidebar")).to_contain_text("Graph: movies ![t](name-track.png)")
    assert_no_error(page, "after the upload")
