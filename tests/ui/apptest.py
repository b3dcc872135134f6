"""What the AppTest-driven UI tests share: opening the app on a page, checking it is clean, the test model."""

from __future__ import annotations

from typing import Iterable

import pytest
from streamlit.testing.v1 import AppTest

from conftest import APP

TIMEOUT = 120


def open_app(page: str | None = None, **query) -> AppTest:
    """The app run once, on `page` (the Ask page when None), with `query` as its URL parameters."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    if page:
        at.switch_page(page)
    for k, v in query.items():
        at.query_params[k] = v
    return at.run()


def assert_clean(at: AppTest) -> None:
    """No exception and no error element on the page."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def small_model_or_skip(methods: Iterable[str] = ()) -> None:
    """Skip (with the reason) when the 135M test model or one of `methods` is not available here."""
    from kgqa_core.models.registry import PACKAGED_MODELS, is_installed

    if not is_installed(PACKAGED_MODELS["smollm2-135m"]):
        pytest.skip("the smollm2-135m model package is not installed")
    if methods:
        from kgqa_core.methods.base import available_methods

        missing = set(methods) - set(available_methods())
        if missing:
            pytest.skip(f"methods not importable: {sorted(missing)}")
