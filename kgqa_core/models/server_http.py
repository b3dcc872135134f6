"""HTTP to an OpenAI-compatible model server, with one-line errors a user can act on.

Every failure of the transport (refused connection, a server that died
mid-run, a 5xx, a timeout, a reply that is not JSON) becomes a
`ServerError` whose message names the server and what happened; methods and
the UI show that line and the run is saved as failed.  The API key comes from
an environment variable and is only ever placed in the Authorization header:
it is never part of an error, a trace or a run record (a server that echoes
it back in an error body has it replaced by ``***``).
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from ..bounds import BoundError, bounded_number, timeout_seconds
from ..deadline_http import Deadline, DeadlinePassed, ReplyTooLarge, Unreachable, request
from ..redact import Credentials, redact, safe_url, split_credentials

API_KEY_ENV = "KGQA_SERVER_API_KEY"
DEFAULT_TIMEOUT = 600.0  # one request; a long DoG prompt on a busy CPU server takes minutes
MAX_REPLY_MB_ENV = "KGQA_SERVER_MAX_REPLY_MB"
DEFAULT_MAX_REPLY_MB = 64.0  # a whole reply; a completion is also held to what its max_tokens allows
MAX_REPLY_MB = 4096.0


class ServerError(RuntimeError):
    """The model server could not answer a request (stated in one line)."""


def max_reply_mb(value: Any = None) -> float:
    """The byte limit on one reply, in MB: `value`, else $KGQA_SERVER_MAX_REPLY_MB, else 64."""
    if value is None:
        raw = os.environ.get(MAX_REPLY_MB_ENV, "").strip()
        if not raw:
            return DEFAULT_MAX_REPLY_MB
        name, value = f"${MAX_REPLY_MB_ENV}", raw
    else:
        name = "--server-max-reply-mb"
    try:
        return float(bounded_number(name, value, 0.0, MAX_REPLY_MB, low_inclusive=False))
    except BoundError as exc:
        raise ServerError(str(exc)) from None


@dataclass
class ServerClient:
    """POST/GET JSON to ``url``; counts requests and the seconds spent waiting.

    Each request has one deadline (`timeout` seconds for connecting, sending,
    the headers, the whole body and parsing it) and a byte cap
    (`max_reply_bytes`, or a smaller one the caller gives); see
    `kgqa_core.deadline_http`.  ``url`` is the address as shown and stored:
    credentials written into it (``http://user:pw@host``) are split off,
    sent as basic auth, and appear as ``***`` everywhere.
    """

    url: str
    timeout: float = DEFAULT_TIMEOUT
    api_key_env: str = API_KEY_ENV
    max_reply_bytes: int = 0  # 0: from max_reply_mb()
    requests_made: int = 0
    seconds: float = 0.0
    _target: str = field(default="", repr=False)
    _credentials: Credentials = field(default_factory=lambda: Credentials(""), repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        raw = normalise_url(self.url)
        self._credentials = split_credentials(raw)
        self._target = self._credentials.url
        self.url = safe_url(raw)
        try:
            self.timeout = timeout_seconds("--server-timeout", self.timeout)
        except BoundError as exc:
            raise ServerError(str(exc)) from None
        if not self.max_reply_bytes:
            self.max_reply_bytes = int(max_reply_mb() * 1024 * 1024)

    def _api_key(self) -> str:
        return os.environ.get(self.api_key_env, "").strip()

    def _headers(self) -> dict[str, str]:
        """The Authorization header: the API key, else the URL's credentials, else none."""
        key = self._api_key()
        return {"Authorization": f"Bearer {key}"} if key else self._credentials.basic_header()

    def secrets(self) -> list[str]:
        """What must never appear in a message: the API key and the URL's credentials."""
        key = self._api_key()
        return ([key] if key else []) + self._credentials.secrets()

    def get(self, path: str, timeout: float | None = None) -> Any:
        return self._call("GET", path, None, timeout)

    def post(self, path: str, body: dict[str, Any], timeout: float | None = None,
             max_bytes: int | None = None) -> Any:
        return self._call("POST", path, body, timeout, max_bytes)

    def _call(self, verb: str, path: str, body: dict[str, Any] | None, timeout: float | None,
              max_bytes: int | None = None) -> Any:
        where = f"the model server at {self.url}"
        limit = timeout or self.timeout
        cap = min(self.max_reply_bytes, max_bytes) if max_bytes else self.max_reply_bytes
        deadline = Deadline(limit)
        started = time.perf_counter()
        headers = {"Accept": "application/json", "User-Agent": "kgqa-workbench", **self._headers()}
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        try:
            resp = request(verb, self._target + path, deadline=deadline, max_bytes=cap, body=data, headers=headers)
        except DeadlinePassed:
            raise ServerError(f"{where} did not answer {path} within {limit:g} s (timeout)") from None
        except ReplyTooLarge as exc:
            raise ServerError(f"{where} sent a reply to {path} larger than {_size(cap)}"
                              + ("" if exc.declared is None else f" ({_size(exc.declared)} declared)")
                              + _cap_hint(cap, self.max_reply_bytes)) from None
        except Unreachable as exc:
            why = ("connection refused: is it running?" if exc.reason == "connection refused" else
                   "the connection was closed: the server stopped or crashed" if exc.reason == "the connection was closed"
                   else redact(exc.reason, self.secrets()))
            raise ServerError(f"{where} is not reachable ({why})") from None
        finally:
            with self._lock:
                self.requests_made += 1
                self.seconds += time.perf_counter() - started
        if resp.status in (401, 403):
            raise ServerError(
                f"{where} refused the request ({resp.status}): set the API key in ${self.api_key_env}"
            )
        if 300 <= resp.status < 400:  # a redirect urllib would not follow (a POST answered with 307/308)
            target = safe_url(next((v for k, v in resp.headers.items() if k.lower() == "location"), "") or "?")
            raise ServerError(f"{where} answered {path} with a redirect (HTTP {resp.status}) to {target}; "
                              "give the server's final URL")
        if resp.status >= 400:
            raise ServerError(f"{where} answered {path} with HTTP {resp.status}: "
                              f"{_detail(resp.body, self.secrets())}")
        try:
            reply = json.loads(resp.body)
        except (ValueError, RecursionError):
            raise ServerError(f"{where} answered {path} with something that is not JSON") from None
        if deadline.passed():  # the parse is part of the request's time
            raise ServerError(f"{where} did not answer {path} within {limit:g} s (timeout)")
        return reply


def _size(n: int) -> str:
    return f"{n / 1048576:.1f} MB" if n >= 1048576 else f"{n:,} bytes"


def _cap_hint(cap: int, configured: int) -> str:
    if cap < configured:
        return ": more than the request's max_tokens allows"
    return f" (the limit; raise it with --server-max-reply-mb or ${MAX_REPLY_MB_ENV})"


def normalise_url(url: str) -> str:
    """``host:port``, ``http://host:port/`` or ``.../v1`` -> ``http://host:port`` (no trailing /v1)."""
    url = (url or "").strip()
    if not url:
        raise ServerError("no model server URL given")
    if "://" not in url:
        url = "http://" + url
    url = url.rstrip("/")
    if url.endswith("/v1"):
        url = url[: -len("/v1")]
    return url


def _detail(body: bytes, secrets: list[str]) -> str:
    """The server's own error message, on one line and short (never a traceback), secrets redacted.

    Redacted before it is cut to length, so a key cut in half is not left behind.
    """
    text = body[:65536].decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        text = text.strip()
    else:
        err = data.get("error", data) if isinstance(data, dict) else data
        if isinstance(err, dict):
            text = str(err.get("message") or err.get("detail") or err.get("type") or "")
        else:
            text = str(err)
    line = " ".join(redact(text, secrets).split())
    return (line[:200] + "...") if len(line) > 200 else (line or "no detail given")
