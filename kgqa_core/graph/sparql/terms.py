"""RDF terms and how they are written into a SPARQL query, escaped.

No query is built by pasting text: every IRI is checked against the SPARQL
``IRIREF`` grammar and every literal is written with its quotes, backslashes
and control characters escaped (``ECHAR``), so a name like
``x" } DROP ALL #`` stays one string literal and cannot change the query.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote

# SPARQL 1.1 grammar, IRIREF: '<' ([^<>"{}|^`\]-[#x00-#x20])* '>'
_IRI_FORBIDDEN = re.compile(r'[<>"{}|^`\\\x00-\x20]')
_LANG = re.compile(r"^[a-zA-Z]+(-[a-zA-Z0-9]+)*$")
_ECHAR = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}
_ESCAPE = re.compile(r'[\\"\n\r\t\b\f]')


class UnwritableTermError(ValueError):
    """A term that cannot be written into a SPARQL query (an IRI with a space, a bad language tag)."""


def iri(value: str) -> str:
    """``<value>`` for a query; raises `UnwritableTermError` for characters IRIREF forbids."""
    bad = _IRI_FORBIDDEN.search(value)
    if bad or not value:
        raise UnwritableTermError(f"cannot write IRI {value!r} into a SPARQL query (character {bad.group()!r})"
                                  if bad else "cannot write an empty IRI into a SPARQL query")
    return f"<{value}>"


def literal(value: str, lang: str | None = None, datatype: str | None = None) -> str:
    """A string literal with every quote, backslash and control character escaped."""
    body = '"' + _ESCAPE.sub(lambda m: _ECHAR[m.group()], value) + '"'
    if lang:
        if not _LANG.match(lang):
            raise UnwritableTermError(f"bad language tag {lang!r}")
        return f"{body}@{lang}"
    if datatype:
        return f"{body}^^{iri(datatype)}"
    return body


@dataclass(frozen=True, slots=True)
class Term:
    """One RDF term from a result row: an IRI (``uri``), a ``literal`` or a blank node (``bnode``)."""

    kind: str
    value: str
    lang: str | None = None
    datatype: str | None = None

    @classmethod
    def from_json(cls, cell: dict) -> "Term":
        """A cell of SPARQL 1.1 JSON results (``{"type", "value", "xml:lang", "datatype"}``)."""
        kind = cell.get("type", "literal")
        if kind == "typed-literal":  # SPARQL 1.0 JSON, still sent by some servers
            kind = "literal"
        return cls(kind, str(cell.get("value", "")), cell.get("xml:lang"), cell.get("datatype"))

    @classmethod
    def uri(cls, value: str) -> "Term":
        return cls("uri", value)

    @property
    def is_iri(self) -> bool:
        return self.kind == "uri"

    def sparql(self) -> str:
        """This term written into a query (blank nodes cannot be: they are local to one result)."""
        if self.kind == "uri":
            return iri(self.value)
        if self.kind == "literal":
            return literal(self.value, self.lang, self.datatype if not self.lang else None)
        raise UnwritableTermError(f"blank node _:{self.value} cannot be named in a query")

    def local_name(self) -> str:
        """The last segment of an IRI (after ``#``, ``/`` or ``:``), URL-decoded; a literal's text."""
        if self.kind != "uri":
            return self.value
        text = self.value  # the same rule as the N-Triples loader, so names agree with an upload
        for sep in ("#", "/", ":"):
            if sep in text.rstrip(sep):
                text = text.rstrip(sep).rsplit(sep, 1)[1]
                break
        return unquote(text)
