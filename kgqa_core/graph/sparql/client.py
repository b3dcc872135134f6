"""SPARQL 1.1 protocol over plain HTTP: one SELECT, with a deadline and errors that say what happened.

Why not a client library: the protocol is one form-encoded POST and a JSON
answer, and what matters here is the failure handling, which a wrapper would
hide: one deadline covers the whole query (connect, server work, reading the
body, and turning the JSON into rows: `kgqa_core.deadline_http`, so an
endpoint that drips its answer a byte a second still ends at the timeout),
the answer is read up to a byte cap, an HTTP error keeps the server's first
line of explanation, and a server that announces a partial result
(Virtuoso's HTTP 206 and ``X-SQL-State`` / ``X-SPARQL-MaxRows`` headers under
its anytime-query and ``ResultSetMaxRows`` settings) raises `SparqlTruncated`
instead of returning part of an answer.  Credentials written into the
endpoint URL are sent as basic auth and shown as ``***``.
"""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from ...bounds import BoundError, bounded_number, timeout_seconds
from ...counts import QueryCounts
from ...deadline_http import Deadline, DeadlinePassed, ReplyTooLarge, Unreachable, request
from ...redact import redact, safe_url, split_credentials
from .terms import Term

ACCEPT = "application/sparql-results+json"
MAX_REPLY_MB_ENV = "KGQA_SPARQL_MAX_REPLY_MB"
DEFAULT_MAX_REPLY_MB = 256.0
MAX_REPLY_MB = 4096.0
_CHECK_EVERY = 2000  # rows converted between deadline checks


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
    try:
        parts = urllib.parse.urlsplit(text)
        parts.port  # noqa: B018 -- a port that is not a number raises here, not at the first query
    except ValueError:
        raise BadEndpointError(f"SPARQL endpoint {safe_url(text)!r} is not a valid URL") from None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise BadEndpointError(f"SPARQL endpoint {safe_url(text)!r} is not an http:// or https:// URL")
    return text


def check_timeout(value: Any, name: str = "sparql timeout") -> float:
    """A query timeout: finite, more than 0, at most a day (`BadEndpointError` naming `name` otherwise)."""
    try:
        return timeout_seconds(name, value)
    except BoundError as exc:
        raise BadEndpointError(str(exc)) from None


def reply_limit_mb(value: Any = None, name: str = "sparql max_reply_mb") -> float:
    """The byte limit on one answer, in MB: `value`, else $KGQA_SPARQL_MAX_REPLY_MB, else 256."""
    if value is None:
        raw = os.environ.get(MAX_REPLY_MB_ENV, "").strip()
        if not raw:
            return DEFAULT_MAX_REPLY_MB
        name, value = f"${MAX_REPLY_MB_ENV}", raw
    try:
        return float(bounded_number(name, value, 0.0, MAX_REPLY_MB, low_inclusive=False))
    except BoundError as exc:
        raise BadEndpointError(str(exc)) from None


class SparqlClient:
    """Sends SELECT queries to one endpoint (optionally with a default graph).

    ``endpoint`` is the URL as shown and stored (credentials as ``***``).
    """

    def __init__(self, endpoint: str, default_graph: str | None = None, timeout: float = 30.0,
                 max_reply_mb: float | None = None) -> None:
        raw = check_endpoint_url(endpoint)
        self._credentials = split_credentials(raw)
        self.endpoint = safe_url(raw)
        self.default_graph = (default_graph or "").strip() or None
        self.timeout = check_timeout(timeout)
        self.max_bytes = int(reply_limit_mb(max_reply_mb) * 1024 * 1024)
        self.stats = ClientStats()

    def select(self, query: str, timeout: float | None = None) -> SelectResult:
        """Run one SELECT (or ASK) query; raises a `SparqlError` subclass on any failure."""
        limit = self.timeout if timeout is None else timeout
        form = [("query", query)]
        if self.default_graph:
            form.append(("default-graph-uri", self.default_graph))
        body = urllib.parse.urlencode(form).encode("utf-8")
        headers = {"Accept": ACCEPT, "Content-Type": "application/x-www-form-urlencoded; charset=UTF-8",
                   "User-Agent": "kgqa-workbench", **self._credentials.basic_header()}
        started = time.perf_counter()
        deadline = Deadline(limit)
        try:
            payload, headers = self._fetch(body, headers, deadline)
            result = self._parse(payload, headers, deadline)
        except SparqlError:
            self._count(started, 0, error=True)
            raise
        self._count(started, len(result.rows) if result.variables != ["boolean"] else 1)
        return result

    def _parse(self, payload: bytes, headers: dict[str, str], deadline: Deadline) -> SelectResult:
        """The JSON answer as rows, within the query's deadline (a huge answer parses for long)."""
        try:
            data = json.loads(payload.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
            raise SparqlError(f"{self.endpoint} did not answer with SPARQL JSON results ({why})") from None
        if deadline.passed():
            raise SparqlTimeout(self._timeout_message(deadline.seconds))
        partial = headers.get("X-SQL-State") or ""
        if partial.startswith("S1TAT") or headers.get("X-SPARQL-MaxRows") or headers.get("X-Status") == "206":
            raise SparqlTruncated(
                f"{self.endpoint} returned a partial result ("
                + ("its query timeout cut the answer (anytime query)" if partial or headers.get("X-Status") == "206"
                   else f"row cap {headers.get('X-SPARQL-MaxRows')}")
                + "); raise the server's limit or ask for less"
            )
        if isinstance(data, dict) and "boolean" in data:
            return SelectResult(["boolean"], [{"boolean": Term("literal", "true" if data["boolean"] else "false")}])
        try:
            variables = list(data["head"].get("vars", []))
            rows = []
            for i, b in enumerate(data["results"]["bindings"]):
                if i % _CHECK_EVERY == 0 and deadline.passed():
                    raise SparqlTimeout(self._timeout_message(deadline.seconds))
                rows.append({k: Term.from_json(v) for k, v in b.items()})
        except (KeyError, TypeError, AttributeError, ValueError):
            raise SparqlError(f"{self.endpoint} answered JSON that is not SPARQL results") from None
        if deadline.passed():
            raise SparqlTimeout(self._timeout_message(deadline.seconds))
        return SelectResult(variables, rows)

    def _fetch(self, body: bytes, headers: dict[str, str], deadline: Deadline) -> tuple[bytes, dict[str, str]]:
        try:
            reply = request("POST", self._credentials.url, deadline=deadline, max_bytes=self.max_bytes, body=body,
                            headers=headers)
        except DeadlinePassed:
            raise SparqlTimeout(self._timeout_message(deadline.seconds)) from None
        except ReplyTooLarge as exc:
            raise SparqlError(
                f"{self.endpoint} sent more than {self.max_bytes / 2**20:g} MB for one query"
                + ("" if exc.declared is None else f" ({exc.declared / 2**20:.1f} MB declared)")
                + f"; ask for less or raise ${MAX_REPLY_MB_ENV}") from None
        except Unreachable as exc:
            reason = redact(exc.reason, self._credentials.secrets())
            raise SparqlUnreachable(f"cannot reach SPARQL endpoint {self.endpoint}: {reason}") from None
        if 300 <= reply.status < 400:  # a redirect urllib would not follow (a POST answered with 307/308)
            target = safe_url(next((v for k, v in reply.headers.items() if k.lower() == "location"), "") or "?")
            raise SparqlError(f"{self.endpoint} answered with a redirect (HTTP {reply.status}) to {target}; "
                              "give the endpoint's final URL")
        if reply.status >= 400:
            detail = ""
            try:
                lines = reply.body[:2000].decode("utf-8", "replace").strip().splitlines()
                detail = redact(lines[0], self._credentials.secrets())[:300] if lines else ""
            except Exception:  # the body is optional
                pass
            raise SparqlError(
                f"{self.endpoint} answered HTTP {reply.status} {reply.reason}" + (f": {detail}" if detail else "")
            )
        headers_out = dict(reply.headers)
        headers_out["X-Status"] = str(reply.status)
        return reply.body, headers_out

    def _timeout_message(self, limit: float) -> str:
        return f"SPARQL endpoint {self.endpoint} did not answer within {limit:g} s (query timeout)"

    def _count(self, started: float, rows: int, error: bool = False) -> None:
        with self.stats.lock:
            self.stats.queries += 1
            self.stats.seconds += time.perf_counter() - started
            self.stats.rows += rows
            self.stats.errors += int(error)
