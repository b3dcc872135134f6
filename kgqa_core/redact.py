"""Secrets kept out of what is shown and stored: URL credentials and keys echoed back by a server.

A URL may carry ``user:password@`` (a lab's reverse proxy with basic
auth); the credentials are split off once (`split_credentials`) and sent as
an ``Authorization`` header, and everything that is printed, saved in a
trace or shown in the UI uses the URL with them replaced by ``***``
(`safe_url`).  A server may echo a request's headers in an error body;
`redact` takes the secrets of the request (the API key, the password, their
header forms) and any ``Bearer``/``Basic`` credential out of such text.
"""

from __future__ import annotations

import base64
import re
import urllib.parse
from dataclasses import dataclass
from typing import Iterable

MASK = "***"
_BEARER = re.compile(r"\b(Bearer|bearer|BEARER)(\s+|%20)[A-Za-z0-9._~+/=:%-]{4,}")
_BASIC = re.compile(r"\b(Basic|basic|BASIC)(\s+|%20)([A-Za-z0-9+/]{4,}={0,2})")


@dataclass(frozen=True)
class Credentials:
    """A URL without its ``user:password@`` part, and that part (empty strings when absent)."""

    url: str
    user: str = ""
    password: str = ""

    @property
    def present(self) -> bool:
        return bool(self.user or self.password)

    def basic_header(self) -> dict[str, str]:
        """``Authorization: Basic ...`` for the credentials (empty when there are none)."""
        if not self.present:
            return {}
        token = base64.b64encode(f"{self.user}:{self.password}".encode("utf-8")).decode("ascii")
        return {"Authorization": f"Basic {token}"}

    def secrets(self) -> list[str]:
        """The strings that must never be shown: the password, the user:password pair, its Basic token."""
        if not self.present:
            return []
        pair = f"{self.user}:{self.password}"
        return [s for s in (self.password, pair, base64.b64encode(pair.encode("utf-8")).decode("ascii"),
                            urllib.parse.quote(self.password, safe="")) if s]


def split_credentials(url: str) -> Credentials:
    """`url` without ``user:password@`` (percent-decoded into `Credentials`)."""
    parts = urllib.parse.urlsplit(url)
    if "@" not in parts.netloc:
        return Credentials(url)
    userinfo, _, host = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    bare = urllib.parse.urlunsplit(parts._replace(netloc=host))
    return Credentials(bare, urllib.parse.unquote(user), urllib.parse.unquote(password))


def safe_url(url: str) -> str:
    """`url` with any ``user:password@`` replaced by ``***@`` (the form every message and trace uses)."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return url if "@" not in url else MASK
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rpartition("@")[2]
    return urllib.parse.urlunsplit(parts._replace(netloc=f"{MASK}@{host}"))


_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s/@\"'<>]+@")


def mask_url_credentials(text: str) -> str:
    """Every ``scheme://user:password@`` in free text (a model key, a log line) with the credentials as ``***``."""
    return _URL_USERINFO.sub(lambda m: f"{m.group(1)}{MASK}@", str(text))


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """`text` with each secret (4 characters or more) and any Bearer/Basic credential replaced by ``***``."""
    out = str(text)
    for secret in sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True):
        out = out.replace(secret, MASK)
    out = _BEARER.sub(lambda m: f"{m.group(1)} {MASK}", out)
    return _BASIC.sub(lambda m: f"{m.group(1)} {MASK}" if _is_basic_token(m.group(3)) else m.group(0), out)


def _is_basic_token(text: str) -> bool:
    """Whether `text` is base64 of ``user:password`` (so "Basic usage" stays as written)."""
    try:
        return ":" in base64.b64decode(text + "=" * (-len(text) % 4), validate=True).decode("utf-8")
    except ValueError:
        return False
