"""Start a local Oxigraph SPARQL server over N-Triples files (tests, benchmarks, trying a store out).

Oxigraph's command-line tool (PyPI package ``oxigraph``, a dev requirement)
bulk-loads N-Triples into a RocksDB directory and serves the SPARQL 1.1
protocol at ``/query``.  `OxigraphServer` loads, serves on a free loopback
port, waits until the endpoint answers, and stops the process on exit.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Sequence


class OxigraphUnavailable(RuntimeError):
    """The ``oxigraph`` command is not installed."""


def oxigraph_command() -> str:
    """The path of the ``oxigraph`` CLI (next to this Python first), or raise `OxigraphUnavailable`."""
    here = Path(sys.executable).with_name("oxigraph")
    if here.exists():
        return str(here)
    found = shutil.which("oxigraph")
    if found:
        return found
    raise OxigraphUnavailable("the oxigraph command is not installed (pip install oxigraph==0.5.13)")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class OxigraphServer:
    """``with OxigraphServer([file.nt]) as server: server.endpoint`` -- a read-only store on loopback."""

    def __init__(self, files: Sequence[str | Path], location: str | Path | None = None,
                 timeout_s: int | None = None, startup_seconds: float = 60.0) -> None:
        self.files = [str(f) for f in files]
        self._own_dir = location is None
        self.location = Path(location) if location else Path(tempfile.mkdtemp(prefix="kgqa-oxigraph-"))
        self.timeout_s = timeout_s
        self.startup_seconds = startup_seconds
        self.port = 0
        self.process: subprocess.Popen | None = None
        self.load_seconds = 0.0

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}/query"

    def start(self) -> "OxigraphServer":
        cmd = oxigraph_command()
        if self.files:
            t0 = time.perf_counter()
            done = subprocess.run([cmd, "load", "--location", str(self.location), "--lenient", "--file", *self.files],
                                  capture_output=True, text=True)
            self.load_seconds = time.perf_counter() - t0
            if done.returncode != 0:
                raise RuntimeError(f"oxigraph load failed: {done.stderr.strip()[-500:]}")
        self.port = free_port()
        args = [cmd, "serve-read-only", "--location", str(self.location), "--bind", f"127.0.0.1:{self.port}"]
        if self.timeout_s:
            args += ["--timeout-s", str(self.timeout_s)]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + self.startup_seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                err = self.process.stderr.read().decode(errors="replace") if self.process.stderr else ""
                raise RuntimeError(f"oxigraph serve exited: {err.strip()[-500:]}")
            try:
                urllib.request.urlopen(f"{self.endpoint}?query=ASK%7B%7D", timeout=2).read()
                return self
            except (urllib.error.URLError, ConnectionError, OSError):
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"oxigraph did not start within {self.startup_seconds:g} s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.process = None
        if self._own_dir:
            shutil.rmtree(self.location, ignore_errors=True)

    def __enter__(self) -> "OxigraphServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


__all__ = ["OxigraphServer", "OxigraphUnavailable", "free_port", "oxigraph_command"]
