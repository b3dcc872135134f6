"""A real HTTP server on 127.0.0.1 that misbehaves on cue (tests only).

`MisbehavingServer(behaviour)` serves every request with ``behaviour(handler)``;
the behaviours below are what issue 31 tried: a reply that drips one byte a
second after its headers, a huge reply streamed without end, a malformed JSON
reply, an error body that echoes the request's headers.  `FakeModelServer`
answers an OpenAI-compatible model server's connection probes plainly, then
serves the run's completions with a behaviour, so a whole `ask` runs against it.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

Behaviour = Callable[[BaseHTTPRequestHandler], None]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False


class MisbehavingServer:
    """Started on a free loopback port; `close()` stops it and every handler still dripping."""

    def __init__(self, behaviour: Behaviour) -> None:
        self.behaviour = behaviour
        self.stopping = threading.Event()
        self.requests: list[dict[str, Any]] = []
        self.bytes_sent = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                self.body = self.rfile.read(length) if length else b""
                owner.requests.append({"method": self.command, "path": self.path,
                                       "headers": dict(self.headers.items()), "body": self.body})
                self.owner = owner
                try:
                    owner.behaviour(self)
                except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
                    pass  # the client gave up, as it should
                self.close_connection = True

            do_GET = do_POST = _serve

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> "MisbehavingServer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


# ------------------------------------------------------------------ behaviours
def send_json(handler: BaseHTTPRequestHandler, payload: Any, status: int = 200) -> None:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)
    handler.owner.bytes_sent += len(data)


def drip(every: float = 1.0, declared: int = 1_000_000, first: bytes = b'{"choices": [') -> Behaviour:
    """Headers at once, then one byte every `every` seconds (a body that never completes)."""

    def behave(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(declared))
        handler.end_headers()
        handler.wfile.write(first[:1])
        handler.wfile.flush()
        sent = 1
        while not handler.owner.stopping.is_set() and sent < declared:
            time.sleep(every)
            handler.wfile.write(first[sent:sent + 1] or b" ")
            handler.wfile.flush()
            sent += 1
            handler.owner.bytes_sent += 1

    return behave


def stream(head: bytes, filler: bytes, total: int, tail: bytes = b"", declare: bool = False,
           content_type: str = "application/json") -> Behaviour:
    """`head`, then `filler` repeated up to `total` bytes, then `tail`: a huge reply, sent as fast as it is read."""

    def behave(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", content_type)
        if declare:
            handler.send_header("Content-Length", str(len(head) + total + len(tail)))
        handler.send_header("Connection", "close")
        handler.end_headers()
        handler.wfile.write(head)
        block = filler * max(1, (1 << 20) // len(filler))
        sent = 0
        while sent < total and not handler.owner.stopping.is_set():
            part = block[: total - sent]
            handler.wfile.write(part)
            sent += len(part)
            handler.owner.bytes_sent += len(part)
        handler.wfile.write(tail)

    return behave


def json_reply(payload: Any, status: int = 200) -> Behaviour:
    return lambda handler: send_json(handler, payload, status)


def echo_headers(status: int = 400) -> Behaviour:
    """An error whose body repeats the request's headers (a debugging proxy, a verbose gateway)."""

    def behave(handler: BaseHTTPRequestHandler) -> None:
        send_json(handler, {"error": {"message": f"bad request; you sent {dict(handler.headers.items())}"}}, status)

    return behave


# ------------------------------------------------------------------ a model server that passes connect
def completion(text: str = " Michael Mann", finish: str = "stop", **extra: Any) -> dict[str, Any]:
    return {"id": "cmpl-1", "object": "text_completion", "model": "fake",
            "choices": [{"text": text, "index": 0, "logprobs": None, "finish_reason": finish, **extra}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}}


class FakeModelServer(MisbehavingServer):
    """An OpenAI-compatible server of one model (``fake``): plain answers while `connect_server` probes it.

    From request number `after` + 1 on, completions are served by `run_behaviour`
    (set `after` to `seen` once connected).  No log-probs, no grammar: the
    capabilities of a plain completion server, enough for Direct and CoT.
    """

    def __init__(self, run_behaviour: Behaviour) -> None:
        self.run_behaviour = run_behaviour
        self.after = 10**9
        self.seen = 0
        super().__init__(self._behave)

    def _behave(self, handler: BaseHTTPRequestHandler) -> None:
        self.seen += 1
        if handler.path.startswith("/v1/models"):
            return send_json(handler, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
        if not handler.path.startswith("/v1/completions"):
            return send_json(handler, {"error": {"message": "not found"}}, 404)
        if self.seen > self.after:
            return self.run_behaviour(handler)
        return send_json(handler, completion())
