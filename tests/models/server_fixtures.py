"""A real llama-cpp-python server on 127.0.0.1 and a small fault-injecting proxy in front of it (tests only)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import requests

from kgqa_core.models.llama_model import N_BATCH


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    """``python -m llama_cpp.server`` (through `kgqa_core.models.llama_server`: weight repacking off, as in process)
    with the packaged 135M GGUF, bound to 127.0.0.1 on a free port.

    Prompt batches of N_BATCH and flash attention are what the in-process backend uses (its attention is
    llama.cpp's "auto", flash on a CPU): with the server's defaults (512, no flash) the parity tests'
    greedy texts split at near ties on an AVX2 CPU (LPKG's plan for the Heat question).
    """

    def __init__(self, gguf: Path, log: Path, env: dict[str, str] | None = None, threads: int = 1) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        root = str(Path(__file__).resolve().parents[2])  # the launcher is the workbench's own module
        env = {**os.environ, "OMP_NUM_THREADS": "1",
               "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH", "")])), **(env or {})}
        self._log = open(log, "wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "kgqa_core.models.llama_server", "--model", str(gguf), "--host", "127.0.0.1",
             "--port", str(self.port), "--n_ctx", "8192", "--n_threads", str(threads), "--n_threads_batch", str(threads),
             "--n_batch", str(N_BATCH), "--n_ubatch", str(N_BATCH), "--flash_attn", "true"],
            stdout=self._log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
        )
        deadline = time.time() + 180
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited with {self.proc.returncode}; see {log}")
            try:
                if requests.get(self.url + "/v1/models", timeout=2).ok:
                    return
            except requests.RequestException:
                time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"llama_cpp.server did not start within 180 s; see {log}")

    def kill(self) -> None:
        """As if the server crashed: SIGKILL, no goodbye."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)  # its group: a child holding the socket dies too
            self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()
        self._log.close()


class FaultProxy:
    """Forwards to `target`; from request number `after` on, misbehaves as `mode` says.

    modes: "500" (an internal server error), "slow" (answers after `delay` s),
    "strip-logprobs" (every completion without log-probs, and no scoring route: a server that gives no
    log-probs at all), "pass".
    """

    def __init__(self, target: str, mode: str = "pass", after: int = 0, delay: float = 5.0) -> None:
        self.target, self.mode, self.after, self.delay = target, mode, after, delay
        self.seen = 0
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _forward(self, verb: str) -> None:
                proxy.seen += 1
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) if verb == "POST" else None
                bad = proxy.seen > proxy.after
                if bad and proxy.mode == "500":
                    return self._send(500, {"error": {"message": "injected failure", "type": "internal_server_error"}})
                if bad and proxy.mode == "slow":
                    time.sleep(proxy.delay)
                if bad and proxy.mode == "strip-logprobs" and self.path.startswith("/extras/kgqa/"):
                    return self._send(404, {"detail": "Not Found"})
                try:
                    resp = requests.request(verb, proxy.target + self.path, data=body,
                                            headers={"Content-Type": "application/json"}, timeout=600)
                except requests.RequestException:
                    return self._send(502, {"error": {"message": "the proxied server is gone"}})
                data = resp.content
                if bad and proxy.mode == "strip-logprobs" and self.path.endswith("/completions") and resp.ok:
                    obj = resp.json()
                    for ch in obj.get("choices", []):
                        ch["logprobs"] = None
                    data = json.dumps(obj).encode()
                self._send(resp.status_code, data)

            def _send(self, code: int, payload) -> None:
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                try:
                    self.send_response(code)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                    pass

            def do_GET(self):
                self._forward("GET")

            def do_POST(self):
                self._forward("POST")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
