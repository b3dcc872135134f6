#!/usr/bin/env python
"""End-to-end check in headless Chromium: start the app, ask a question, replay it, screenshot the graph.

    python scripts/e2e_screenshot.py [--out docs/screenshot.png] [--model smollm2-135m]

Starts ``streamlit run app.py`` on a free loopback port with a temporary runs
directory, drives Debian's ``chromium`` through the DevTools protocol (with
the ``websockets`` package Streamlit already depends on), types the question
on the Ask page, presses Run, waits for the result, opens the run in Replay,
waits until the vis-network graph has stabilised and saves screenshots.
Exit status 0 only if the graph was drawn.  Every process it starts is
stopped on exit.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from websockets.sync.client import connect

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "what films did [Otto Preminger] star in"  # a question of the default sample graph
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--no-first-run", "--disable-dev-shm-usage", "--hide-scrollbars"]


class E2EError(RuntimeError):
    pass


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, timeout: float, proc: subprocess.Popen | None = None) -> str:
    deadline = time.time() + timeout
    last = ""
    while time.time() < deadline:
        if proc is not None and proc.poll() is not None:
            raise E2EError(f"process exited early with code {proc.returncode} while waiting for {url}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                return r.read().decode("utf-8")
        except OSError as exc:
            last = str(exc)
            time.sleep(0.3)
    raise E2EError(f"timed out waiting for {url}: {last}")


class CDP:
    """A minimal Chrome DevTools Protocol client over one page target."""

    def __init__(self, ws_url: str) -> None:
        self.ws = connect(ws_url, legacy=True, max_size=64 * 1024 * 1024, open_timeout=20)
        self.next_id = 0

    def call(self, method: str, timeout: float = 60, **params):
        self.next_id += 1
        mid = self.next_id
        self.ws.send(json.dumps({"id": mid, "method": method, "params": params}))
        deadline = time.time() + timeout
        while time.time() < deadline:
            msg = json.loads(self.ws.recv(timeout=max(0.1, deadline - time.time())))
            if msg.get("id") == mid:
                if "error" in msg:
                    raise E2EError(f"{method}: {msg['error']}")
                return msg.get("result", {})
        raise E2EError(f"{method}: no reply in {timeout}s")

    def js(self, expr: str):
        res = self.call("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in res:
            raise E2EError(f"JS error in {expr[:60]!r}: {res['exceptionDetails'].get('text')}")
        return res.get("result", {}).get("value")

    def wait(self, expr: str, timeout: float, what: str) -> None:
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                if self.js(expr):
                    return
            except E2EError:
                pass
            time.sleep(0.5)
        raise E2EError(f"timed out after {timeout:.0f}s waiting for {what}")

    def screenshot(self, path: Path) -> None:
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        try:
            self.ws.close()
        except Exception:
            pass


# a graph iframe is ready when vis-network has stabilised (kgqa_ui/vis_html.py sets data-ready)
GRAPH_READY = """(() => { const fs = [...document.querySelectorAll('iframe')];
  return fs.some(f => { try { if (f.contentWindow.__kgqaSeen) return false;
    const g = f.contentDocument && f.contentDocument.getElementById('graph');
    return g && g.dataset.ready === '1' && f.contentDocument.querySelectorAll('canvas').length > 0; }
    catch (e) { return false; } }); })()"""


# mark the graphs on screen, so waiting for "a graph is ready" waits for a new one
MARK_SEEN = """(() => { [...document.querySelectorAll('iframe')].forEach(f => { try { f.contentWindow.__kgqaSeen = 1; }
  catch (e) {} }); return true; })()"""


def button_js(label: str, action: str = "click") -> str:
    # a button's text may start with its Material icon's ligature name ("play_arrowRun")
    return (f"(() => {{ const L = {json.dumps(label)}; const b = [...document.querySelectorAll('button')].find(x => {{"
            f" const t = x.innerText.trim(); return t === L || t.split('\\n').map(s => s.trim()).includes(L)"
            f" || (t.endsWith(L) && /^[a-z_]+$/.test(t.slice(0, t.length - L.length).trim())); }});"
            f" if (!b || b.disabled) return false; {'b.click();' if action == 'click' else ''} return true; }})()")


def _set_number(cdp: CDP, label: str, value: int) -> None:
    """Type into the number input whose label is ``label`` and commit it (Enter)."""
    found = cdp.js(f"""(() => {{ const l = [...document.querySelectorAll('label')].find(x => x.innerText.trim() === {json.dumps(label)});
      const i = l && l.parentElement.parentElement.querySelector('input'); if (!i) return false; i.focus(); i.select(); return true; }})()""")
    if not found:
        return
    cdp.call("Input.insertText", text=str(value))
    for kind in ("keyDown", "keyUp"):
        cdp.call("Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter", windowsVirtualKeyCode=13)
    time.sleep(1.0)


def run(args: argparse.Namespace) -> int:
    chromium = find_chromium()
    if chromium is None:
        raise E2EError("chromium not found (Debian: apt-get install -y chromium)")
    tmp = Path(tempfile.mkdtemp(prefix="kgqa-e2e-"))
    runs_dir = Path(args.runs_dir) if args.runs_dir else tmp / "runs"
    port, dbg = free_port(), free_port()
    env = dict(os.environ, KGQA_RUNS_DIR=str(runs_dir), KGQA_APP_MODEL=args.model)
    procs: list[subprocess.Popen] = []
    cdp = None
    log = open(tmp / "streamlit.log", "w")
    try:
        app = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.port", str(port),
             "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        procs.append(app)
        wait_http(f"http://127.0.0.1:{port}/_stcore/health", 90, app)
        browser = subprocess.Popen(
            [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={tmp / 'chrome'}", f"--remote-debugging-port={dbg}",
             "--remote-allow-origins=*", f"--window-size={args.width},{args.height}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        procs.append(browser)
        targets = json.loads(wait_http(f"http://127.0.0.1:{dbg}/json/list", 30, browser))
        page = next(t for t in targets if t.get("type") == "page")
        cdp = CDP(page["webSocketDebuggerUrl"])
        cdp.call("Page.enable")
        cdp.call("Runtime.enable")
        cdp.call("Emulation.setDeviceMetricsOverride", width=args.width, height=args.height, deviceScaleFactor=1,
                 mobile=False)
        base = f"http://127.0.0.1:{port}"
        if not args.skip_run:
            cdp.call("Page.navigate", url=base + "/")
            cdp.wait("document.body.innerText.includes('Ask a question') && !!document.querySelector('textarea')",
                     90, "the Ask page")
            time.sleep(1.0)
            cdp.js("(() => { const t = document.querySelector('textarea'); t.focus(); t.select(); return true; })()")
            cdp.call("Input.insertText", text=args.question)
            cdp.js("document.querySelector('textarea').blur(); true")
            cdp.wait(button_js("Run", action="check"), 60, "the Run button to be enabled (question linked)")
            for label, value in (("Beam size", args.beam_size), ("Max steps", args.max_steps)):
                _set_number(cdp, label, value)
            print(f"[e2e] running the question with {args.model}…", flush=True)
            cdp.js(button_js("Run"))
            started = time.time()
            cdp.wait("[...document.querySelectorAll('a')].some(a => a.innerText.includes('Replay step by step'))"
                     " || document.body.innerText.includes('failed')", args.timeout, "the run to finish")
            if not cdp.js("[...document.querySelectorAll('a')].some(a => a.innerText.includes('Replay step by step'))"):
                text = cdp.js("document.body.innerText")
                raise E2EError("the run failed in the app: " + text[text.find("failed") - 200:][:500])
            print(f"[e2e] run finished in {time.time() - started:.0f}s", flush=True)
            time.sleep(1.5)
            if args.ask_out:
                cdp.screenshot(Path(args.ask_out))
            cdp.js("[...document.querySelectorAll('a')].find(a => a.innerText.includes('Replay step by step')).click(); true")
        else:
            cdp.call("Page.navigate", url=base + "/replay")
        cdp.wait("document.body.innerText.includes('Replay')", 60, "the Replay page")
        cdp.wait(GRAPH_READY, 90, "the graph to be drawn and stabilised")
        for _ in range(args.steps):
            cdp.js(MARK_SEEN)
            if not cdp.js(button_js("▶|")):
                break
            time.sleep(1.0)
            cdp.wait(GRAPH_READY, 60, "the graph of the next step")
        time.sleep(1.0)
        out = Path(args.out)
        cdp.screenshot(out)
        print(f"[e2e] graph drawn; screenshot saved to {out}", flush=True)
        return 0
    except E2EError:
        if cdp is not None:  # keep what the browser showed, to see why
            try:
                failed = Path(args.out).with_suffix(".failed.png")
                cdp.screenshot(failed)
                print(f"[e2e] screenshot of the failure: {failed}", file=sys.stderr)
            except Exception:
                pass
        raise
    finally:
        if cdp is not None:
            cdp.close()
        for p in reversed(procs):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                    p.wait(timeout=10)
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    try:
                        os.killpg(p.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
        log.close()
        if args.keep_tmp:
            print(f"[e2e] temporary files kept in {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "docs" / "screenshot.png"), help="Replay screenshot (PNG)")
    ap.add_argument("--ask-out", default=None, help="also save a screenshot of the Ask page after the run")
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--question", default=QUESTION)
    ap.add_argument("--runs-dir", default=None, help="runs directory (default: a temporary one)")
    ap.add_argument("--skip-run", action="store_true", help="do not ask; open Replay on the newest saved run")
    ap.add_argument("--steps", type=int, default=1, help="steps to advance in Replay before the screenshot")
    ap.add_argument("--timeout", type=float, default=900, help="seconds allowed for the run")
    ap.add_argument("--beam-size", type=int, default=1, help="kept small so the check is quick")
    ap.add_argument("--max-steps", type=int, default=2)
    ap.add_argument("--width", type=int, default=1440)
    ap.add_argument("--height", type=int, default=1300)
    ap.add_argument("--keep-tmp", action="store_true")
    args = ap.parse_args(argv)
    try:
        return run(args)
    except E2EError as exc:
        print(f"e2e failed: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
