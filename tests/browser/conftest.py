"""Fixtures for browser tests: the real app in a Streamlit server, driven by Playwright on Debian's Chromium.

Browser downloads are not reachable, so Playwright launches the system
``chromium`` through its executable path; without it every test here is
skipped with the reason.  Each test module gets its own server on a free
127.0.0.1 port with a fresh runs folder and the 135M model, and every page
records each request it makes: a request that leaves the loopback fails the
test (the app must work offline and never call an outside host).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("KGQA_CHROMIUM") or next(
    (shutil.which(n) for n in ("chromium", "chromium-browser") if shutil.which(n)), None)
ARTIFACTS = Path(os.environ.get("KGQA_TEST_ARTIFACTS") or ROOT / "test-artifacts") / "browser"
LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}
# Schemes a page may use without reaching any host.
LOCAL_SCHEMES = {"data", "blob", "about", "chrome-error", "chrome"}

if CHROMIUM is None:
    pytest.skip("Debian's chromium is not installed (apt-get install chromium); browser tests skipped",
                allow_module_level=True)
try:
    import playwright  # noqa: F401
except ImportError:
    pytest.skip("playwright is not installed (pip install -r requirements-dev.txt)", allow_module_level=True)


# ------------------------------------------------------------------ server
def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class AppServer:
    """A running ``streamlit run app.py``: its address, runs folder and log."""

    url: str
    runs_dir: Path
    log_path: Path
    process: subprocess.Popen = field(repr=False)

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")[-chars:]
        except OSError:
            return ""


def _wait_healthy(server: AppServer, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"streamlit exited with {server.process.returncode}:\n{server.log_tail()}")
        try:
            with urllib.request.urlopen(server.url + "/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"streamlit did not answer /_stcore/health within {timeout:.0f}s:\n{server.log_tail()}")


def start_app_server(tmp: Path, model: str = "smollm2-135m", extra_env: dict[str, str] | None = None) -> AppServer:
    port = free_port()
    runs = tmp / "runs"
    log = tmp / "streamlit.log"
    env = {**os.environ, "KGQA_RUNS_DIR": str(runs), "KGQA_APP_MODEL": model, "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false", **(extra_env or {})}
    cmd = [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.port", str(port),
           "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false"]
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    server = AppServer(f"http://127.0.0.1:{port}", runs, log, proc)
    try:
        _wait_healthy(server, timeout=120)
    except Exception:
        stop_app_server(server)
        raise
    return server


def stop_app_server(server: AppServer) -> None:
    if server.process.poll() is None:
        os.killpg(server.process.pid, signal.SIGTERM)
        try:
            server.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.process.pid, signal.SIGKILL)
            server.process.wait(timeout=20)


@pytest.fixture(scope="module")
def app_server(tmp_path_factory) -> AppServer:
    """The app served on a free loopback port (one server per test module), stopped afterwards."""
    server = start_app_server(tmp_path_factory.mktemp("app"))
    yield server
    stop_app_server(server)


# ------------------------------------------------------------------ browser
@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """pytest-playwright's launch arguments, pointed at Debian's Chromium (no browser download)."""
    return {**browser_type_launch_args, "executable_path": CHROMIUM,
            "args": ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--disable-background-networking", "--disable-component-update", "--no-first-run"]}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": {"width": 1400, "height": 1000}}


def is_loopback(url: str) -> bool:
    parsed = urlparse(url)
    if parsed.scheme in LOCAL_SCHEMES:
        return True
    return (parsed.hostname or "") in LOOPBACK_HOSTS or (parsed.hostname or "").startswith("127.")


@dataclass
class RequestLog:
    """Every URL a page (and its frames, workers and web sockets) asked for."""

    urls: list[str] = field(default_factory=list)

    def off_loopback(self) -> list[str]:
        return [u for u in self.urls if not is_loopback(u)]


@pytest.fixture
def request_log() -> RequestLog:
    return RequestLog()


@pytest.fixture
def app_page(page, request_log: RequestLog):
    """A Playwright page whose every request is recorded; requests off the loopback are blocked and fail the test."""
    context = page.context

    def record(request) -> None:
        request_log.urls.append(request.url)

    def guard(route) -> None:
        if is_loopback(route.request.url):
            route.continue_()
        else:
            route.abort()

    context.on("request", record)
    page.on("websocket", lambda ws: request_log.urls.append(ws.url))
    context.route("**/*", guard)
    page.set_default_timeout(60_000)
    yield page
    off = request_log.off_loopback()
    assert not off, f"requests left the loopback: {off[:10]}"


# ------------------------------------------------------------------ helpers
ERROR_SELECTORS = ('[data-testid="stException"]', '[data-testid="stAlertContentError"]')


def error_texts(page) -> list[str]:
    """The text of every exception or error alert on the page (and its frames)."""
    out: list[str] = []
    for frame in page.frames:
        for sel in ERROR_SELECTORS:
            try:
                out += [t.strip() for t in frame.locator(sel).all_inner_texts()]
            except Exception:  # a frame detached while we looked
                continue
    return out


def assert_no_error(page, where: str = "") -> None:
    errs = error_texts(page)
    assert not errs, f"error element on the page{' (' + where + ')' if where else ''}: {errs}"


def save_screenshot(page, name: str, docs_name: str | None = None) -> Path:
    """A full-page PNG kept as a test artefact under test-artifacts/browser/ (or $KGQA_TEST_ARTIFACTS).

    With ``KGQA_DOCS_SCREENSHOTS=1`` a page given a ``docs_name`` is also written to docs/ (one screen,
    1400 x 1000): the README's images are taken from this real run, never from fixtures.
    """
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    if docs_name and os.environ.get("KGQA_DOCS_SCREENSHOTS") == "1":
        page.wait_for_timeout(1500)  # let the graph settle
        page.screenshot(path=str(ROOT / "docs" / docs_name))
    # Streamlit scrolls inside its main block, not the document: grow the viewport to show all of it.
    height = page.evaluate("""() => { const m = document.querySelector('[data-testid="stMain"]');
                                      return m ? m.scrollHeight : document.body.scrollHeight; }""")
    viewport = page.viewport_size or {"width": 1400, "height": 1000}
    page.set_viewport_size({"width": viewport["width"], "height": max(viewport["height"], min(int(height), 6000))})
    page.wait_for_timeout(400)
    page.screenshot(path=str(path), full_page=True)
    page.set_viewport_size(viewport)
    return path


def wait_for_app_idle(page, timeout: float = 60_000) -> None:
    """Wait until Streamlit has finished the current script run (its 'Running…' indicator is gone).

    A rerun starts a moment after the click that causes it, so this first gives it that moment;
    assertions on what a rerun draws use Playwright's waiting ``expect`` as well.
    """
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout)
    page.wait_for_timeout(350)
    page.wait_for_function(
        """() => { const w = document.querySelector('[data-testid="stStatusWidget"]');
                   return !w || !/Running|Stop/i.test(w.innerText || ''); }""",
        timeout=timeout)
