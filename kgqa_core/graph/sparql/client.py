"""SPARQL 1.1 protocol over plain HTTP: one SELECT, with a deadline and errors that say what happened.

Why not a client library: the protocol is one form-encoded POST and a JSON
answer, and what matters here is the failure handling, which a wrapper would
hide: a timeout covers the whole request (connect, server work, reading the
body), an HTTP error keeps the server's first line of explanation, and a
server that announces a partial result (Virtuoso's HTTP 206 and ``X-SQL-State``
/ ``X-SPARQL-MaxRows`` headers under its anytime-query and ``ResultSetMaxRows``
settings) raises `SparqlTruncated` instead of returning part of an answer.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field

from ...counts import QueryCounts
from .terms import Term

ACCEPT = "application/sparql-results+json"
_MAX_BODY = 256 * 1024 * 1024


class SparqlError(RuntimeError):
    """A query that did not give a complete answer; the message is meant for the user."""

    kind = "error"


class BadEndpointError(SparqlError, ValueError):
    """An endpoint URL or setting that cannot work (not http(s), a non-positive timeout)."""

    kind = "settings"


class SparqlTimeout(SparqlError):
    kind = "timeout"


class SparqlUnreachable(SparqlError):
    kind = "unreachable"


class SparqlTruncated(SparqlError):
    """The server returned part of the answer (a row cap or a timeout with partial results)."""

    kind = "truncated"


@dataclass
class SelectResult:
    variables: list[str]
    rows: list[dict[str, Term]]


@dataclass
class ClientStats(QueryCounts):
    """Queries sent, their wall time, rows and failures, for the trace's costs."""

    errors: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)


def check_endpoint_url(url: str) -> str:
    """The endpoint URL, stripped; raises `SparqlError` for anything but http(s)://host/..."""
    text = (url or "").strip()
    parts = urllib.parse.urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise BadEndpointError(f"SPARQL endpoint {text!r} is not an http:// or https:// URL")
    return text


class SparqlClient:
    """Sends SELECT queries to one endpoint (optionally with a default graph)."""

    def __init__(self, endpoint: str, default_graph: str | None = None, timeout: float = 30.0) -> None:
        self.endpoint = check_endpoint_url(endpoint)
        self.default_graph = (default_graph or "").strip() or None
        if timeout <= 0:
            raise BadEndpointError(f"timeout must be positive, got {timeout}")
        self.timeout = float(timeout)
        self.stats = ClientStats()

    def select(self, query: str, timeout: float | None = None) -> SelectResult:
        """Run one SELECT (or ASK) query; raises a `SparqlError` subclass on any failure."""
        limit = self.timeout if timeout is None else timeout
        form = [("query", query)]
        if self.default_graph:
            form.append(("default-graph-uri", self.default_graph))
        body = urllib.parse.urlencode(form).encode("utf-8")
        req = urllib.request.Request(
            self.endpoint, data=body, method="POST",
            headers={"Accept": ACCEPT, "Content-Type": "application/x-www-form-urlencoded; charset=UTF-8",
                     "User-Agent": "kgqa-workbench"},
        )
        started = time.perf_counter()
        try:
            payload, headers = self._fetch(req, limit, started)
        except SparqlError:
            self._count(started, 0, error=True)
            raise
        try:
            data = json.loads(payload.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            self._count(started, 0, error=True)
            raise SparqlError(f"{self.endpoint} did not answer with SPARQL JSON results ({exc})") from None
        partial = headers.get("X-SQL-State") or ""
        if partial.startswith("S1TAT") or headers.get("X-SPARQL-MaxRows") or headers.get("X-Status") == "206":
            self._count(started, 0, error=True)
            raise SparqlTruncated(
                f"{self.endpoint} returned a partial result ("
                + ("its query timeout cut the answer (anytime query)" if partial or headers.get("X-Status") == "206"
                   else f"row cap {headers.get('X-SPARQL-MaxRows')}")
                + "); raise the server's limit or ask for less"
            )
        if "boolean" in data:
            self._count(started, 1)
            return SelectResult(["boolean"], [{"boolean": Term("literal", "true" if data["boolean"] else "false")}])
        try:
            variables = list(data["head"].get("vars", []))
            rows = [{k: Term.from_json(v) for k, v in b.items()} for b in data["results"]["bindings"]]
        except (KeyError, TypeError, AttributeError):
            self._count(started, 0, error=True)
            raise SparqlError(f"{self.endpoint} answered JSON that is not SPARQL results") from None
        self._count(started, len(rows))
        return SelectResult(variables, rows)

    def _fetch(self, req: urllib.request.Request, limit: float, started: float) -> tuple[bytes, dict[str, str]]:
        deadline = started + limit
        try:
            with urllib.request.urlopen(req, timeout=limit) as resp:
                headers = {k: v for k, v in resp.headers.items()}
                headers["X-Status"] = str(getattr(resp, "status", 200))
                chunks: list[bytes] = []
                size = 0
                while True:
                    if time.perf_counter() > deadline:
                        raise SparqlTimeout(self._timeout_message(limit))
                    chunk = resp.read(65536)
                    if not chunk:
                        break
                    size += len(chunk)
                    if size > _MAX_BODY:
                        raise SparqlError(f"{self.endpoint} sent more than {_MAX_BODY // 2**20} MB for one query")
                    chunks.append(chunk)
                return b"".join(chunks), headers
        except urllib.error.HTTPError as exc:
            detail = ""
            try:
                detail = exc.read(2000).decode("utf-8", "replace").strip().splitlines()[0][:300]
            except Exception:  # the body is optional
                pass
            raise SparqlError(
                f"{self.endpoint} answered HTTP {exc.code} {exc.reason}" + (f": {detail}" if detail else "")
            ) from None
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, (socket.timeout, TimeoutError)):
                raise SparqlTimeout(self._timeout_message(limit)) from None
            raise SparqlUnreachable(f"cannot reach SPARQL endpoint {self.endpoint}: {reason}") from None
        except (socket.timeout, TimeoutError):
            raise SparqlTimeout(self._timeout_message(limit)) from None
        except (ConnectionError, OSError) as exc:
            raise SparqlUnreachable(f"cannot reach SPARQL endpoint {self.endpoint}: {exc}") from None

    def _timeout_message(self, limit: float) -> str:
        return f"SPARQL endpoint {self.endpoint} did not answer within {limit:g} s (query timeout)"

    def _count(self, started: float, rows: int, error: bool = False) -> None:
        with self.stats.lock:
            self.stats.queries += 1
            self.stats.seconds += time.perf_counter() - started
            self.stats.rows += rows
            self.stats.errors += int(error)
