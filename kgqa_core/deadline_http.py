"""One HTTP request under one deadline and a size cap: connect, send, headers, body, and the caller's parsing.

Why not `requests`' or `urllib`'s timeout: theirs is per socket operation,
so a server that sends its headers and then one byte a second never trips
it (each read waits a second, not the timeout), and nothing bounds the size
of a reply.  Here a watchdog timer shuts down every socket the request
opened when the deadline passes, which ends a blocked connect, TLS
handshake, send or read at once, whatever the server does; the body is
read in chunks against a byte cap (a declared ``Content-Length`` over it
is refused before reading).  The caller gets the same `Deadline` to check
while it parses the reply, so one number bounds the whole request.

`urllib.request` does the protocol (proxies from the environment, TLS,
chunked bodies, redirects); its connections are subclassed only to hand
their sockets to the watchdog.  A redirect to another host drops the
``Authorization`` header.  The one step a watchdog cannot end is the name
lookup (``getaddrinfo``), which the OS bounds.
"""

from __future__ import annotations

import http.client
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any

CHUNK = 64 * 1024


class HttpFailure(Exception):
    """The request did not give a complete reply (the subclass says why)."""


class DeadlinePassed(HttpFailure):
    """The deadline passed before the reply was complete (or, via `Deadline.check`, parsed)."""


class ReplyTooLarge(HttpFailure):
    """The reply was (or declared itself) larger than the byte cap."""

    def __init__(self, limit: int, declared: int | None = None) -> None:
        super().__init__(f"more than {limit:,} bytes" if declared is None else f"{declared:,} bytes declared")
        self.limit, self.declared = limit, declared


class Unreachable(HttpFailure):
    """No reply: refused, reset, closed early, a bad address.  ``reason`` is short, for a message."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Deadline:
    """A point in time `seconds` from now; `check` raises `DeadlinePassed` after it."""

    def __init__(self, seconds: float) -> None:
        self.seconds = float(seconds)
        self.end = time.monotonic() + self.seconds

    def remaining(self) -> float:
        return self.end - time.monotonic()

    def passed(self) -> bool:
        return self.remaining() <= 0

    def check(self) -> None:
        if self.passed():
            raise DeadlinePassed(f"no complete reply within {self.seconds:g} s")


@dataclass
class Reply:
    status: int
    reason: str
    headers: dict[str, str]
    body: bytes
    url: str = ""


@dataclass
class _Watchdog:
    """The sockets of one request; `fire` shuts them all down (a blocked call on them returns at once)."""

    sockets: list[socket.socket] = field(default_factory=list)
    fired: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, sock: socket.socket) -> None:
        with self.lock:
            self.sockets.append(sock)
            if self.fired:
                _shutdown(sock)

    def fire(self) -> None:
        with self.lock:
            self.fired = True
            for sock in self.sockets:
                _shutdown(sock)


def _shutdown(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:  # already closed
        pass


def _watched(base: type, watch: _Watchdog) -> type:
    """`base` (an HTTP(S) connection class) whose new sockets are handed to `watch` before TLS or any I/O."""

    class Watched(base):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            create = self._create_connection

            def created(*a: Any, **kw: Any) -> socket.socket:
                sock = create(*a, **kw)
                watch.add(sock)
                return sock

            self._create_connection = created

    return Watched


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, watch: _Watchdog) -> None:
        super().__init__()
        self.watch = watch

    def http_open(self, req: urllib.request.Request) -> Any:
        return self.do_open(_watched(http.client.HTTPConnection, self.watch), req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, watch: _Watchdog) -> None:
        super().__init__()
        self.watch = watch

    def https_open(self, req: urllib.request.Request) -> Any:
        return self.do_open(_watched(http.client.HTTPSConnection, self.watch), req, context=self._context)


class _ErrorsAsReplies(urllib.request.HTTPErrorProcessor):
    """4xx/5xx come back as replies (the caller reads their body under the same rules); 3xx still redirect."""

    def http_response(self, request: urllib.request.Request, response: Any) -> Any:
        if 300 <= response.status < 400:
            return super().http_response(request, response)
        return response

    https_response = http_response


class _SameHostAuth(urllib.request.HTTPRedirectHandler):
    """Follow redirects, but never carry the Authorization header to another host."""

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> Any:
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and urllib.parse.urlsplit(newurl).netloc != urllib.parse.urlsplit(req.full_url).netloc:
            new.remove_header("Authorization")
        return new


def request(method: str, url: str, *, deadline: Deadline, max_bytes: int, body: bytes | None = None,
            headers: dict[str, str] | None = None) -> Reply:
    """Send one request and read the whole reply before `deadline`, at most `max_bytes` of body.

    Raises `DeadlinePassed`, `ReplyTooLarge` or `Unreachable`; an HTTP error
    status is a `Reply` like any other.
    """
    watch = _Watchdog()
    opener = urllib.request.build_opener(_HTTPHandler(watch), _HTTPSHandler(watch), _ErrorsAsReplies(),
                                         _SameHostAuth())
    req = urllib.request.Request(url, data=body, method=method, headers=dict(headers or {}))
    remaining = deadline.remaining()
    if remaining <= 0:
        raise DeadlinePassed(f"no time left for {url}")
    timer = threading.Timer(remaining, watch.fire)
    timer.daemon = True
    timer.start()
    try:
        try:
            resp = opener.open(req, timeout=remaining)
        except urllib.error.HTTPError as exc:  # a 3xx that could not be followed
            resp = exc
        with resp:
            status = int(getattr(resp, "status", None) or resp.getcode())
            reply_headers = {k: v for k, v in resp.headers.items()}
            declared = _declared_length(reply_headers)
            if declared is not None and declared > max_bytes:
                raise ReplyTooLarge(max_bytes, declared)
            data = _read_capped(resp, deadline, max_bytes)
            return Reply(status, str(getattr(resp, "reason", "") or ""), reply_headers, data, resp.geturl())
    except HttpFailure:
        raise
    except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as exc:
        if watch.fired or deadline.passed():
            raise DeadlinePassed(f"no complete reply within {deadline.seconds:g} s") from None
        raise Unreachable(_reason(exc)) from None
    finally:
        timer.cancel()


def _declared_length(headers: dict[str, str]) -> int | None:
    for key, value in headers.items():
        if key.lower() == "content-length":
            try:
                return int(value.strip())
            except ValueError:
                return None
    return None


def _read_capped(resp: Any, deadline: Deadline, max_bytes: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        if deadline.passed():
            raise DeadlinePassed(f"no complete reply within {deadline.seconds:g} s")
        chunk = resp.read(CHUNK)
        if not chunk:
            break
        size += len(chunk)
        if size > max_bytes:
            raise ReplyTooLarge(max_bytes)
        chunks.append(chunk)
    if deadline.passed():  # the watchdog cut the body short
        raise DeadlinePassed(f"no complete reply within {deadline.seconds:g} s")
    return b"".join(chunks)


def _reason(exc: BaseException) -> str:
    """A few words for why no reply came (refused, reset, closed, not found...)."""
    inner: Any = getattr(exc, "reason", exc)
    if isinstance(inner, (socket.timeout, TimeoutError)):
        return "timed out"
    text = str(inner).lower()
    if isinstance(inner, ConnectionRefusedError) or "refused" in text:
        return "connection refused"
    if isinstance(exc, (http.client.RemoteDisconnected, http.client.IncompleteRead, ConnectionResetError)) or \
            any(w in text for w in ("reset", "aborted", "closed", "remote end", "incompleteread")):
        return "the connection was closed"
    if isinstance(inner, socket.gaierror) or "name or service" in text or "nodename" in text:
        return "the host name cannot be resolved"
    if isinstance(exc, http.client.HTTPException):
        return f"not a valid HTTP reply ({type(exc).__name__})"
    return str(inner).strip().splitlines()[0][:200] if str(inner).strip() else type(inner).__name__
