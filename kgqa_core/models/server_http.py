"""HTTP to an OpenAI-compatible model server, with one-line errors a user can act on.

Every failure of the transport (refused connection, a server that died
mid-run, a 5xx, a timeout, a reply that is not JSON) becomes a
`ServerError` whose message names the server and what happened; methods and
the UI show that line and the run is saved as failed.  The API key comes from
an environment variable and is only ever placed in the Authorization header:
it is never part of an error, a trace or a run record.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import requests

API_KEY_ENV = "KGQA_SERVER_API_KEY"
DEFAULT_TIMEOUT = 600.0  # one request; a long DoG prompt on a busy CPU server takes minutes


class ServerError(RuntimeError):
    """The model server could not answer a request (stated in one line)."""


@dataclass
class ServerClient:
    """POST/GET JSON to ``url``; counts requests and the seconds spent waiting."""

    url: str
    timeout: float = DEFAULT_TIMEOUT
    api_key_env: str = API_KEY_ENV
    requests_made: int = 0
    seconds: float = 0.0
    _session: requests.Session = field(default_factory=requests.Session, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        self.url = normalise_url(self.url)

    def _headers(self) -> dict[str, str]:
        key = os.environ.get(self.api_key_env, "").strip()
        return {"Authorization": f"Bearer {key}"} if key else {}

    def get(self, path: str, timeout: float | None = None) -> Any:
        return self._call("GET", path, None, timeout)

    def post(self, path: str, body: dict[str, Any], timeout: float | None = None) -> Any:
        return self._call("POST", path, body, timeout)

    def _call(self, verb: str, path: str, body: dict[str, Any] | None, timeout: float | None) -> Any:
        where = f"the model server at {self.url}"
        started = time.perf_counter()
        try:
            resp = self._session.request(
                verb, self.url + path, json=body, headers=self._headers(), timeout=timeout or self.timeout
            )
        except requests.exceptions.Timeout:
            raise ServerError(f"{where} did not answer {path} within {timeout or self.timeout:.0f} s (timeout)") from None
        except requests.exceptions.ConnectionError as exc:
            text = str(exc)
            why = "connection refused: is it running?" if "refused" in text.lower() else (
                "the connection was closed: the server stopped or crashed"
                if ("aborted" in text.lower() or "reset" in text.lower() or "closed" in text.lower())
                else "cannot connect")
            raise ServerError(f"{where} is not reachable ({why})") from None
        except requests.exceptions.RequestException as exc:
            raise ServerError(f"{where}: request {path} failed ({type(exc).__name__})") from None
        finally:
            with self._lock:
                self.requests_made += 1
                self.seconds += time.perf_counter() - started
        if resp.status_code in (401, 403):
            raise ServerError(
                f"{where} refused the request ({resp.status_code}): set the API key in ${self.api_key_env}"
            )
        if resp.status_code >= 400:
            raise ServerError(f"{where} answered {path} with HTTP {resp.status_code}: {_detail(resp)}")
        try:
            return resp.json()
        except ValueError:
            raise ServerError(f"{where} answered {path} with something that is not JSON") from None


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


def _detail(resp: requests.Response) -> str:
    """The server's own error message, on one line and short (never a traceback)."""
    try:
        data = resp.json()
    except ValueError:
        text = resp.text.strip()
    else:
        err = data.get("error", data) if isinstance(data, dict) else data
        if isinstance(err, dict):
            text = str(err.get("message") or err.get("detail") or err.get("type") or "")
        else:
            text = str(err)
    line = " ".join(text.split())
    return (line[:200] + "...") if len(line) > 200 else (line or "no detail given")
