"""The workbench as a person uses it, in a real browser against a real server (issue 13's journey)."""

from __future__ import annotations

from conftest import assert_no_error, save_screenshot, wait_for_app_idle


def test_the_app_loads_offline_with_no_error(app_server, app_page, request_log):
    app_page.goto(app_server.url)
    app_page.get_by_role("heading", name="Ask a question").wait_for()
    wait_for_app_idle(app_page)
    app_page.wait_for_timeout(1500)  # late requests: favicon, fonts, icons
    assert_no_error(app_page, "Ask")
    save_screenshot(app_page, "00-ask-first-load")
    assert any(u.startswith(app_server.url) for u in request_log.urls)
